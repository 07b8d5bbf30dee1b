package property

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// queueProperties are the laws of the cockpit's queue (DESIGN §12a): its
// urgency order and its cursor pages.
func queueProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P152_queue_pages_visit_every_item_once_in_urgency_order",
			"Following the queue's cursor from its first page, for any page size and any of its orders (urgency, oldest, newest), shows every undecided waiting item exactly once and in one sequence; in the urgency order an attack comes before anything that is not one, then what still fires before what resolved while it waited, then the more severe (unknown counted as critical, then high, medium, low, info), then the newer, the later analysis id breaking ties; the oldest and newest orders go by the time it started waiting, then the id (descending for newest); and an item decided after its page was read is never shown again nor makes a later page skip one.",
			"QueueRunGen", queueRunGen(), checkQueuePages, pbt.Expensive(4),
			pbt.Pin("ties on every key but the id, a page of one", queueRun{PageSize: 1, Count: 4, Items: []queueItem{
				{Severity: 0, Second: 1}, {Severity: 5, Second: 1}, {Severity: 0, Second: 1, Attack: true}, {Severity: 0, Second: 1, Resolved: true},
			}}),
			pbt.Classify(func(r queueRun) []string {
				var labels []string
				if len(r.Items) > r.PageSize {
					labels = append(labels, "several pages")
				} else {
					labels = append(labels, "one page")
				}
				for _, x := range r.Items {
					if x.Resolved && x.Attack {
						labels = append(labels, "a resolved attack")
						break
					}
				}
				return labels
			}),
			pbt.Cover("several pages", 50), pbt.Cover("one page", 5), pbt.Cover("a resolved attack", 10),
		),
	}
}

// queueItem is one analysis that waits: its severity (an index of
// openrecall.Severities), whether its alert is an attack and resolved,
// the second it started waiting at, and whether a person decides it after
// the first page was read.
type queueItem struct {
	Severity, Second           int
	Attack, Resolved, DecideAt bool
}

// queueRun is the items of a queue, the order asked and the page size.
type queueRun struct {
	// Items are the first Count of All.
	All      []queueItem
	Count    int
	Items    []queueItem
	Sort     int
	PageSize int
}

var queueSorts = []string{openrecall.QueueUrgency, openrecall.QueueOldest, openrecall.QueueNewest}

func queueRunGen() gopter.Gen {
	item := gg.Struct(reflect.TypeOf(queueItem{}), map[string]gopter.Gen{
		"Severity": gg.IntRange(0, len(openrecall.Severities)-1),
		"Second":   gg.IntRange(0, 5), // few: ties
		"Attack":   gg.Weighted([]gg.WeightedGen{{Weight: 1, Gen: gg.Const(true)}, {Weight: 3, Gen: gg.Const(false)}}),
		"Resolved": gg.Bool(),
		"DecideAt": gg.Weighted([]gg.WeightedGen{{Weight: 1, Gen: gg.Const(true)}, {Weight: 5, Gen: gg.Const(false)}}),
	})
	return gg.Struct(reflect.TypeOf(queueRun{}), map[string]gopter.Gen{
		"All":      gg.SliceOfN(14, item),
		"Count":    gg.IntRange(0, 14),
		"Sort":     gg.IntRange(0, len(queueSorts)-1),
		"PageSize": gg.IntRange(1, 6),
	}).Map(func(r queueRun) queueRun {
		r.Items = r.All[:min(r.Count, len(r.All))]
		return r
	})
}

// queueIDOf names item i: the names sort as the items do not, so the
// id breaks only the ties it must.
func queueIDOf(i int) string { return fmt.Sprintf("serve-%06d", (i*7919)%100000) }

// queueBefore is the rule the property states, written apart from the
// product's comparison: whether x comes before y in order sort.
func queueBefore(sort string, x, y queueItem, xid, yid string) bool {
	rank := func(q queueItem) int {
		if s := openrecall.Severities[q.Severity]; s == openrecall.SeverityUnknown {
			return 0
		}
		return q.Severity // critical, high, medium, low, info in that order
	}
	switch sort {
	case openrecall.QueueUrgency:
		if x.Attack != y.Attack {
			return x.Attack
		}
		if x.Resolved != y.Resolved {
			return !x.Resolved
		}
		if rank(x) != rank(y) {
			return rank(x) < rank(y)
		}
		fallthrough
	case openrecall.QueueNewest:
		if x.Second != y.Second {
			return x.Second > y.Second
		}
		return xid > yid
	}
	if x.Second != y.Second {
		return x.Second < y.Second
	}
	return xid < yid
}

