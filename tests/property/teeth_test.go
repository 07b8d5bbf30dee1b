package property

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/model/openai"
	"github.com/openrecall/openrecall/model/openai/fake"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/triage"
)

// teethProperties are the rules issue 26 found the suite could not see
// break: identity labels, text titles, comments and episode ids, memory
// expiry, the recall cache's own writes, the dedupe key, the cheap tier's
// worst case, the running mean of strong completions, the live provider's
// retry rules, secret label names and the audit hash of every field.
func teethProperties() []pbt.Property {
	ex := newExtractor()
	return []pbt.Property{
		pbt.ForAll("P60_identity_labels_name_workload_and_target",
			"Identity labels of the rules file (DESIGN §4): two pods of one workload (KubePodCrashLooping and the other kubernetes_workload rules) share the identity rule @ kube-state-metrics/<namespace>/<owner>, whatever their generated hash and pod suffixes (letters only, or with digits), and so do two runs of one CronJob (its name without the run's eight digits); a node alert's identity names its node, kept as it is; two probes of one blackbox rule (matched by the identity rule's regex) have the identity rule @ blackbox/<target>, the target kept as it is from the first present of target, probe_target, instance, so two targets are two alerts and one target is one.",
			"IdentityLabelCaseGen", gen.IdentityLabelCaseGen(), func(c gen.IdentityLabelCase) error {
				a, b := ex.Identify(c.Alert(false)), ex.Identify(c.Alert(true))
				switch gen.IdentityLabelKinds()[c.Kind] {
				case "cronjob run":
					want := openrecall.Identity{Rule: "KubeJobFailed", Service: "kube-state-metrics/" + gen.Namespaces()[c.Namespace] + "/" + gen.CronJobs()[c.Owner%len(gen.CronJobs())]}
					if a != want || b != want {
						return fmt.Errorf("cronjob: runs %q and %q give identities %q and %q, want %q for both", c.Alert(false).Labels["job_name"], c.Alert(true).Labels["job_name"], a, b, want)
					}
					return nil
				case "node":
					wantA := openrecall.Identity{Rule: "KubeNodeNotReady", Service: "kube-state-metrics/" + c.Node(false)}
					wantB := openrecall.Identity{Rule: "KubeNodeNotReady", Service: "kube-state-metrics/" + c.Node(true)}
					if a != wantA || b != wantB {
						return fmt.Errorf("node: nodes %q and %q give identities %q and %q, want %q and %q", c.Node(false), c.Node(true), a, b, wantA, wantB)
					}
					return nil
				}
				if gen.IdentityLabelKinds()[c.Kind] == "pod" {
					rule := gen.WorkloadRules()[c.Rule%len(gen.WorkloadRules())]
					want := openrecall.Identity{Rule: rule, Service: "kube-state-metrics/" + gen.Namespaces()[c.Namespace] + "/" + gen.WorkloadOwners()[c.Owner]}
					if a != want || b != want {
						return fmt.Errorf("workload: pods %s and %s give identities %q and %q, want %q for both", c.Pod(false), c.Pod(true), a, b, want)
					}
					return nil
				}
				rule := gen.ProbeRules()[c.Rule%len(gen.ProbeRules())]
				wantA := openrecall.Identity{Rule: rule, Service: "blackbox/" + c.Target(false)}
				wantB := openrecall.Identity{Rule: rule, Service: "blackbox/" + c.Target(true)}
				if a != wantA || b != wantB {
					return fmt.Errorf("probe: targets %q and %q (label %s) give identities %q and %q, want %q and %q",
						c.Target(false), c.Target(true), gen.TargetLabels()[c.Label], a, b, wantA, wantB)
				}
				return nil
			},
			pbt.Pin("a pod hash without a digit", gen.IdentityLabelCase{Letters: true, HashA: 1, HashB: 2}),
			pbt.Pin("two probe targets", gen.IdentityLabelCase{Kind: 1, TargetB: 1}),
			pbt.Classify(func(c gen.IdentityLabelCase) []string {
				switch kind := gen.IdentityLabelKinds()[c.Kind]; {
				case kind == "probe" && c.TargetB != 0:
					return []string{"two probe targets"}
				case kind == "probe":
					return []string{"one probe target"}
				case kind != "pod":
					return []string{kind}
				case !c.PodHashHasDigit():
					return []string{"pod hashes without a digit"}
				}
				return []string{"pod hashes with a digit"}
			}),
			pbt.Cover("two probe targets", 10), pbt.Cover("one probe target", 3), pbt.Cover("pod hashes without a digit", 7),
			pbt.Cover("cronjob run", 10), pbt.Cover("node", 10),
		),
		pbt.ForAll("P61_text_alert_title_is_first_line",
			"A free-text alert's title is its first line (DESIGN §3): a JSON string of several lines, or the product's object with a text and no title, reads as one alert whose title is the first non-blank line, trimmed, and never holds a later line.",
			"TextAlertCaseGen", gen.TextAlertCaseGen(), func(c gen.TextAlertCase) error {
				line, _ := json.Marshal(c.Text())
				if c.Object {
					line, _ = json.Marshal(map[string]string{"text": c.Text(), "severity": "high"})
				}
				recs, err := intake.ParseBytes(append(line, '\n'), intake.Options{})
				if err != nil || len(recs) != 1 || recs[0].Err != nil {
					return fmt.Errorf("read: %s gave %d records (%v): %s", line, len(recs), err, recordsText(recs))
				}
				if got, want := recs[0].Alert.Title, c.LineText(0); got != want {
					return fmt.Errorf("title: %s read with title %q, want its first line %q", line, got, want)
				}
				return nil
			},
			pbt.Pin("two lines as a JSON string", gen.TextAlertCase{}),
			pbt.Classify(func(c gen.TextAlertCase) []string {
				if c.Object {
					return []string{"an object's text"}
				}
				return []string{"a JSON string"}
			}),
			pbt.Cover("a JSON string", 40), pbt.Cover("an object's text", 15),
		),
		pbt.ForAll("P62_comment_lines_anywhere",
			"A line whose first non-blank character is '#' is a comment wherever it stands in a queue (DESIGN §3): before, between and after records of any format, and whatever follows the '#' (JSON, a text alert); a queue with comment lines reads as exactly the records of the queue without them.",
			"CommentQueueCaseGen", gen.CommentQueueCaseGen(), func(c gen.CommentQueueCase) error {
				with, without := c.Queue()
				got, err := intake.ParseBytes([]byte(with), intake.Options{})
				if err != nil {
					return fmt.Errorf("read: %v", err)
				}
				want, err := intake.ParseBytes([]byte(without), intake.Options{})
				if err != nil {
					return fmt.Errorf("read: %v", err)
				}
				if len(got) != len(want) {
					return fmt.Errorf("comment: %d records with comments, %d without: %s\nqueue:\n%s", len(got), len(want), recordsText(got), with)
				}
				for i := range got {
					g, w := got[i].Alert, want[i].Alert
					if got[i].Err != nil || g.Title != w.Title || g.Text != w.Text || g.Severity != w.Severity || !reflect.DeepEqual(g.Labels, w.Labels) {
						return fmt.Errorf("comment: record %d reads %s with comments, %s without\nqueue:\n%s", i, recordsText(got[i:i+1]), recordsText(want[i:i+1]), with)
					}
				}
				return nil
			},
			pbt.Pin("a comment between two records", gen.CommentQueueCase{More: 1, Comments: 2}),
			pbt.Classify(func(c gen.CommentQueueCase) []string {
				if c.CommentAfterFirst() {
					return []string{"a comment after the first record"}
				}
				return nil
			}),
			pbt.Cover("a comment after the first record", 50),
		),
		pbt.ForAll("P63_alertmanager_id_is_fingerprint_and_start",
			"An Alertmanager alert's id is its fingerprint and its startsAt (DESIGN §3): two webhook items get one id if and only if they are of one series (one label set, whether or not a fingerprint is sent: openrecall hashes the labels itself, P122) and one start; a new firing of the same series is a new alert, and a resolved notice shares its firing's id.",
			"EpisodeCaseGen", gen.EpisodeCaseGen(), func(c gen.EpisodeCase) error {
				var ids [2]string
				for i := range ids {
					recs, err := intake.ParseBytes([]byte(c.Webhook(i == 1)+"\n"), intake.Options{})
					if err != nil || len(recs) != 1 || recs[0].Err != nil {
						return fmt.Errorf("read: webhook %d gave %d records (%v): %s", i+1, len(recs), err, recordsText(recs))
					}
					ids[i] = recs[0].Alert.ID
				}
				same := c.Same && c.EpisodeStart(false).Equal(c.EpisodeStart(true))
				if (ids[0] == ids[1]) != same {
					return fmt.Errorf("episode: ids %q and %q for series same=%v started %s and %s (resolved %v): want equal ids %v",
						ids[0], ids[1], c.Same, c.EpisodeStart(false).Format(time.RFC3339), c.EpisodeStart(true).Format(time.RFC3339), c.Resolved, same)
				}
				return nil
			},
			pbt.Pin("a new firing of one series", gen.EpisodeCase{Same: true, StartB: 3}),
			pbt.Classify(func(c gen.EpisodeCase) []string {
				switch {
				case c.Same && c.StartA != c.StartB:
					return []string{"a new firing of one series"}
				case c.Same:
					return []string{"one episode"}
				}
				return []string{"two series"}
			}),
			pbt.Cover("a new firing of one series", 20), pbt.Cover("one episode", 10), pbt.Cover("two series", 10),
		),
		pbt.ForAll("P64_expired_memory_never_votes",
			"An expired memory never votes (DESIGN §5): memories of the alert's identity and DNA, each created before its expiry, recalled at a time after some expiries (or exactly at one) and before others, come back as strong matches (score 1) exactly when they have no expiry or it is after the recall time; every other is related, scored at most 0.80.",
			"ExpiryCaseGen", gen.ExpiryCaseGen(), checkExpiry,
			pbt.Expensive(3),
			pbt.Pin("created before its expiry, recalled after it", gen.ExpiryCase{Expiry: []int{1}}),
			pbt.Classify(func(c gen.ExpiryCase) []string {
				for i := range c.Expiry {
					if off := expiryOffset(c, i); off != 0 && off <= 0 {
						return []string{"an expired memory"}
					}
				}
				return nil
			}),
			pbt.Cover("an expired memory", 40),
		),
		pbt.ForAll("P65_recall_cache_sees_own_writes",
			"The recall cache sees every write of its own store (DESIGN §5): after a warm recall, a retain, a forget, a superseding retain or an import through the same store, the same recall through the cache equals the recall of a store without a cache on the same file.",
			"CacheWriteCaseGen", gen.CacheWriteCaseGen(), checkCacheWrite,
			pbt.Expensive(3),
			pbt.Pin("a supersede", gen.CacheWriteCase{Write: 2}),
			pbt.Classify(func(c gen.CacheWriteCase) []string { return []string{gen.CacheWrites()[c.Write]} }),
			pbt.Cover("retain", 10), pbt.Cover("forget", 10), pbt.Cover("supersede", 10), pbt.Cover("import", 10),
		),
		pbt.ForAll("P66_dedupe_key_every_component",
			"Every component of the dedupe key matters (DESIGN §5): a memory and its twin that differs in one fingerprint field, the decision (real after known_benign on the same alert and note), the note's content or the source alert's id, or only in where the note ends and the id begins, have two dedupe keys, and retaining both leaves two records, the second reported created.",
			"DedupeCaseGen", gen.DedupeCaseGen(), checkDedupeComponents,
			pbt.Expensive(3),
			pbt.Pin("real after known_benign", gen.DedupeCase{Decision: 2, Component: 6}),
			pbt.Classify(func(c gen.DedupeCase) []string { return []string{gen.DedupeComponents()[c.Component]} }),
			pbt.Cover("decision", 5), pbt.Cover("note", 5), pbt.Cover("source alert id", 5), pbt.Cover("note and id boundary", 5),
		),
		pbt.ForAll("P67_cheap_tier_only_when_worst_case_fits",
			"The cheap tier is tried only when its worst case fits under the baseline (DESIGN §7): for consistent benign memory the guard did not bypass, under any price table (written here in whole nano-dollars per token) and expected strong completion, the cheap model answers if and only if prompt·cheap input + 400·cheap output ≤ prompt·strong input + expected·strong output, and the alert's cost never passes its baseline.",
			"PriceCaseGen", gen.PriceCaseGen(), checkCheapWorstCase,
			pbt.Pin("the expected completion fits, the worst case does not", gen.PriceCase{StrongIn: 0, StrongOut: 1, OutShift: 2, Expected: 2}),
			pbt.Classify(func(c gen.PriceCase) []string {
				ci, co, si, so, e := c.Table()
				if ci == si && co*int64(e) <= so*int64(e) && 400*co > so*int64(e) {
					return []string{"only the worst case passes the baseline"}
				}
				return nil
			}),
			pbt.Cover("only the worst case passes the baseline", 10),
		),
		pbt.ForAll("P68_expected_completion_is_strong_completion_mean",
			"The baseline's running mean is of strong completions (DESIGN §7): after the steps of one or two runs are recorded, a memory's strong completions of a model (its dated snapshots included, a model that only shares its prefix not) count exactly the strong analysis calls that were made and reported a completion, and their completion tokens — never prompt tokens, cheap calls, skipped calls or other steps.",
			"CompletionCaseGen", gen.CompletionCaseGen(), checkStrongCompletions,
			pbt.Expensive(3),
			pbt.Classify(func(c gen.CompletionCase) []string {
				labels := map[string]bool{}
				for _, s := range c.Steps {
					if s.Cheap && s.Completion > 0 && !s.Skipped {
						labels["a cheap call with a completion"] = true
					} else if !s.Cheap && !s.Skipped && s.Step < 2 && s.Completion > 0 && s.Model < 2 {
						labels["a strong call of the model"] = true
					}
				}
				return sortedKeys(labels)
			}),
			pbt.Cover("a strong call of the model", 40), pbt.Cover("a cheap call with a completion", 20),
		),
		pbt.ForAll("P69_live_retry_rules_table",
			"The live provider's retry rules (DESIGN §7), as a table written from the design: against the in-process fake server answering generated statuses, error bodies and Retry-After headers, the client retries connection-level failures 408, 409, 429 and 5xx (up to its retry limit) and nothing else; an insufficient_quota error is never retried, even with status 429; it waits exactly a Retry-After given in seconds or as an HTTP date (a past date: no wait), else a back-off in (0, 30 s]; a wait beyond two minutes, a quota error, 401, 403, 404 and exhausted retries end unavailable; the server receives exactly the attempts the table allows.",
			"RetryCaseGen", gen.RetryCaseGen(), checkRetryTable,
			pbt.Pin("insufficient_quota with status 429", gen.RetryCase{Failures: []gen.ScriptedFailure{{Status: 0, Code: 1}}}),
			pbt.Pin("Retry-After as an HTTP date", gen.RetryCase{Failures: []gen.ScriptedFailure{{Status: 3, RetryAfter: 5}}}),
			pbt.Classify(func(c gen.RetryCase) []string {
				labels := map[string]bool{}
				for _, f := range c.Failures {
					if gen.RetryCodes()[f.Code] == "insufficient_quota" && gen.RetryBodies()[f.Body] != "text" {
						labels["insufficient_quota"] = true
						if gen.RetryStatuses()[f.Status] == 429 {
							labels["insufficient_quota with 429"] = true
						}
					}
					if strings.HasPrefix(gen.RetryAfters()[f.RetryAfter], "+") {
						labels["Retry-After as a date"] = true
					}
				}
				return sortedKeys(labels)
			}),
			pbt.Cover("insufficient_quota with 429", 5), pbt.Cover("Retry-After as a date", 20),
		),
		pbt.ForAll("P70_secret_label_names_never_reach_the_server",
			"A label or annotation whose name says secret (dsn, db_password, api_token, …, in any case and separator) is redacted whole whatever its value looks like (DESIGN §7): the request the in-process fake server receives for the alert's analysis never holds the value, and holds the plain label beside it.",
			"SecretLabelCaseGen", gen.SecretLabelCaseGen(), checkSecretLabel,
			pbt.Pin("a dsn without a password", gen.SecretLabelCase{Value: 2}),
			pbt.Classify(func(c gen.SecretLabelCase) []string {
				if c.Annotation {
					return []string{"an annotation"}
				}
				return []string{"a label"}
			}),
			pbt.Cover("an annotation", 20), pbt.Cover("a label", 20),
		),
		pbt.ForAll("P71_audit_hash_covers_every_field",
			"Every field of an audit entry and of a cost point is covered by its hash (DESIGN §9): in a sealed trail, editing any one field alone — each field of the struct in turn, found by reflection, so a new field is covered without editing the property — of an unkeyed or keyed entry, or of a cost point or its link, fails verify.",
			"AuditFieldCaseGen", gen.AuditFieldCaseGen(), checkAuditFields,
			pbt.Classify(func(c gen.AuditFieldCase) []string {
				if c.Entry%(c.MoreEntries+2) < c.Legacy%(c.MoreEntries+3) {
					return []string{"an unkeyed entry"}
				}
				return []string{"a keyed entry"}
			}),
			pbt.Cover("an unkeyed entry", 5), pbt.Cover("a keyed entry", 20),
		),
	}
}

