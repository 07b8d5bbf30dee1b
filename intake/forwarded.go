package intake

import (
	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake/sender"
)

// forwarded completes a finished webhook alert that a security sender's
// own Alertmanager output posted (sender.Forwarded: falcosidekick's), so
// that the event reads as it does through the sender's own webhook: its
// entity fields (exceptions match on them, DESIGN §6b), its service when no
// label names one, its environment when no label gave one, and its severity
// by the sender's own scale from the sender's own level (falcosidekick's
// priority label: its severity label is falcosidekick's coarser map, where
// Error and Warning are both "warning"). The alert is a security detection.
func forwarded(a *openrecall.Alert) {
	s, e, ok := sender.Forwarded(a.Labels)
	if !ok {
		return
	}
	a.Security = a.Security || s.Security
	if ents := cleanMap(e.Entities); len(ents) > 0 {
		a.Entities = ents
	}
	if a.Service == "" {
		a.Service = cleanLine(e.Service)
	}
	if a.Environment == "" {
		a.Environment = NormalizeEnvironment(e.Environment)
	}
	if s.Severity != nil {
		if sev := s.Severity(e.Severity); sev != openrecall.SeverityUnknown {
			a.Severity = sev
		}
	}
}