func checkQueuePages(r queueRun) error {
	st, done, err := scratchStore("queue", memory.Options{Now: fixedNow})
	if err != nil {
		return err
	}
	defer done()
	ctx := context.Background()
	root, err := productRoot(st, nil, fixedNow)
	if err != nil {
		return err
	}
	app := root.UseCases
	ids := make([]string, len(r.Items))
	byID := map[string]int{}
	var firing, recoveries []openrecall.Delivery
	var ws []openrecall.Waiting
	for i, x := range r.Items {
		ids[i] = queueIDOf(i)
		byID[ids[i]] = i
		a := openrecall.Alert{ID: "alert-" + ids[i], Title: "t", Severity: openrecall.Severities[x.Severity], Status: openrecall.StatusFiring}
		firing = append(firing, openrecall.Delivery{Endpoint: "alerts", Alert: a})
		if x.Resolved {
			a.Status = openrecall.StatusResolved
			recoveries = append(recoveries, openrecall.Delivery{Endpoint: "alerts", Alert: a})
		}
		res := &openrecall.Result{AnalysisID: ids[i], Alert: a}
		if x.Attack {
			res.Fingerprint.AttackPattern = "credential_access"
		}
		ws = append(ws, openrecall.Waiting{AnalysisID: ids[i], Batch: "serve", Since: fixedNow().Add(time.Duration(x.Second) * time.Second),
			Reason: openrecall.WaitEscalated, Why: "escalated", Severity: a.Severity, Title: "t", AlertID: a.ID, Result: res})
	}
	// Each firing's delivery is named as its analysis, as serve names
	// them; its recovery after it.
	name := func(n int64) string {
		if n <= int64(len(ids)) {
			return ids[n-1]
		}
		return fmt.Sprintf("recovery-%d", n)
	}
	if len(firing) > 0 {
		if _, err := st.Enqueue(ctx, firing, 0, name); err != nil {
			return fmt.Errorf("setup: %v", err)
		}
	}
	if len(recoveries) > 0 {
		if _, err := st.Enqueue(ctx, recoveries, 0, name); err != nil {
			return fmt.Errorf("setup: %v", err)
		}
	}
	if len(ws) > 0 {
		if err := st.RecordWaiting(ctx, ws); err != nil {
			return fmt.Errorf("setup: %v", err)
		}
	}
	sort := queueSorts[r.Sort]
	var seen []string
	decided := map[string]bool{}
	after := ""
	for page := 0; ; page++ {
		if page > len(r.Items)+1 {
			return fmt.Errorf("more than %d pages for %d items", page, len(r.Items))
		}
		p, err := app.QueuePage(ctx, openrecall.WaitingFilter{Sort: sort, After: after, Limit: r.PageSize})
		if err != nil {
			return fmt.Errorf("page %d: %v", page, err)
		}
		if len(p.Items) > r.PageSize {
			return fmt.Errorf("page %d holds %d items, more than its size %d", page, len(p.Items), r.PageSize)
		}
		for _, w := range p.Items {
			i, ok := byID[w.AnalysisID]
			if !ok || decided[w.AnalysisID] {
				return fmt.Errorf("page %d shows %s, decided or unknown", page, w.AnalysisID)
			}
			if w.Resolved() != r.Items[i].Resolved || (w.Attack != "") != r.Items[i].Attack {
				return fmt.Errorf("%s: resolved %t attack %q, want %t %t", w.AnalysisID, w.Resolved(), w.Attack, r.Items[i].Resolved, r.Items[i].Attack)
			}
			seen = append(seen, w.AnalysisID)
		}
		if page == 0 {
			for i, x := range r.Items {
				if x.DecideAt {
					decided[ids[i]] = true
					if _, err := st.Decide(ctx, openrecall.Waiting{AnalysisID: ids[i], DecidedAt: fixedNow(), DecidedBy: "alice", Decision: openrecall.DecisionKnownBenign}); err != nil {
						return fmt.Errorf("setup: decide: %v", err)
					}
				}
			}
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	// Every item once: those decided after the first page only if that
	// page showed them.
	var want []string
	for i, id := range ids {
		if !r.Items[i].DecideAt || slices.Contains(seen[:min(len(seen), r.PageSize)], id) {
			want = append(want, id)
		}
	}
	slices.SortFunc(want, func(a, b string) int {
		switch {
		case queueBefore(sort, r.Items[byID[a]], r.Items[byID[b]], a, b):
			return -1
		case queueBefore(sort, r.Items[byID[b]], r.Items[byID[a]], b, a):
			return 1
		}
		return 0
	})
	if !slices.Equal(seen, want) {
		return fmt.Errorf("%s pages of %d showed %v, want %v", sort, r.PageSize, seen, want)
	}
	return nil
}
