// Package sendertest holds the sender a team adds in the tests of intake
// and server: built in Go as its mapping file would define it, so a test
// of how a set of senders is used does not depend on the mapping engine.
package sendertest

import (
	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake/sender"
)

// AcmeMonitor is a made-up monitor: recognised by "monitor_id" beside
// "check", its title from "check", its severity from "level" on its own
// scale (page critical, ticket medium), its service from "app", its rule
// from "monitor_id".
func AcmeMonitor() sender.Sender {
	scale := sender.Scale{"page": openrecall.SeverityCritical, "ticket": openrecall.SeverityMedium}
	return sender.Sender{Name: "acme-monitor", Display: "Acme Monitor",
		Severity: scale.Map, Levels: []string{"page", "ticket"},
		Match: func(v sender.Value) bool { return v.Has("monitor_id") && v.Has("check") },
		Map: func(v sender.Value) ([]sender.Event, error) {
			var e sender.Event
			e.Set(sender.PartTitle, v.Get("check").String(), "check")
			e.Set(sender.PartSeverity, v.Get("level").String(), "level")
			e.Set(sender.PartService, v.Get("app").String(), "app")
			e.Set(sender.PartRule, v.Get("monitor_id").String(), "monitor_id")
			return []sender.Event{e}, nil
		}}
}
