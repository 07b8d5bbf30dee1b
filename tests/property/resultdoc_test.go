package property

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/jsonfast"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// resultDocProperties hold the result document encoded once per alert
// (jsonfast.Docs: the sink's rows and analyze's output) to its plain twin.
func resultDocProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P181_result_document_encoded_once_equals_its_plain_twin",
			"A result's document encoded once per alert and reused by every reader of its batch (its waiting or history row and its inbox row: HTML escaped, without or with its audit entries as stored; analyze's --output jsonl and json) is, for every reader, in any order of reading, byte for byte the document encoded for that reader alone (jsonfast.AppendResult of the result with that reader's audit entries, and json.Marshal or an Encoder without HTML escaping): for results with '<', '>', '&', backslashes, quotes, escapes written as text, line separators and invalid UTF-8 in their strings and map keys, a nil, empty or filled audit, optional parts present or not, a value encoding/json refuses, a batch holding an analysis id twice, a result the batch does not hold, and a batch after another.",
			"ResultDocCaseGen", resultDocCaseGen(), checkResultDoc,
			pbt.Classify(classifyResultDoc), pbt.Cover("escaped html", 40), pbt.Cover("audit nil", 20),
			pbt.Cover("audit empty", 10), pbt.Cover("id twice", 15), pbt.Cover("refused", 3)),
	}
}

