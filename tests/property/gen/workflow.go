package gen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"github.com/openrecall/openrecall"
)

// RecordKinds are the kinds of queue line WorkflowInputGen writes, alerts
// first (and most often).
func RecordKinds() []string {
	return []string{"alert", "alert", "alert", "webhook with two alerts", "resolved webhook", "invalid JSON", "empty object", "bare string", "re-sent alert", "mixed-status webhook"}
}

// QueueRecord is one line of a generated queue.
type QueueRecord struct {
	Kind  int
	Alert RawAlert
}

// SeedSpec retains N analyst decisions for the family's fingerprint before
// the run: N−Dissent carry MemoryDecisions[Decision], Dissent carry real.
type SeedSpec struct {
	Family   int
	N        int
	Decision int
	Dissent  int
	Noise    Noise
}

// WorkflowInput is a whole run: memory seeds, a JSON Lines queue with good
// and bad records, an optional run budget and a worker count.
type WorkflowInput struct {
	// Vouch, when positive, seeds six unanimous known_benign memories for
	// family Vouch−1 before Seeds, so that memory can vouch for it.
	Vouch   int
	Seeds   []SeedSpec
	Records []QueueRecord
	// Attacked, when positive, seeds six unanimous known_benign memories for
	// the attack family AttackFamilies()[Attacked−1] and ends the queue with
	// one of its alerts: memory vouches, the attack must still go to the
	// strong model.
	Attacked int
	// Confirmed, when positive, seeds three unanimous false_positive
	// memories for family ConfirmFamilies()[Confirmed−1] and ends the queue
	// with one of its alerts: too few to bypass, the cheap model confirms.
	Confirmed int
	// Budget is the run budget in nano-dollars, 0 for none.
	Budget  openrecall.NanoUSD
	Workers int
}

// Budgets are run budgets drawn often: none, one nano-dollar, and amounts
// around the price of a strong call (5 milli-dollars runs out after one or
// two calls, mid-queue).
func Budgets() []openrecall.NanoUSD {
	return []openrecall.NanoUSD{0, 1, 1_000_000, 5_000_000, 10_000_000, 30_000_000, 100_000_000}
}

// AttackFamilies are the indexes of the families with security signals.
func AttackFamilies() []int { return familiesWhere(func(f Family) bool { return f.Attack }) }

// ConfirmFamilies are the indexes of the classified, non-attack families
// whose labels carry their service and environment (so a webhook entry
// gets the same fingerprint as a JSON line).
func ConfirmFamilies() []int {
	return familiesWhere(func(f Family) bool {
		return !f.Attack && !f.Anonymous && len(f.Labels) > 0 && f.Service == "" && f.Environment == ""
	})
}

func familiesWhere(keep func(Family) bool) []int {
	var out []int
	for i, f := range AlertFamilies() {
		if keep(f) {
			out = append(out, i)
		}
	}
	return out
}

// AllSeeds returns the seeds the run retains, the vouched family first,
// then Seeds, then the attacked and the confirmed family's.
func (in WorkflowInput) AllSeeds() []SeedSpec {
	var out []SeedSpec
	if in.Vouch > 0 {
		out = append(out, SeedSpec{Family: in.Vouch - 1, N: 6, Decision: 2})
	}
	out = append(out, in.Seeds...)
	if in.Attacked > 0 {
		out = append(out, SeedSpec{Family: AttackFamilies()[(in.Attacked-1)%len(AttackFamilies())], N: 6, Decision: 2})
	}
	if in.Confirmed > 0 {
		out = append(out, SeedSpec{Family: ConfirmFamilies()[(in.Confirmed-1)%len(ConfirmFamilies())], N: 3, Decision: 0})
	}
	return out
}

// AllRecords returns the queue's records: Records, then an alert of the
// attacked family and one of the confirmed family.
func (in WorkflowInput) AllRecords() []QueueRecord {
	out := append([]QueueRecord(nil), in.Records...)
	if in.Attacked > 0 {
		out = append(out, QueueRecord{Alert: RawAlert{Family: AttackFamilies()[(in.Attacked-1)%len(AttackFamilies())]}})
	}
	if in.Confirmed > 0 {
		out = append(out, QueueRecord{Alert: RawAlert{Family: ConfirmFamilies()[(in.Confirmed-1)%len(ConfirmFamilies())]}})
	}
	return out
}

