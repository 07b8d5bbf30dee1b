package gen

import (
	"fmt"
	"reflect"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
)

// Delivery kinds of a DeliveryStep.
const (
	DeliverFiring = iota
	DeliverAcknowledge
	DeliverResolve
	DeliverRejected
	deliveryKinds
)

// DeliverySeverities are the severities a delivery may carry, least severe
// first; "" is a missing severity, which counts as the most severe.
func DeliverySeverities() []openrecall.Severity {
	return []openrecall.Severity{openrecall.SeverityInfo, openrecall.SeverityLow, openrecall.SeverityMedium,
		openrecall.SeverityHigh, openrecall.SeverityCritical, ""}
}

// DeliveryStep is one notification a receiver gets: which of a few alerts,
// what kind, at which severity.
type DeliveryStep struct {
	Alert    int
	Kind     int
	Severity int
}

// Delivery returns the step as an inbox delivery.
func (s DeliveryStep) Delivery() openrecall.Delivery {
	d := openrecall.Delivery{Endpoint: "alertmanager"}
	if s.Kind == DeliverRejected {
		d.Rejection = "invalid JSON"
		return d
	}
	a := openrecall.Alert{ID: fmt.Sprintf("a-%d", s.Alert), Format: "pagerduty", Severity: DeliverySeverities()[s.Severity], Status: openrecall.StatusFiring}
	if Episodic(s.Alert) {
		a.ID, a.Format = fmt.Sprintf("am-%016x-1796010126", s.Alert), "alertmanager"
	}
	switch s.Kind {
	case DeliverAcknowledge:
		a.Status, a.Annotations = openrecall.StatusResolved, map[string]string{"event_action": "acknowledge"}
	case DeliverResolve:
		a.Status = openrecall.StatusResolved
	}
	d.Alert = a
	return d
}

// Episodic reports whether alert number i of a plan has an id that names its
// firing episode (Alertmanager's): alert 0 has, the others have not.
func Episodic(i int) bool { return i == 0 }

// DeliveryPlan is a sequence of bodies, each of a few deliveries, as
// senders that retry and redeliver produce them.
type DeliveryPlan struct {
	Bodies [][]DeliveryStep
}

// DeliveryPlanGen generates delivery plans over three alerts, heavy in
// repeats.
func DeliveryPlanGen() gopter.Gen {
	step := gg.Struct(reflect.TypeOf(DeliveryStep{}), map[string]gopter.Gen{
		"Alert":    gg.IntRange(0, 2),
		"Kind":     gg.Weighted([]gg.WeightedGen{{Weight: 6, Gen: gg.Const(DeliverFiring)}, {Weight: 2, Gen: gg.Const(DeliverAcknowledge)}, {Weight: 2, Gen: gg.Const(DeliverResolve)}, {Weight: 1, Gen: gg.Const(DeliverRejected)}}),
		"Severity": gg.IntRange(0, len(DeliverySeverities())-1),
	})
	body := gg.SliceOfN(3, step)
	return gg.Struct(reflect.TypeOf(DeliveryPlan{}), map[string]gopter.Gen{
		"Bodies": gg.SliceOf(body),
	})
}

// ValidDeliveryPlan checks a plan's indexes.
func ValidDeliveryPlan(p DeliveryPlan) error {
	for _, b := range p.Bodies {
		for _, s := range b {
			if s.Alert < 0 || s.Kind < 0 || s.Kind >= deliveryKinds || s.Severity < 0 || s.Severity >= len(DeliverySeverities()) {
				return fmt.Errorf("step out of range: %+v", s)
			}
		}
	}
	return nil
}