// docTexts are the strings a generated result holds: HTML specials,
// backslashes and quotes (and escapes written as text, so that a
// substitution that reads them as escapes would show), the audit member
// written as text, line separators, control bytes, invalid UTF-8.
var docTexts = []string{"plain", "", "<", ">", "&", "a<b>&c", "</script><script>x()</script>", `\u003c`, `\\u003c`, `\`, `\\&`,
	`"`, `\"<`, `,"audit":null`, `"audit":null,"cost_nano_usd":1}`, "\u2028<\u2029", "\xff<\xc3", "é&😀", "\x01>\t", "p99 > 2s & rising"}

// resultDocShape is one result of a batch: its analysis id, position and
// alert id drawn from small pools (so that a batch holds an id twice, with
// equal positions and alert ids), its strings (Texts, indexes of
// docTexts, spread over its fields), its audit entries (0 nil, 1 empty,
// else that many less one), its optional parts (Parts, a bit each) and
// Odd: 1 a confidence encoding/json refuses (NaN), 2 an audit entry time
// it refuses (year 10000).
type resultDocShape struct {
	ID, Pos, AlertID int
	Texts            []int
	Audit            int
	Parts            int
	Odd              int
	Decision         int
}

// docRead is one reader of a result: the batch's Result-th result (a
// result outside the batch when the batch has none), given as it is or
// (Copy) as a copy without its audit entries (what a waiting row is
// given), its document written with no audit entries (Audit 0), its own
// (1) or those stored (2: sealed copies), HTML escaped or not.
type docRead struct {
	Result int
	Copy   bool
	Audit  int
	HTML   bool
}

// resultDocCase is a batch, the reads of it, and the batch after it
// (read the same way).
type resultDocCase struct {
	Batch []resultDocShape
	Reads []docRead
	Next  []resultDocShape
}

func resultDocCaseGen() gopter.Gen {
	shape := gg.Struct(reflect.TypeOf(resultDocShape{}), map[string]gopter.Gen{
		"ID":       gen.Index(3, 0),
		"Pos":      gen.Index(2, 0),
		"AlertID":  gen.Index(2, 0),
		"Texts":    gen.SliceUpTo(10, gen.Index(len(docTexts), 0.2), reflect.TypeOf(0)),
		"Audit":    gen.Index(4, 0),
		"Parts":    gen.Index(64, 0.1),
		"Odd":      gg.Weighted([]gg.WeightedGen{{Weight: 18, Gen: gg.Const(0)}, {Weight: 1, Gen: gg.Const(1)}, {Weight: 1, Gen: gg.Const(2)}}),
		"Decision": gen.Index(len(openrecall.Decisions), 0),
	})
	read := gg.Struct(reflect.TypeOf(docRead{}), map[string]gopter.Gen{
		"Result": gen.Index(5, 0),
		"Copy":   gg.Bool(),
		"Audit":  gen.Index(3, 0),
		"HTML":   gg.Bool(),
	})
	return gg.Struct(reflect.TypeOf(resultDocCase{}), map[string]gopter.Gen{
		"Batch": gen.SliceUpTo(5, shape, reflect.TypeOf(resultDocShape{})),
		"Reads": gen.SliceUpTo(12, read, reflect.TypeOf(docRead{})),
		"Next":  gen.SliceUpTo(3, shape, reflect.TypeOf(resultDocShape{})),
	})
}

// result builds the shape's result.
func (s resultDocShape) result() openrecall.Result {
	text := func(i int) string {
		if len(s.Texts) == 0 {
			return ""
		}
		return docTexts[s.Texts[i%len(s.Texts)]]
	}
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	r := openrecall.Result{
		Position:   openrecall.Position{Source: "queue<1>.jsonl", Line: 1 + s.Pos},
		Outcome:    openrecall.ResultTriaged,
		AnalysisID: fmt.Sprintf("run-%06d", s.ID),
		Batch:      "run",
		Mode:       openrecall.Mode{Memory: "sqlite", Model: "deterministic"},
		Alert: openrecall.Alert{ID: fmt.Sprintf("al-%d", s.AlertID), Format: "jsonl", Title: text(0), Text: text(1),
			Labels: map[string]string{"alertname": text(2), text(3): text(4), "audit": text(5)}, Timestamp: at},
		Identity: openrecall.Identity{Rule: text(2), Service: "db"},
		Triage:   openrecall.TriageResult{Decision: openrecall.DecisionEscalated, Confidence: 0.5, EscalationReason: text(6)},
		Guard:    openrecall.GuardVerdict{Reason: text(7)},
		Decision: openrecall.Decisions[s.Decision],
		Steps:    []openrecall.RouteStep{{Step: openrecall.StepIntake, Reason: text(8), Outcome: openrecall.OutcomeOK}},
		Cost:     openrecall.NanoUSD(100 * s.Pos),
		Baseline: 3937500,
		Latency:  time.Duration(s.ID) * time.Millisecond,
	}
	if s.Parts&1 != 0 {
		r.Matches = []openrecall.Match{{Incident: openrecall.Incident{ID: "inc_1", Note: text(9), DeadEnds: []string{text(0)}, CreatedAt: at}, Score: 0.9}}
	}
	if s.Parts&2 != 0 {
		r.Group = &openrecall.GroupRef{ID: "g-1", Role: openrecall.GroupRoleHead, HeadAlertID: text(1), At: at}
	}
	if s.Parts&4 != 0 {
		r.Exception = &openrecall.ExceptionRef{ID: "exc-1", Analyst: text(3), ExpiresAt: at}
	}
	if s.Parts&8 != 0 {
		r.Analysis = &openrecall.Analysis{Decision: openrecall.DecisionReal, Confidence: 0.7, Summary: text(4), NextSteps: []string{text(5)}}
	}
	if s.Parts&16 != 0 {
		r.Proposal = &openrecall.Proposal{ID: "prop-1", Match: map[string]string{text(6): text(7)}, Supporting: []string{}, CreatedAt: at}
	}
	if s.Parts&32 != 0 {
		r.Steps = nil
	}
	if s.Audit > 0 {
		r.Audit = []openrecall.AuditEntry{}
		for i := range s.Audit - 1 {
			r.Audit = append(r.Audit, openrecall.AuditEntry{AnalysisID: r.AnalysisID, Batch: "run", AlertID: r.Alert.ID, StepIndex: i,
				Step: openrecall.StepIntake, Reason: text(i + 2), Outcome: openrecall.OutcomeOK, Time: at})
		}
	}
	switch s.Odd {
	case 1:
		r.Triage.Confidence = math.NaN()
	case 2:
		r.Audit = append(r.Audit, openrecall.AuditEntry{Reason: "late", Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
	}
	return r
}

// sealedCopies are entries as the trail stores them: numbered and
// hashed, their reasons with an HTML special added.
func sealedCopies(es []openrecall.AuditEntry) []openrecall.AuditEntry {
	if es == nil {
		return nil
	}
	out := make([]openrecall.AuditEntry, len(es))
	for i, e := range es {
		e.Sequence, e.PrevHash, e.Hash = int64(100+i), "prev<", fmt.Sprintf("hash-%d&", i)
		e.Reason += " <sealed>"
		out[i] = e
	}
	return out
}

// plainDocument is the reader's document encoded for it alone: by
// jsonfast.AppendResult, which must agree with encoding/json (json.Marshal
// escaped, an Encoder without HTML escaping otherwise).
func plainDocument(r openrecall.Result, html bool) ([]byte, error) {
	doc, err := jsonfast.AppendResult(nil, r, html)
	var std bytes.Buffer
	enc := json.NewEncoder(&std)
	enc.SetEscapeHTML(html)
	stdErr := enc.Encode(r)
	if (err != nil) != (stdErr != nil) {
		return nil, fmt.Errorf("twins disagree: AppendResult's error %v, encoding/json's %v", err, stdErr)
	}
	if err == nil && string(doc) != strings.TrimSuffix(std.String(), "\n") {
		return nil, fmt.Errorf("twins disagree: AppendResult wrote %s, encoding/json %s", doc, std.String())
	}
	if html && err == nil {
		if m, _ := json.Marshal(r); !bytes.Equal(m, doc) {
			return nil, fmt.Errorf("twins disagree: AppendResult wrote %s, json.Marshal %s", doc, m)
		}
	}
	return doc, err
}

func checkResultDoc(c resultDocCase) error {
	var docs jsonfast.Docs
	for bi, shapes := range [][]resultDocShape{c.Batch, c.Next} {
		batch := make([]openrecall.Result, len(shapes))
		for i, s := range shapes {
			batch[i] = s.result()
		}
		docs.Reset(batch)
		for ri, rd := range c.Reads {
			var r openrecall.Result
			if len(batch) == 0 {
				r = resultDocShape{ID: 5, Texts: []int{5}}.result() // a result the batch does not hold
			} else {
				r = batch[rd.Result%len(batch)]
			}
			var audit []openrecall.AuditEntry
			switch rd.Audit {
			case 1:
				audit = r.Audit
			case 2:
				audit = sealedCopies(r.Audit)
			}
			given := r
			if rd.Copy {
				given.Audit = nil
			}
			twin := r
			twin.Audit = audit
			want, wantErr := plainDocument(twin, rd.HTML)
			if wantErr != nil && strings.HasPrefix(wantErr.Error(), "twins disagree") {
				return wantErr
			}
			got, err := docs.Append([]byte("row:"), &given, audit, rd.HTML)
			if (err != nil) != (wantErr != nil) {
				return fmt.Errorf("error differs: batch %d read %d (%+v): the shared document's error %v, the plain one's %v", bi, ri, rd, err, wantErr)
			}
			if wantErr == nil && string(got) != "row:"+string(want) {
				return fmt.Errorf("document differs: batch %d read %d (%+v):\nshared %s\n plain row:%s", bi, ri, rd, got, want)
			}
		}
	}
	return nil
}

// classifyResultDoc labels a case by what it exercises.
func classifyResultDoc(c resultDocCase) []string {
	var out []string
	seen := map[string]bool{}
	add := func(l string) {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	ids := map[int]int{}
	for _, s := range c.Batch {
		ids[s.ID]++
		if ids[s.ID] == 2 {
			add("id twice")
		}
		switch {
		case s.Odd != 0:
			add("refused")
		case s.Audit == 0:
			add("audit nil")
		case s.Audit == 1:
			add("audit empty")
		}
		if len(c.Reads) > 0 && slicesAnyHTML(s.Texts) && anyEscapedRead(c.Reads) {
			add("escaped html")
		}
	}
	return out
}

func slicesAnyHTML(texts []int) bool {
	for _, t := range texts {
		if strings.ContainsAny(docTexts[t], "<>&") {
			return true
		}
	}
	return false
}

func anyEscapedRead(rs []docRead) bool {
	for _, r := range rs {
		if r.HTML {
			return true
		}
	}
	return false
}
