package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/fakereceivers"
)

// ledger holds notifications by receiver and episode key: their kinds
// (trigger, update, resolve) in the order they were made or received.
type ledger map[string]map[string][]string

func (l ledger) add(receiver, key, kind string) {
	if l[receiver] == nil {
		l[receiver] = map[string][]string{}
	}
	l[receiver][key] = append(l[receiver][key], kind)
}

func (l ledger) has(receiver, key, kind string) bool { return slices.Contains(l[receiver][key], kind) }

// count returns how many notifications of kind receiver holds.
func (l ledger) count(receiver, kind string) int {
	n := 0
	for _, kinds := range l[receiver] {
		for _, k := range kinds {
			if k == kind {
				n++
			}
		}
	}
	return n
}

// subjectOf returns what routeYAML's matchers read of res.
func subjectOf(res openrecall.Result) subject {
	route := "analysed"
	switch {
	case res.Bypassed:
		route = "bypass"
	case res.Excepted():
		route = "exception"
	case res.Grouped():
		route = "group"
	}
	return subject{Decision: string(res.Decision), Route: route, Severity: string(res.Alert.Severity), AttackPattern: res.Fingerprint.AttackPattern}
}

// expectation is what the routes say of the results so far.
type expectation struct {
	// intents are the outbox's intents the results call for.
	intents ledger
	// keyOf gives each analysis's episode key; nameOf each key's alert.
	keyOf  map[string]string
	nameOf map[string]string
	// reached gives the receivers each triaged analysis reaches.
	reached map[string][]string
}

// expect returns what the routes say of rs (in completion order) and of
// the decision: a trigger for every receiver a triaged result reaches
// (one per episode), a resolve of a recovery for every receiver that had
// the episode's trigger, an update of the decided analysis for every
// receiver that had its trigger.
func (r *run) expect(rs []served) expectation {
	e := expectation{intents: ledger{}, keyOf: map[string]string{}, nameOf: map[string]string{}, reached: map[string][]string{}}
	for _, s := range rs {
		e.keyOf[s.AnalysisID] = s.key()
	}
	for _, p := range r.posted {
		if k, ok := e.keyOf[p.analysisID]; ok {
			e.nameOf[k] = p.name
		}
	}
	for _, s := range rs {
		if s.Result == nil {
			continue
		}
		res, key := *s.Result, s.key()
		switch {
		case res.Outcome == openrecall.ResultTriaged:
			to := routedTo(subjectOf(res))
			e.reached[s.AnalysisID] = to
			for _, rcv := range to {
				if !e.intents.has(rcv, key, openrecall.IntentTrigger) {
					e.intents.add(rcv, key, openrecall.IntentTrigger)
				}
			}
			if s.AnalysisID == r.decided {
				for _, rcv := range to {
					e.intents.add(rcv, key, openrecall.IntentUpdate)
				}
			}
		case res.Outcome == openrecall.ResultResolved && res.Alert.Status == openrecall.StatusResolved:
			for _, rcv := range receiverNames {
				if e.intents.has(rcv, key, openrecall.IntentTrigger) && !e.intents.has(rcv, key, openrecall.IntentResolve) {
					e.intents.add(rcv, key, openrecall.IntentResolve)
				}
			}
		}
	}
	return e
}

// atReceivers returns what each receiver itself shows of the intents:
// all of them, but an Alertmanager's updates (it has no notes: the
// receiver sends nothing for them).
func (e expectation) atReceivers() ledger {
	out := ledger{}
	for rcv, byKey := range e.intents {
		for key, kinds := range byKey {
			for _, k := range kinds {
				if rcv == rcvAM && k == openrecall.IntentUpdate {
					continue
				}
				out.add(rcv, key, k)
			}
		}
	}
	return out
}

// deduped gives, for each receiver whose API makes a repeated
// notification of an episode one, the kinds it makes one: PagerDuty's
// dedup_key (a trigger of an open incident, an acknowledgement or a
// resolve again change nothing), Opsgenie's alias (a create of an open
// alert; its notes do add up), Alertmanager's label set, the webhook's
// notification id (any kind: the receiver drops a delivery it had). A
// repeat there, as after a crash, is allowed and counted; anywhere else it
// is a notification too many.
var deduped = map[string][]string{
	rcvPager: {openrecall.IntentTrigger, openrecall.IntentUpdate, openrecall.IntentResolve},
	rcvOps:   {openrecall.IntentTrigger},
	rcvAM:    {openrecall.IntentTrigger, openrecall.IntentResolve},
	rcvHook:  {openrecall.IntentTrigger, openrecall.IntentUpdate, openrecall.IntentResolve},
}