// Queue renders the records as a JSON Lines queue.
func (in WorkflowInput) Queue() string {
	var b strings.Builder
	for i, r := range in.AllRecords() {
		b.WriteString(r.Line(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// Line renders the record at position i.
func (r QueueRecord) Line(i int) string {
	id := fmt.Sprintf("q-%03d", i)
	switch RecordKinds()[r.Kind%len(RecordKinds())] {
	case "webhook with two alerts":
		return webhook("firing", nil, r.Alert.First(), r.Alert.Second())
	case "resolved webhook":
		return webhook("resolved", nil, r.Alert.First())
	case "mixed-status webhook":
		// The group still fires; its second alert has resolved.
		return webhook("firing", []string{"firing", "resolved"}, r.Alert.First(), r.Alert.Second())
	case "invalid JSON":
		return `{"title": "payment-service latency", "severity": "high"`
	case "empty object":
		return `{}`
	case "bare string":
		return `"disk full on logs-storage-2 in staging"`
	case "re-sent alert":
		return JSONLine(r.Alert.First(), "q-resent")
	}
	return JSONLine(r.Alert.First(), id)
}

// webhook renders an Alertmanager webhook whose group has status and whose
// alerts have statuses (the group's when nil).
func webhook(status string, statuses []string, alerts ...openrecall.Alert) string {
	var items []map[string]any
	for i, a := range alerts {
		st := status
		if i < len(statuses) {
			st = statuses[i]
		}
		item := map[string]any{
			"status": st, "labels": a.Labels,
			"annotations": map[string]string{"summary": a.Title, "description": a.Text},
			"startsAt":    "2026-11-29T21:10:00Z", "endsAt": "0001-01-01T00:00:00Z",
			"fingerprint": fmt.Sprintf("%016x", i+1),
		}
		if len(a.Annotations) > 0 {
			ann := item["annotations"].(map[string]string)
			for k, v := range a.Annotations {
				if k == "description" {
					v = a.Text + " " + v
				}
				ann[k] = v
			}
		}
		if st == "resolved" {
			item["endsAt"] = "2026-11-29T21:20:00Z"
		}
		if item["labels"] == nil {
			item["labels"] = map[string]string{"alertname": "Generic"}
		}
		items = append(items, item)
	}
	b, err := json.Marshal(items)
	if err != nil {
		panic(fmt.Sprintf("gen: marshal webhook: %v", err))
	}
	// Alertmanager's field order: the group's status comes before its
	// alerts, so a streaming reader knows it when it reads them.
	return fmt.Sprintf(`{"version":"4","groupKey":"{}","status":%q,"receiver":"openrecall","alerts":%s}`, status, b)
}

// Incidents returns the memories the seed retains for the alert of
// identity id, fingerprint fp and severity sev (the seed alert's, as an
// analyst retains a decision about that alert).
func (s SeedSpec) Incidents(k int, id openrecall.Identity, fp openrecall.Fingerprint, sev openrecall.Severity) []openrecall.Incident {
	var out []openrecall.Incident
	d := openrecall.MemoryDecisions[s.Decision%len(openrecall.MemoryDecisions)]
	for i := 0; i < s.N; i++ {
		di := d
		if i < s.Dissent {
			di = openrecall.DecisionReal
		}
		out = append(out, openrecall.Incident{
			Fingerprint: fp, Identity: id, Severity: sev, Decision: di, Note: fmt.Sprintf("seed %d decision %d", k, i),
			SourceAlertID: fmt.Sprintf("seed-%d-%d", k, i), Analyst: "pbt", CreatedAt: Times()[i%len(Times())],
		})
	}
	return out
}

// SeedAlert is the alert whose fingerprint the seed's memories carry.
func (s SeedSpec) SeedAlert() openrecall.Alert {
	return RawAlert{Family: s.Family}.Alert(s.Noise, false)
}

// WorkflowInputGen generates whole runs: a family memory vouches for (most
// often the first, which records favour too), up to 4 more seeded families (mostly
// unanimous benign, enough to bypass, sometimes too few or split), up to 12
// queue lines of every kind (alerts of 11 families, the first, which seeds
// favour too, most often; webhooks, resolved
// notices, invalid JSON, empty objects, bare strings, re-sent alerts), a run
// budget from none to generous, and 2 to 8 workers.
func WorkflowInputGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(WorkflowInput{}), map[string]gopter.Gen{
		"Vouch": Of([]int{1, 0, 2, 3, 5}, 0.5),
		"Seeds": SliceUpTo(4, gg.Struct(reflect.TypeOf(SeedSpec{}), map[string]gopter.Gen{
			"Family":   Index(len(AlertFamilies()), 0.5),
			"N":        Of([]int{6, 0, 1, 4, 5, 10, 12}, 0.5),
			"Decision": Of([]int{2, 0, 1, 3}, 0.6),
			"Dissent":  Of([]int{0, 1, 3}, 0.7),
			"Noise":    noiseGen(),
		}), reflect.TypeOf(SeedSpec{})),
		"Records": SliceUpTo(12, gg.Struct(reflect.TypeOf(QueueRecord{}), map[string]gopter.Gen{
			"Kind": Index(len(RecordKinds()), 0.3),
			"Alert": gg.Struct(reflect.TypeOf(RawAlert{}), map[string]gopter.Gen{
				"Family": Index(len(AlertFamilies()), 0.5),
				"A":      noiseGen(),
				"B":      noiseGen(),
			}),
		}), reflect.TypeOf(QueueRecord{})),
		"Attacked":  Index(len(AttackFamilies())+1, 0.6),
		"Confirmed": Index(len(ConfirmFamilies())+1, 0.6),
		"Budget":    Of(Budgets(), 0.5),
		"Workers":   Of([]int{4, 2, 3, 8}, 0.25),
	})
}