// expiryOffset is memory i's expiry relative to the recall time; 0 means
// none.
func expiryOffset(c gen.ExpiryCase, i int) time.Duration {
	if c.AtNow > 0 && i == c.AtNow-1 {
		return expiresAtNow
	}
	return gen.ExpiryOffsets()[c.Expiry[i]]
}

// expiresAtNow stands for an expiry exactly at the recall time (an offset of
// zero would mean none).
const expiresAtNow = time.Duration(-1 << 62)

func checkExpiry(c gen.ExpiryCase) error {
	at := fixedNow()
	id := openrecall.Identity{Rule: "KubePodCrashLooping", Service: "checkout"}
	fp := gen.Families()[0]
	return withClockStore(func() time.Time { return at }, func(ctx context.Context, s *memory.Store) error {
		want := map[string]bool{} // id → votes
		for i := range c.Expiry {
			inc := openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionKnownBenign, Note: fmt.Sprintf("memory %d", i),
				Identity: id, Severity: openrecall.SeverityHigh}
			end := at
			switch off := expiryOffset(c, i); off {
			case 0:
			case expiresAtNow:
				inc.ExpiresAt = at
			default:
				inc.ExpiresAt = at.Add(off)
				end = inc.ExpiresAt
			}
			if end.After(at) {
				end = at
			}
			// Created before its expiry (and before the recall).
			inc.CreatedAt = end.Add(-time.Duration(1+c.Age%1000) * time.Hour)
			stored, _, err := s.Retain(ctx, inc)
			if err != nil {
				return fmt.Errorf("setup: retain: %v", err)
			}
			want[stored.ID] = inc.ExpiresAt.IsZero() || inc.ExpiresAt.After(at)
		}
		got, err := s.Recall(ctx, id, fp, 50)
		if err != nil {
			return fmt.Errorf("recall: %v", err)
		}
		seen := 0
		for _, m := range got {
			votes, ok := want[m.Incident.ID]
			if !ok {
				continue
			}
			seen++
			switch {
			case votes && (m.Related || m.Score != 1):
				return fmt.Errorf("expiry: memory %s expiring %s is related (score %v) at %s, before its expiry", m.Incident.ID, m.Incident.ExpiresAt, m.Score, at)
			case !votes && (!m.Related || m.Score > openrecall.MinStrongThreshold):
				return fmt.Errorf("expiry: memory %s created %s, expired %s, votes (score %v) at recall time %s",
					m.Incident.ID, m.Incident.CreatedAt, m.Incident.ExpiresAt, m.Score, at)
			}
		}
		voters := 0
		for _, v := range want {
			if v {
				voters++
			}
		}
		if seen < voters {
			return fmt.Errorf("liveness: %d of %d memories recalled, %d of them still vote", seen, len(want), voters)
		}
		return nil
	})
}

