package property

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// inboxProperties are the rules of the server's durable inbox.
func inboxProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P34_redelivery_triaged_once",
			"A redelivered notification (same alert id) is not queued again, but a re-trigger whose severity rose, a firing after a resolve (a new episode, unless the id names its episode as Alertmanager's does), and each change of state (acknowledged, resolved) are; a rejected record is always queued. Every queued delivery gets a new analysis id, and a redelivery is answered with the id of the analysis that handled it; what was queued survives reopening the database.",
			"DeliveryPlanGen", gen.DeliveryPlanGen(), checkRedelivery,
			pbt.Expensive(3),
			pbt.Found("an alert first seen acknowledged, then firing, was taken for a redelivery and never triaged (fixed: only a triaged firing makes a repeat)",
				gen.DeliveryPlan{Bodies: [][]gen.DeliveryStep{{{Alert: 0, Kind: gen.DeliverAcknowledge, Severity: 1}, {Alert: 0, Kind: gen.DeliverRejected, Severity: 0}, {Alert: 0, Kind: gen.DeliverFiring, Severity: 1}}}}),
			pbt.PinFunc("severity rises from warning-like medium to critical, then repeats", func() error {
				return checkRedelivery(gen.DeliveryPlan{Bodies: [][]gen.DeliveryStep{
					{{Alert: 0, Kind: gen.DeliverFiring, Severity: 2}},
					{{Alert: 0, Kind: gen.DeliverFiring, Severity: 2}, {Alert: 0, Kind: gen.DeliverFiring, Severity: 4}},
					{{Alert: 0, Kind: gen.DeliverFiring, Severity: 4}, {Alert: 0, Kind: gen.DeliverResolve, Severity: 4}},
					{{Alert: 0, Kind: gen.DeliverResolve, Severity: 4}, {Alert: 0, Kind: gen.DeliverFiring, Severity: 0}},
				}})
			}),
		),
	}
}

// severityOrder ranks a step's severity for the model: a missing severity
// counts as the most severe, as the guard counts unknown.
func severityOrder(i int) int {
	if gen.DeliverySeverities()[i] == "" {
		return len(gen.DeliverySeverities()) - 2
	}
	return i
}

// inboxModel is the oracle: per alert, its state and the severity of the
// firing last queued.
type inboxModel struct {
	status   map[int]string
	severity map[int]int
	triage   map[int]string // analysis id of the current firing's triage
	last     map[int]string // analysis id of the last queued notice
}

// expect says whether the model queues step, and updates it.
func (m *inboxModel) expect(s gen.DeliveryStep) (queued bool, state string) {
	if s.Kind == gen.DeliverRejected {
		return true, ""
	}
	st, seen := m.status[s.Alert]
	switch s.Kind {
	case gen.DeliverFiring:
		// Queued unless a triage of this firing exists at a severity at
		// least as high since the last resolve; for an id that names its
		// episode, a resolve does not open a new one.
		queued = m.triage[s.Alert] == "" || st == openrecall.AlertResolved && !gen.Episodic(s.Alert) || severityOrder(s.Severity) > m.severity[s.Alert]
		if queued {
			m.status[s.Alert], m.severity[s.Alert] = openrecall.AlertFiring, severityOrder(s.Severity)
		}
	case gen.DeliverAcknowledge:
		queued = !seen || st == openrecall.AlertFiring
		if queued {
			m.status[s.Alert] = openrecall.AlertAcknowledged
		}
	case gen.DeliverResolve:
		queued = st != openrecall.AlertResolved
		if queued {
			m.status[s.Alert] = openrecall.AlertResolved
		}
	}
	return queued, m.status[s.Alert]
}

func checkRedelivery(p gen.DeliveryPlan) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "openrecall-pbt-inbox-")
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path, drop, err := storeLocation(dir)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer drop()
	st, err := memory.Open(ctx, path, memory.Options{Now: fixedNow})
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = st.Close() }()
	name := func(id int64) string { return fmt.Sprintf("serve-%06d", id) }
	m := inboxModel{status: map[int]string{}, severity: map[int]int{}, triage: map[int]string{}, last: map[int]string{}}
	seen := map[string]bool{}
	queued := 0
	for bi, body := range p.Bodies {
		ds := make([]openrecall.Delivery, len(body))
		for i, s := range body {
			ds[i] = s.Delivery()
		}
		out, err := st.Enqueue(ctx, ds, 0, name)
		if err != nil {
			return fmt.Errorf("body %d: enqueue: %v", bi, err)
		}
		for i, s := range body {
			d := out[i]
			want, state := m.expect(s)
			where := fmt.Sprintf("body %d, delivery %d (%+v)", bi, i, s)
			if d.Duplicate == want {
				return fmt.Errorf("%s: duplicate=%v, want queued=%v", where, d.Duplicate, want)
			}
			if d.State != state {
				return fmt.Errorf("%s: state %q, want %q", where, d.State, state)
			}
			if want {
				if seen[d.AnalysisID] || d.AnalysisID != name(d.ID) {
					return fmt.Errorf("%s: analysis id %q reused or not named from inbox id %d", where, d.AnalysisID, d.ID)
				}
				seen[d.AnalysisID] = true
				queued++
				if s.Kind != gen.DeliverRejected {
					m.last[s.Alert] = d.AnalysisID
					if s.Kind == gen.DeliverFiring {
						m.triage[s.Alert] = d.AnalysisID
					}
				}
				continue
			}
			wantID := m.last[s.Alert]
			if s.Kind == gen.DeliverFiring {
				wantID = m.triage[s.Alert]
			}
			if d.AnalysisID != wantID {
				return fmt.Errorf("%s: redelivery answered with analysis %q, want %q", where, d.AnalysisID, wantID)
			}
		}
	}
	if err := st.Close(); err != nil {
		return fmt.Errorf("close: %v", err)
	}
	if st, err = memory.Open(ctx, path, memory.Options{Now: fixedNow}); err != nil {
		return fmt.Errorf("reopen: %v", err)
	}
	pending, err := st.Pending(ctx, 0, queued+1)
	if err != nil {
		return fmt.Errorf("pending after reopen: %v", err)
	}
	if len(pending) != queued {
		return fmt.Errorf("after reopening, %d deliveries pending, want the %d queued", len(pending), queued)
	}
	for _, d := range pending {
		if !seen[d.AnalysisID] {
			return fmt.Errorf("pending delivery %q was never answered as queued", d.AnalysisID)
		}
	}
	if _, err := st.Served(ctx, "serve-999999"); !errors.Is(err, openrecall.ErrNotFound) {
		return fmt.Errorf("unknown analysis: %v, want ErrNotFound", err)
	}
	return nil
}