// observation is what the receivers show.
type observation struct {
	got ledger
	// repeats counts, by receiver, repeated notifications the receiver
	// deduplicated.
	repeats  map[string]int
	problems []string
	state    fakereceivers.State
	am       []amEvent
}

// reviewLink finds a review link to the cockpit; its last path segment
// names the analysis (<external_url>/results/<analysis_id>).
var reviewLink = regexp.MustCompile(regexp.QuoteMeta(externalURL) + `/(?:[^"\s<>|?#]*/)?([A-Za-z0-9._:-]+)`)

// observe reads what every receiver shows, each notification mapped to
// its episode: by its key where the receiver keeps one, else by the
// analysis its review link names.
func (r *run) observe(keyOf map[string]string) observation {
	o := observation{got: ledger{}, repeats: map[string]int{}, state: r.fakes.State(), am: r.sink.received()}
	byLink := func(receiver, text, what string) (string, bool) {
		m := reviewLink.FindStringSubmatch(text)
		if m == nil {
			o.problems = append(o.problems, fmt.Sprintf("%s: %s carries no review link to %s/…", receiver, what, externalURL))
			return "", false
		}
		k, ok := keyOf[m[1]]
		if !ok {
			o.problems = append(o.problems, fmt.Sprintf("%s: %s links to analysis %s, which is no result of this run", receiver, what, m[1]))
		}
		return k, ok
	}
	for _, ev := range o.state.PagerDuty.Events {
		o.got.add(rcvPager, ev.DedupKey, map[string]string{"trigger": "trigger", "resolve": "resolve", "acknowledge": "update"}[ev.Action])
	}
	for _, q := range o.state.Opsgenie.Requests {
		kind := map[string]string{"Create": "trigger", "Close": "resolve", "AddNote": "update"}[q.Action]
		o.got.add(rcvOps, q.Alias, kind)
		if !q.Success {
			o.problems = append(o.problems, fmt.Sprintf("ops: %s of alias %s: %s", q.Action, q.Alias, q.Status))
		}
	}
	for _, m := range o.state.Slack.Messages {
		for i, v := range m.History {
			if k, ok := byLink(rcvChat, string(v.Blocks), fmt.Sprintf("message %s version %d", m.TS, i)); ok {
				o.got.add(rcvChat, k, headlineKind(string(v.Blocks)))
			}
		}
	}
	for i, c := range o.state.Teams.Cards {
		link, head := "", ""
		for _, a := range c.Actions {
			link += a.URL + " "
		}
		if len(c.Texts) > 0 {
			head = c.Texts[0]
		}
		if c.Problem != "" {
			o.problems = append(o.problems, fmt.Sprintf("secops: card %d: %s", i, c.Problem))
		}
		if k, ok := byLink(rcvSecOps, link, fmt.Sprintf("card %d (%q)", i, head)); ok {
			o.got.add(rcvSecOps, k, headlineKind("*"+head))
		}
	}
	for _, m := range o.state.Email.Messages {
		kind := header(m.Header, "X-Openrecall-Kind")
		if k, ok := byLink(rcvMail, m.Body, fmt.Sprintf("mail %q", m.Subject)); ok {
			o.got.add(rcvMail, k, kind)
		}
	}
	for _, d := range o.state.Webhook.Deliveries {
		if !d.Signed || !d.Verified {
			o.problems = append(o.problems, fmt.Sprintf("hook: delivery %s not signed with the shared secret", d.ID))
		}
		if d.Duplicate {
			o.repeats[rcvHook]++
			continue
		}
		o.got.add(rcvHook, d.Key, d.Kind)
	}
	for _, ev := range o.am {
		o.got.add(rcvAM, ev.Labels["openrecall_episode"], amKind(ev.Status))
	}
	// A repeat of the same kind in a row is one notification where the
	// receiver makes it one (the webhook's by id, above).
	for rcv, kinds := range deduped {
		if rcv == rcvHook {
			continue
		}
		for key, got := range o.got[rcv] {
			var kept []string
			for i, k := range got {
				if i > 0 && k == got[i-1] && slices.Contains(kinds, k) {
					o.repeats[rcv]++
					continue
				}
				kept = append(kept, k)
			}
			o.got[rcv][key] = kept
		}
	}
	return o
}