// withClockStore opens a Store with clock now on a fresh file, runs f and
// removes the file.
func withClockStore(now func() time.Time, f func(ctx context.Context, s *memory.Store) error) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "openrecall-pbt-")
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	loc, drop, err := storeLocation(dir)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer drop()
	s, err := memory.Open(ctx, loc, memory.Options{Now: now})
	if err != nil {
		return fmt.Errorf("setup: open store: %v", err)
	}
	defer func() { _ = s.Close() }()
	return f(ctx, s)
}

func checkCacheWrite(c gen.CacheWriteCase) error {
	id := openrecall.Identity{Rule: "KubePodCrashLooping", Service: "checkout"}
	fp := gen.Families()[0]
	mk := func(i int, d openrecall.Decision) openrecall.Incident {
		return openrecall.Incident{Fingerprint: fp, Decision: d, Note: fmt.Sprintf("memory %d", i), Identity: id,
			Severity: openrecall.SeverityHigh, CreatedAt: gen.Times()[i%len(gen.Times())]}
	}
	return withStores(2, func(ctx context.Context, ss []*memory.Store) error {
		cached, ref := ss[0], ss[1]
		cached.EnableRecallCache(64, time.Hour) // only this store's own writes can empty it
		var ids []string
		for i := 0; i <= c.Base; i++ {
			inc, _, err := cached.Retain(ctx, mk(i, openrecall.DecisionKnownBenign))
			if err != nil {
				return fmt.Errorf("setup: retain: %v", err)
			}
			ids = append(ids, inc.ID)
		}
		limit := 1 + c.Limit
		if _, err := cached.Recall(ctx, id, fp, limit); err != nil {
			return fmt.Errorf("recall: %v", err)
		}
		next := mk(100, gen.Retainable()[c.Decision])
		var err error
		switch gen.CacheWrites()[c.Write] {
		case "retain":
			_, _, err = cached.Retain(ctx, next)
		case "forget":
			_, _, err = cached.Forget(ctx, ids[c.Target%len(ids)])
		case "supersede":
			_, _, _, err = cached.Supersede(ctx, ids[c.Target%len(ids)], next)
		case "import":
			line, _ := json.Marshal(next)
			var rep memory.ImportReport
			rep, err = cached.Import(ctx, bytes.NewReader(append(line, '\n')))
			if err == nil && (rep.Created != 1 || len(rep.Rejected) > 0) {
				err = fmt.Errorf("import report %+v", rep)
			}
		}
		if err != nil {
			return fmt.Errorf("write: %s: %v", gen.CacheWrites()[c.Write], err)
		}
		want, err := ref.Recall(ctx, id, fp, limit)
		if err != nil {
			return fmt.Errorf("recall: %v", err)
		}
		got, err := cached.Recall(ctx, id, fp, limit)
		if err != nil {
			return fmt.Errorf("recall: %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("cache: after this store's %s, a recall through its cache is not the store's (-store +cache):\n%s", gen.CacheWrites()[c.Write], diff)
		}
		return nil
	})
}

func checkDedupeComponents(c gen.DedupeCase) error {
	a, b := c.Pair()
	comp := gen.DedupeComponents()[c.Component]
	ka := openrecall.DedupeKey(a.Fingerprint, a.Decision, a.Note, a.SourceAlertID)
	kb := openrecall.DedupeKey(b.Fingerprint, b.Decision, b.Note, b.SourceAlertID)
	if ka == kb {
		return fmt.Errorf("key: changing the %s (%+v → %+v) keeps dedupe key %s", comp, a, b, ka)
	}
	return withStores(1, func(ctx context.Context, ss []*memory.Store) error {
		if _, _, err := ss[0].Retain(ctx, a); err != nil {
			return fmt.Errorf("setup: retain: %v", err)
		}
		stored, created, err := ss[0].Retain(ctx, b)
		if err != nil {
			return fmt.Errorf("setup: retain: %v", err)
		}
		n, err := incidentCount(ctx, ss[0])
		if err != nil {
			return err
		}
		if !created || n != 2 {
			return fmt.Errorf("store: retaining a twin that differs in its %s (%s → %s) gave created=%v, %d records (stored %s)",
				comp, describeComponent(a, comp), describeComponent(b, comp), created, n, stored.ID)
		}
		return nil
	})
}

func describeComponent(inc openrecall.Incident, comp string) string {
	switch comp {
	case "decision":
		return string(inc.Decision)
	case "note":
		return fmt.Sprintf("%q", inc.Note)
	case "source alert id":
		return fmt.Sprintf("%q", inc.SourceAlertID)
	case "note and id boundary":
		return fmt.Sprintf("%q + %q", inc.Note, inc.SourceAlertID)
	}
	v, _ := inc.Fingerprint.Get(comp)
	return fmt.Sprintf("%q", v)
}

// designCheapCap is DESIGN §7's cheap completion cap.
const designCheapCap = 400

func checkCheapWorstCase(c gen.PriceCase) error {
	ci, co, si, so, expected := c.Table()
	const cheapName, strongName = "pbt-cheap", "pbt-strong"
	perM := func(perToken int64) openrecall.NanoUSD { return openrecall.NanoUSD(perToken * 1_000_000) }
	prices := routing.Prices{cheapName: {InputPerMillion: perM(ci), OutputPerMillion: perM(co)},
		strongName: {InputPerMillion: perM(si), OutputPerMillion: perM(so)}}
	fp := openrecall.Fingerprint{ErrorClass: "crashloopbackoff", ServiceRole: "api_edge", DependencyPattern: "configmap", Environment: "prod"}
	answer := `{"decision":"known_benign","confidence":0.9,"cited_memory_ids":["inc_0"],"summary":"known"}`
	out, err := routeOnBenignMemory(routing.Config{Cheap: answeringModel{cheapName, answer}, Strong: answeringModel{strongName, answer},
		Prices: prices, ExpectedCompletionTokens: expected}, fp, 1+c.Memories, "price-1")
	if err != nil {
		return err
	}
	if len(out.Steps) != 1 || out.Steps[0].Step != openrecall.StepAnalysis {
		return fmt.Errorf("calls: want one analysis step, got %+v", out.Steps)
	}
	s := out.Steps[0]
	p := int64(s.PromptTokens)
	worst := p*ci + designCheapCap*co
	baseline := p*si + int64(expected)*so
	wantTier := openrecall.TierStrong
	if worst <= baseline {
		wantTier = openrecall.TierCheap
	}
	if s.Tier != wantTier {
		return fmt.Errorf("tier: %s model answered, want %s: %d prompt tokens, cheap worst case %d·%d + %d·%d = %d n$, baseline %d·%d + %d·%d = %d n$ (%s)",
			s.Tier, wantTier, p, p, ci, designCheapCap, co, worst, p, si, expected, so, baseline, s.Reason)
	}
	if out.Cost > out.Baseline {
		return fmt.Errorf("conservation: cost %d > baseline %d", out.Cost, out.Baseline)
	}
	return nil
}

func checkStrongCompletions(c gen.CompletionCase) error {
	var results [2][]openrecall.Result
	var want memory.CompletionStats
	for i, st := range c.Steps {
		tier := openrecall.TierStrong
		if st.Cheap {
			tier = openrecall.TierCheap
		}
		step := openrecall.RouteStep{Step: gen.CompletionSteps()[st.Step], Model: gen.CompletionModels()[st.Model], Tier: tier,
			Skipped: st.Skipped, PromptTokens: st.PromptTokens, CompletionTokens: st.Completion, Live: true}
		run := 0
		if i >= c.Split {
			run = 1
		}
		rs := &results[run]
		if len(*rs) == 0 || st.Result == 0 {
			*rs = append(*rs, openrecall.Result{AnalysisID: fmt.Sprintf("b-%06d", i)})
		}
		(*rs)[len(*rs)-1].Steps = append((*rs)[len(*rs)-1].Steps, step)
		// Written from DESIGN §7: a strong analysis call that was made and
		// returned a completion, of the model or a dated snapshot of it.
		if step.Step == openrecall.StepAnalysis && tier == openrecall.TierStrong && !st.Skipped && st.Completion > 0 &&
			(step.Model == "gpt-4o" || step.Model == "gpt-4o-2024-08-06") {
			want.Calls++
			want.CompletionTokens += int64(st.Completion)
		}
	}
	return withStores(1, func(ctx context.Context, ss []*memory.Store) error {
		for _, rs := range results {
			if err := ss[0].RecordStrongCompletions(ctx, rs); err != nil {
				return fmt.Errorf("record: %v", err)
			}
		}
		got, err := ss[0].StrongCompletions(ctx, "gpt-4o")
		if err != nil {
			return fmt.Errorf("read: %v", err)
		}
		if got != want {
			return fmt.Errorf("mean: recorded strong completions of gpt-4o are %+v, want %+v", got, want)
		}
		gm, gok := got.Mean()
		if want.Calls > 0 && (!gok || gm != int((want.CompletionTokens+want.Calls/2)/want.Calls)) {
			return fmt.Errorf("mean: %d (%v), want %d", gm, gok, (want.CompletionTokens+want.Calls/2)/want.Calls)
		}
		return nil
	})
}

// retryRule is one row of DESIGN §7's retry rules for the live provider,
// written from the design, not from the client: the first row whose when
// holds decides.
type retryRule struct {
	name        string
	when        func(status int, code string) bool
	retried     bool
	unavailable bool // when the call ends on it
}

var designRetryRules = []retryRule{
	{"insufficient_quota, whatever the status", func(_ int, code string) bool { return code == "insufficient_quota" }, false, true},
	{"408, 409, 429 and 5xx", func(s int, _ string) bool { return s == 408 || s == 409 || s == 429 || s >= 500 }, true, true},
	{"authentication, permission, no such model", func(s int, _ string) bool { return s == 401 || s == 403 || s == 404 }, false, true},
	{"any other 4xx", func(s int, _ string) bool { return s >= 400 && s < 500 }, false, false},
}

// Client limits of P69's client: three retries, waits up to two minutes,
// back-off at most 30 s.
const (
	designRetries       = 3
	designMaxRetryAfter = 2 * time.Minute
	designMaxBackoff    = 30 * time.Second
)

// designWait is the wait a Retry-After value asks for at clock now, and
// whether it is one (seconds, or an HTTP date; a past date is no wait).
func designWait(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := time.Parse(time.RFC1123, v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d, true
		}
		return 0, true
	}
	return 0, false
}

