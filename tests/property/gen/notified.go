package gen

import (
	"reflect"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// NotifiedEvent is one delivery of a generated notification run: alert
// Alert (a0–a2) fires (Status 0) with the labels of Labels, is
// acknowledged (1) or recovers (2). Episodic says its id names its firing
// episode (an Alertmanager alert): then a firing after its recovery is the
// same episode, else a new one.
type NotifiedEvent struct {
	Alert, Status int
	Labels        [4]int
}

// NotifiedRun is a route tree and the deliveries of three alerts, a0
// episodic when Episodic is set.
type NotifiedRun struct {
	Routes   []RouteNode
	Episodic bool
	Events   []NotifiedEvent
}

// NotifiedRunGen generates route trees (RouteCaseGen's) and up to 24
// deliveries of three alerts, firings twice as likely as each other
// status.
func NotifiedRunGen() gopter.Gen {
	event := gg.Struct(reflect.TypeOf(NotifiedEvent{}), map[string]gopter.Gen{
		"Alert":  gg.IntRange(0, 2),
		"Status": gg.Frequency(map[int]gopter.Gen{2: gg.Const(0), 1: gg.IntRange(1, 2)}),
		"Labels": gg.ArrayOfN(4, gg.IntRange(0, 3), reflect.TypeOf(0)),
	})
	return gg.Struct(reflect.TypeOf(NotifiedRun{}), map[string]gopter.Gen{
		"Routes":   SliceUpTo(3, routeNodeGen(2), reflect.TypeOf(RouteNode{})),
		"Episodic": gg.Bool(),
		"Events":   SliceUpTo(24, event, reflect.TypeOf(NotifiedEvent{})),
	})
}