// headlineKind tells a notification's kind from its headline, as a person
// reads it: "Resolved …", "Decided … by …", anything else a trigger.
func headlineKind(text string) string {
	switch {
	case strings.Contains(text, "*Resolved"):
		return openrecall.IntentResolve
	case strings.Contains(text, "*Decided "):
		return openrecall.IntentUpdate
	}
	return openrecall.IntentTrigger
}

// header returns a mail header's value, its name in any case.
func header(h map[string]string, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// differences returns, for each receiver not skipped, the episodes whose
// notifications differ between want and got, as lines.
func differences(want, got ledger, nameOf map[string]string, skip []string) []string {
	var out []string
	for _, rcv := range receiverNames {
		if has(skip, rcv) {
			continue
		}
		keys := map[string]bool{}
		for k := range want[rcv] {
			keys[k] = true
		}
		for k := range got[rcv] {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if w, g := want[rcv][k], got[rcv][k]; !slices.Equal(w, g) {
				name := nameOf[k]
				if name == "" {
					name = "no alert of this run"
				}
				out = append(out, fmt.Sprintf("%s %s (%s): want %v, got %v", rcv, k, name, w, g))
			}
		}
	}
	return out
}

// compare checks that the outbox holds exactly the intents the routes
// call for, and every receiver but skip shows exactly those.
func (r *run) compare(phase string, skip []string) error {
	rs, err := r.results()
	if err != nil {
		return err
	}
	e := r.expect(rs)
	all, err := r.intents("")
	if err != nil {
		return err
	}
	stored := ledger{}
	for _, in := range all {
		stored.add(in.Receiver, in.Key, in.Kind)
	}
	diff := differences(e.intents, stored, e.nameOf, nil)
	r.check(len(diff) == 0, "%s: the outbox holds exactly the %d intents the routes call for (%d differ)", phase, len(all), len(diff))
	r.details(phase+": outbox", diff)
	o := r.observe(e.keyOf)
	diff = differences(e.atReceivers(), o.got, e.nameOf, skip)
	n := 0
	for _, rcv := range receiverNames {
		if !has(skip, rcv) {
			for _, kinds := range e.atReceivers()[rcv] {
				n += len(kinds)
			}
		}
	}
	who := "every receiver"
	if len(skip) > 0 {
		who = "every receiver but " + strings.Join(skip, ", ")
	}
	r.check(len(diff) == 0 && len(o.problems) == 0, "%s: %s got exactly what the routes say (%d notifications; %d differ, %d problems)",
		phase, who, n, len(diff), len(o.problems))
	r.details(phase, append(diff, o.problems...))
	return nil
}

// details records each line as a failure of what and prints the first
// dozen under the check.
func (r *run) details(what string, lines []string) {
	for i, d := range lines {
		r.fail("%s: %s", what, d)
		if i < 12 {
			fmt.Println("       " + d)
		}
	}
	if len(lines) > 12 {
		fmt.Printf("       … and %d more\n", len(lines)-12)
	}
}

// checkOutage checks PagerDuty after the outage and the kill: one
// incident per episode, the events delivered before the kill and re-sent
// after it deduplicated into it.
func (r *run) checkOutage(outage []string, held int) {
	rs, err := r.results()
	if err != nil {
		r.fail("results: %v", err)
		return
	}
	e := r.expect(rs)
	st := r.fakes.State()
	resent := 0
	for _, n := range outage {
		key := e.keyOf[r.byName[n].analysisID]
		incs := st.PagerDuty.IncidentsOf(key)
		triggers := 0
		for _, in := range incs {
			triggers += in.Triggers
		}
		resent += triggers - 1
		r.check(len(incs) == 1, "PagerDuty holds one incident for %s (%s): %d incidents, %d trigger events", n, key, len(incs), triggers)
	}
	r.check(held >= 1 && resent == held, "the kill came mid-delivery: %d triggers PagerDuty took before the kill were sent again after it and deduplicated by dedup_key (%d)", held, resent)
}

// final checks the end state: the outbox drained, and each receiver's
// own state (incidents, alerts, messages, mails, Alertmanager's alerts).
func (r *run) final() {
	fmt.Println("5. the end state:")
	all, err := r.intents("")
	if err != nil {
		r.fail("outbox: %v", err)
		return
	}
	counts := map[string]int{}
	for _, in := range all {
		counts[in.State]++
	}
	r.check(counts[openrecall.IntentPending] == 0 && counts[openrecall.IntentDead] == 0,
		"the outbox is empty: %d intents sent, %d pending, %d dead", counts[openrecall.IntentSent], counts[openrecall.IntentPending], counts[openrecall.IntentDead])
	rs, err := r.results()
	if err != nil {
		r.fail("results: %v", err)
		return
	}
	e := r.expect(rs)
	st := r.fakes.State()

	// PagerDuty: one incident per episode, in the status its last event
	// says.
	bad := []string{}
	for key, kinds := range e.intents[rcvPager] {
		want := fakereceivers.IncidentTriggered
		switch {
		case slices.Contains(kinds, openrecall.IntentResolve):
			want = fakereceivers.IncidentResolved
		case slices.Contains(kinds, openrecall.IntentUpdate):
			want = fakereceivers.IncidentAcknowledged
		}
		incs := st.PagerDuty.IncidentsOf(key)
		if len(incs) != 1 || incs[0].Status != want {
			bad = append(bad, fmt.Sprintf("%s (%s): %d incidents, want 1 %s", key, e.nameOf[key], len(incs), want))
		}
	}
	r.check(len(bad) == 0, "PagerDuty: one incident per paged episode, resolved, acknowledged or open as its notifications say (%d incidents) %s",
		len(st.PagerDuty.Incidents), strings.Join(bad, "; "))

	// Opsgenie: one alert per alias, closed when resolved, the decision
	// as a note.
	bad = bad[:0]
	noted := ""
	for key, kinds := range e.intents[rcvOps] {
		var alerts []fakereceivers.OpsgenieAlert
		for _, a := range st.Opsgenie.Alerts {
			if a.Alias == key {
				alerts = append(alerts, a)
			}
		}
		want := fakereceivers.AlertOpen
		if slices.Contains(kinds, openrecall.IntentResolve) {
			want = fakereceivers.AlertClosed
		}
		if len(alerts) != 1 || alerts[0].Status != want {
			bad = append(bad, fmt.Sprintf("%s (%s): %d alerts, want 1 %s", key, e.nameOf[key], len(alerts), want))
			continue
		}
		if slices.Contains(kinds, openrecall.IntentUpdate) {
			for _, n := range alerts[0].Notes {
				if strings.Contains(n.Note, "decided real") {
					noted = n.Note
				}
			}
			if noted == "" {
				bad = append(bad, fmt.Sprintf("%s (%s): no note of the decision among %d notes", key, e.nameOf[key], len(alerts[0].Notes)))
			}
		}
	}
	r.check(len(bad) == 0, "Opsgenie: one alert per alias, closed when resolved, the decision noted (%q) %s", clip(noted, 70), strings.Join(bad, "; "))

	// Slack: one message per episode, edited in place by its resolve and
	// its decision.
	bad = bad[:0]
	perKey := map[string][]fakereceivers.SlackMessage{}
	for _, m := range st.Slack.Messages {
		if l := reviewLink.FindStringSubmatch(string(m.History[0].Blocks)); l != nil {
			perKey[e.keyOf[l[1]]] = append(perKey[e.keyOf[l[1]]], m)
		}
	}
	edits, decidedHeadline := 0, false
	for key, kinds := range e.intents[rcvChat] {
		ms := perKey[key]
		if len(ms) != 1 || len(ms[0].History) != len(kinds) {
			bad = append(bad, fmt.Sprintf("%s (%s): %d messages, want 1 with %d versions", key, e.nameOf[key], len(ms), len(kinds)))
			continue
		}
		edits += len(kinds) - 1
		if slices.Contains(kinds, openrecall.IntentUpdate) {
			decidedHeadline = slices.ContainsFunc(ms[0].History, func(v fakereceivers.SlackVersion) bool {
				return strings.Contains(string(v.Blocks), "Decided real by e2e")
			})
		}
	}
	r.check(len(bad) == 0 && decidedHeadline, "Slack: one message per episode in #oncall, %d edits in place (chat.update), the decision shown as \"Decided real by e2e\" %s",
		edits, strings.Join(bad, "; "))

	// E-mail: a resolve or a decision answers an earlier mail of its
	// episode (In-Reply-To), so mail clients thread them.
	bad = bad[:0]
	sent := map[string][]string{} // Message-IDs by episode, in order
	replies := 0
	for _, m := range st.Email.Messages {
		l := reviewLink.FindStringSubmatch(m.Body)
		if l == nil {
			continue
		}
		key := e.keyOf[l[1]]
		if header(m.Header, "X-Openrecall-Kind") != openrecall.IntentTrigger {
			replies++
			if !slices.Contains(sent[key], m.InReplyTo) {
				bad = append(bad, fmt.Sprintf("%q answers %q, no earlier mail of %s", m.Subject, m.InReplyTo, key))
			}
		}
		sent[key] = append(sent[key], m.MessageID)
	}
	r.check(len(bad) == 0 && replies > 0, "e-mail: %d mails, the %d resolves and decisions threaded under their episode's mails (In-Reply-To) %s",
		len(st.Email.Messages), replies, strings.Join(bad, "; "))
	r.checkRendering(e, rs, st)

	r.checkAlertmanager(e, rs)
	r.report()
}

// checkRendering checks what people read: every resolve repeats what
// openrecall had decided of its episode (the trigger's decision, kept in
// its delivery), and the decision's updates carry the person's note.
func (r *run) checkRendering(e expectation, rs []served, st fakereceivers.State) {
	decision := map[string]string{}
	for _, s := range rs {
		if s.Result != nil && s.Result.Outcome == openrecall.ResultTriaged {
			decision[s.key()] = string(s.Result.Decision)
		}
	}
	var bad []string
	resolves := 0
	say := func(rcv, key, what string, ok bool) {
		if !ok {
			bad = append(bad, fmt.Sprintf("%s %s (%s): %s", rcv, key, e.nameOf[key], what))
		}
	}
	for _, m := range st.Email.Messages {
		if l := reviewLink.FindStringSubmatch(m.Body); l != nil && header(m.Header, "X-Openrecall-Kind") == openrecall.IntentResolve {
			key := e.keyOf[l[1]]
			resolves++
			say(rcvMail, key, "the resolve's mail does not say the decision, "+decision[key], strings.Contains(m.Body, "Decision: "+decision[key]))
		}
	}
	for _, c := range st.Teams.Cards {
		if len(c.Texts) == 0 || headlineKind("*"+c.Texts[0]) != openrecall.IntentResolve || len(c.Actions) == 0 {
			continue
		}
		if l := reviewLink.FindStringSubmatch(c.Actions[0].URL); l != nil {
			key := e.keyOf[l[1]]
			resolves++
			say(rcvSecOps, key, "the resolve's card does not say the decision, "+decision[key],
				slices.ContainsFunc(c.Texts, func(t string) bool { return strings.HasPrefix(t, "Decision: "+decision[key]) }))
		}
	}
	for _, m := range st.Slack.Messages {
		l := reviewLink.FindStringSubmatch(string(m.History[0].Blocks))
		if l == nil {
			continue
		}
		key := e.keyOf[l[1]]
		for _, v := range m.History[1:] {
			if headlineKind(string(v.Blocks)) == openrecall.IntentResolve {
				resolves++
				say(rcvChat, key, "the resolved message does not say the decision, "+decision[key],
					strings.Contains(string(v.Blocks), `*Decision*\n`+decision[key]))
			}
		}
	}
	r.check(len(bad) == 0, "the %d resolves in mails, cards and messages repeat what openrecall had decided %s", resolves, strings.Join(bad, "; "))

	bad = bad[:0]
	key := e.keyOf[r.decided]
	updates := 0
	note := func(rcv, text string) {
		updates++
		say(rcv, key, "the update does not carry the person's note", strings.Contains(text, decisionNote))
	}
	for _, a := range st.Opsgenie.Alerts {
		for _, n := range a.Notes {
			if a.Alias == key && strings.Contains(n.Note, "decided") {
				note(rcvOps, n.Note)
			}
		}
	}
	for _, d := range st.Webhook.Deliveries {
		if d.Key == key && d.Kind == openrecall.IntentUpdate && !d.Duplicate {
			note(rcvHook, string(d.Body))
		}
	}
	for _, m := range st.Email.Messages {
		if l := reviewLink.FindStringSubmatch(m.Body); l != nil && e.keyOf[l[1]] == key && header(m.Header, "X-Openrecall-Kind") == openrecall.IntentUpdate {
			note(rcvMail, m.Body)
		}
	}
	for _, c := range st.Teams.Cards {
		if len(c.Texts) > 0 && headlineKind("*"+c.Texts[0]) == openrecall.IntentUpdate {
			note(rcvSecOps, strings.Join(c.Texts, "\n"))
		}
	}
	r.check(updates > 0 && len(bad) == 0, "the decision's %d updates (Opsgenie note, webhook, mail, Teams card) carry the person's note %q %s",
		updates, clip(decisionNote, 30), strings.Join(slices.Compact(bad), "; "))
}

// checkAlertmanager checks the real Alertmanager: the alerts still active
// are the episodes posted to it and not resolved, each with openrecall's
// labels; what it sent on came from Alertmanager itself.
func (r *run) checkAlertmanager(e expectation, rs []served) {
	out, err := exec.Command(r.amtool, "--alertmanager.url="+r.amURL, "alert", "query", "-o", "json", `openrecall_episode=~".+"`).Output()
	if err != nil {
		r.fail("amtool alert query: %v", err)
		return
	}
	var active []struct {
		Labels map[string]string `json:"labels"`
	}
	if err := json.Unmarshal(out, &active); err != nil {
		r.fail("amtool alert query -o json: %v", err)
		return
	}
	decision := map[string]string{}
	for _, s := range rs {
		if s.Result != nil && s.Result.Outcome == openrecall.ResultTriaged {
			decision[s.key()] = string(s.Result.Decision)
		}
	}
	var want, got, bad []string
	for key, kinds := range e.intents[rcvAM] {
		if !slices.Contains(kinds, openrecall.IntentResolve) {
			want = append(want, key)
		}
	}
	for _, a := range active {
		key := a.Labels["openrecall_episode"]
		got = append(got, key)
		if a.Labels["openrecall_decision"] != decision[key] || a.Labels["openrecall_route"] == "" || a.Labels["openrecall_severity"] == "" {
			bad = append(bad, fmt.Sprintf("%s: labels %v", key, a.Labels))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	r.check(slices.Equal(want, got) && len(bad) == 0,
		"Alertmanager (amtool alert query): the %d episodes posted and not resolved are active, with openrecall_decision, _route and _severity %s",
		len(got), strings.Join(bad, "; "))
	resolved := 0
	for _, ev := range r.sink.received() {
		if ev.Status == "resolved" && !ev.EndsAt.IsZero() {
			resolved++
		}
	}
	agents := r.sink.userAgents()
	r.check(len(agents) == 1 && strings.HasPrefix(agents[0], "Alertmanager/") && resolved == e.intents.count(rcvAM, openrecall.IntentResolve),
		"Alertmanager sent on every alert itself (%s), %d resolved with endsAt set", strings.Join(agents, ", "), resolved)
}

// report prints what each alert reached and, per receiver, what it got
// against what the routes say.
func (r *run) report() {
	rs, err := r.results()
	if err != nil {
		fmt.Println("report:", err)
		return
	}
	e := r.expect(rs)
	by := map[string]served{}
	for _, s := range rs {
		by[s.AnalysisID] = s
	}
	fmt.Println("\nalerts (decision, how, severity → receivers the routes reach):")
	for _, p := range r.posted {
		s, ok := by[p.analysisID]
		if !ok || s.Result == nil {
			fmt.Printf("  %-22s %-10s not analysed\n", p.name, p.category)
			continue
		}
		sub := subjectOf(*s.Result)
		to := strings.Join(e.reached[p.analysisID], " ")
		if to == "" {
			to = "no one"
		}
		extra := ""
		if p.recovery != "" {
			extra = " · recovered"
		}
		if p.analysisID == r.decided {
			extra += " · decided real by e2e"
		}
		fmt.Printf("  %-22s %-10s %-12s %-8s %-9s → %s%s\n", p.name, p.category, sub.Decision, sub.Route, sub.Severity, to, extra)
	}
	o := r.observe(e.keyOf)
	want := e.atReceivers()
	fmt.Println("\nreceiver  type          triggers   resolves   updates    repeats deduplicated")
	for _, rcv := range receiverNames {
		cell := func(kind string) string {
			return fmt.Sprintf("%d/%d", o.got.count(rcv, kind), want.count(rcv, kind))
		}
		rep := "-"
		if _, ok := deduped[rcv]; ok {
			rep = fmt.Sprint(o.repeats[rcv])
		}
		fmt.Printf("%-9s %-13s %-10s %-10s %-10s %s\n", rcv, receiverTypes[rcv], cell("trigger"), cell("resolve"), cell("update"), rep)
	}
	fmt.Println("(got/want; an Alertmanager has no notes: it is sent no update)")
}