func checkRetryTable(c gen.RetryCase) error {
	now := fixedClock()
	var script []fake.Reply
	for _, f := range c.Failures {
		r := fake.Reply{Status: gen.RetryStatuses()[f.Status], RetryAfter: gen.RetryAfterHeader(f, now), Message: "scripted failure"}
		switch gen.RetryBodies()[f.Body] {
		case "code":
			r.ErrorCode = gen.RetryCodes()[f.Code]
		case "type":
			r.ErrorType = gen.RetryCodes()[f.Code]
		default:
			r.Body = "upstream said no"
		}
		script = append(script, r)
	}
	srv := fake.New(func(fake.Received) fake.Reply {
		return fake.Reply{Content: "fine", PromptTokens: 3, CompletionTokens: 2}
	}, script...)
	defer srv.Close()
	m, err := openai.New(openai.Options{BaseURL: srv.URL, Model: "gpt-4o", MaxRetries: designRetries, Timeout: 10 * time.Second,
		Now: fixedClock, Jitter: func() float64 { return 0.5 }, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	resp, err := m.Complete(context.Background(), routing.Request{System: "s", Prompt: "p", MaxTokens: 20})

	// The expected course of the call, from the table.
	wantCalls, wantOK, wantUnavailable := len(c.Failures)+1, true, false
	type waitWant struct {
		exact   time.Duration
		backoff bool
	}
	var waits []waitWant
	for i, f := range c.Failures {
		status := gen.RetryStatuses()[f.Status]
		code := ""
		if gen.RetryBodies()[f.Body] != "text" {
			code = gen.RetryCodes()[f.Code]
		}
		var rule retryRule
		for _, r := range designRetryRules {
			if r.when(status, code) {
				rule = r
				break
			}
		}
		stop := !rule.retried || i == designRetries
		if !stop {
			d, given := designWait(gen.RetryAfterHeader(f, now), now)
			if given && d > designMaxRetryAfter {
				stop = true
			} else {
				waits = append(waits, waitWant{exact: d, backoff: !given})
			}
		}
		if stop {
			wantCalls, wantOK, wantUnavailable = i+1, false, rule.unavailable
			break
		}
	}
	if got := srv.Calls(); got != wantCalls {
		return fmt.Errorf("attempts: the server received %d requests, the table allows %d (failures %s)", got, wantCalls, describeFailures(c, now))
	}
	if (err == nil) != wantOK || errors.Is(err, routing.ErrUnavailable) != wantUnavailable {
		return fmt.Errorf("outcome: error %v, want success %v, unavailable %v (failures %s)", err, wantOK, wantUnavailable, describeFailures(c, now))
	}
	for i, w := range waits {
		if i >= len(resp.Attempts) {
			return fmt.Errorf("attempts: %d attempts recorded, want a wait after attempt %d", len(resp.Attempts), i+1)
		}
		got := resp.Attempts[i].Wait
		if w.backoff && (got <= 0 || got > designMaxBackoff) || !w.backoff && got != w.exact {
			return fmt.Errorf("wait: after attempt %d the client waited %s, want %s (failures %s)", i+1, got,
				map[bool]string{true: "a back-off in (0, 30s]", false: w.exact.String()}[w.backoff], describeFailures(c, now))
		}
	}
	return nil
}

func describeFailures(c gen.RetryCase, now time.Time) string {
	var parts []string
	for _, f := range c.Failures {
		parts = append(parts, fmt.Sprintf("%d %s=%q Retry-After %q", gen.RetryStatuses()[f.Status], gen.RetryBodies()[f.Body],
			gen.RetryCodes()[f.Code], gen.RetryAfterHeader(f, now)))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

func checkSecretLabel(c gen.SecretLabelCase) error {
	srv := fake.New(func(fake.Received) fake.Reply {
		return fake.Reply{Content: `{"decision":"real","confidence":0.9}`, PromptTokens: 10, CompletionTokens: 5}
	})
	defer srv.Close()
	m, err := openai.New(openai.Options{BaseURL: srv.URL, Model: "gpt-4o", MaxRetries: -1, Timeout: 10 * time.Second, Now: fixedClock})
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	r, err := routing.New(routing.Config{Strong: m, Vet: triage.Vet, Now: fixedClock})
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	name, secret, plain := gen.SecretLabelNames()[c.Name], c.SecretValue(), "payments-squad-7"
	alert := openrecall.Alert{ID: "secret-1", Format: "jsonl", Title: "orders database unreachable", Severity: openrecall.SeverityHigh,
		Status: openrecall.StatusFiring, Labels: map[string]string{"alertname": "OrdersDBDown", "team": plain}, Annotations: map[string]string{}}
	if c.Annotation {
		alert.Annotations[name] = secret
	} else {
		alert.Labels[name] = secret
	}
	fp := openrecall.Fingerprint{ErrorClass: "connection_refused", DependencyPattern: "database", Environment: "prod"}
	out := r.Route(context.Background(), routing.Input{Alert: alert, Fingerprint: fp, Triage: triage.Triage(fp, alert.Severity, nil, triage.DefaultConfig()),
		Guard: openrecall.GuardVerdict{Reason: "pbt: no memory"}})
	got := srv.Received()
	if len(got) != 1 {
		return fmt.Errorf("setup: the server received %d requests, want 1 (steps %+v)", len(got), out.Steps)
	}
	body := got[0].Request.Text("system") + "\n" + got[0].Request.Text("user")
	if strings.Contains(body, secret) || strings.Contains(string(got[0].Body), secret) {
		return fmt.Errorf("secret: the value %q of %s %q reached the server", secret, map[bool]string{true: "annotation", false: "label"}[c.Annotation], name)
	}
	if !strings.Contains(body, plain) {
		return fmt.Errorf("liveness: the plain label team=%q is not in the request either", plain)
	}
	return nil
}

func checkAuditFields(c gen.AuditFieldCase) error {
	tr := sealTrail(gen.TrailCase{MoreEntries: c.MoreEntries, MoreCosts: c.MoreCosts, Legacy: c.Legacy})
	if problems, err := verifyModel(tr, nil); err != nil || len(problems) > 0 {
		return fmt.Errorf("setup: the untouched trail does not verify: %v %v", err, problems)
	}
	k := c.Entry % len(tr.entries)
	kind := "keyed"
	if int64(k) < tr.state.LegacyThrough {
		kind = "unkeyed"
	}
	for f := 0; f < reflect.TypeOf(openrecall.AuditEntry{}).NumField(); f++ {
		got := tr
		got.entries = append([]openrecall.AuditEntry(nil), tr.entries...)
		name := editField(&got.entries[k], f)
		if problems, err := verifyModel(got, nil); err == nil && len(problems) == 0 {
			return fmt.Errorf("entry: editing field %s alone of %s entry %d of %d passes verify", name, kind, k+1, len(tr.entries))
		}
	}
	j := c.Cost % len(tr.costs)
	for f := 0; f < reflect.TypeOf(openrecall.CostPoint{}).NumField(); f++ {
		got := tr
		got.costs = append([]costLink(nil), tr.costs...)
		name := editField(&got.costs[j].P, f)
		if problems, err := verifyModel(got, nil); err == nil && len(problems) == 0 {
			return fmt.Errorf("cost: editing field %s alone of cost point %d of %d passes verify", name, j+1, len(tr.costs))
		}
	}
	lt := reflect.TypeOf(costLink{})
	for f := 0; f < lt.NumField(); f++ {
		if lt.Field(f).Type.Kind() == reflect.Struct {
			continue // the point itself, edited field by field above
		}
		got := tr
		got.costs = append([]costLink(nil), tr.costs...)
		name := editField(&got.costs[j], f)
		if problems, err := verifyModel(got, nil); err == nil && len(problems) == 0 {
			return fmt.Errorf("cost: editing the link's %s alone of cost point %d of %d passes verify", name, j+1, len(tr.costs))
		}
	}
	return nil
}

// sortedKeys returns the keys of a label set in order.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
