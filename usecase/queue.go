package usecase

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
)

// QueuePage is one page of what waits for a person (DESIGN §12a): the
// items the filter selects, in its order, from its cursor on.
type QueuePage struct {
	Items []openrecall.Waiting `json:"items"`
	// Next is the cursor of the page after this one (WaitingFilter.After),
	// empty on the last.
	Next string `json:"next,omitempty"`
	// Counts are over every item the filter selects, on every page.
	Counts QueueCounts `json:"counts"`
	// Version changes whenever the selected items or their resolved
	// state change: the cockpit's live queue reloads only then.
	Version string `json:"version"`
}

// QueueCounts count the items a queue filter selects.
type QueueCounts struct {
	Total    int `json:"total"`
	Attacks  int `json:"attacks"`
	Resolved int `json:"resolved"`
	// Severity counts by severity, unknown included.
	Severity map[openrecall.Severity]int `json:"severity"`
}

// QueuePage returns the page of the queue that f selects: analyses and open
// alert groups that wait (as Queue), Rule, Service and Search matched as
// case-insensitive substrings, State and Sort applied, from the cursor
// f.After on, at most f.Limit items (0: all). An invalid severity, state,
// sort or cursor wraps openrecall.ErrInvalid.
func (a *App) QueuePage(ctx context.Context, f openrecall.WaitingFilter) (QueuePage, error) {
	var p QueuePage
	if err := checkQueueFilter(f); err != nil {
		return p, err
	}
	after, err := parseCursor(f.After, f.Sort)
	if err != nil {
		return p, err
	}
	all, err := a.queueAll(ctx, openrecall.WaitingFilter{Severity: f.Severity, Search: f.Search})
	if err != nil {
		return p, err
	}
	rule, service, search := strings.ToLower(f.Rule), strings.ToLower(f.Service), strings.ToLower(f.Search)
	p.Counts.Severity = map[openrecall.Severity]int{}
	h := sha256.New()
	var picked []openrecall.Waiting
	for _, w := range all {
		if !containsFold(w.Identity.Rule, rule) || !containsFold(w.Identity.Service, service) || !searchMatches(w, search) {
			continue
		}
		if f.State == openrecall.QueueFiring && w.Resolved() || f.State == openrecall.QueueResolved && !w.Resolved() {
			continue
		}
		picked = append(picked, w)
		p.Counts.Total++
		p.Counts.Severity[w.Severity]++
		if w.Attack != "" {
			p.Counts.Attacks++
		}
		if w.Resolved() {
			p.Counts.Resolved++
		}
	}
	order := queueOrder(f.Sort)
	slices.SortStableFunc(picked, func(x, y openrecall.Waiting) int { return order(keyOf(x), keyOf(y)) })
	for _, w := range picked {
		size := 1
		if w.Group != nil {
			size = w.Group.Size
		}
		fmt.Fprintf(h, "%s\x00%d\x00%t\x00%s\n", w.AnalysisID, size, w.Resolved(), w.Severity)
	}
	p.Version = hex.EncodeToString(h.Sum(nil)[:8])
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(picked, *after, func(w openrecall.Waiting, k queueKey) int {
			if order(keyOf(w), k) <= 0 {
				return -1
			}
			return 1
		})
	}
	// The page: each analysis read again through WaitingFor, which shows
	// a row only as it was sealed — an edited one is left out (and logged
	// and counted by the store), the page filled from the next.
	p.Items = []openrecall.Waiting{}
	for i := start; i < len(picked); i++ {
		if f.Limit > 0 && len(p.Items) == f.Limit {
			p.Next = cursorOf(keyOf(p.Items[len(p.Items)-1]), f.Sort)
			break
		}
		w := picked[i]
		if w.Group == nil {
			full, err := a.Waiting.WaitingFor(ctx, w.AnalysisID)
			switch {
			case errors.Is(err, openrecall.ErrIntegrity):
				continue
			case err != nil:
				return p, err
			}
			full.Result, full.ResolvedAt = nil, w.ResolvedAt
			w = full
		}
		p.Items = append(p.Items, w)
	}
	return p, nil
}

// checkQueueFilter refuses a severity, state or sort the queue does not
// know, naming what it knows.
func checkQueueFilter(f openrecall.WaitingFilter) error {
	if f.Severity != "" && !f.Severity.Valid() {
		return fmt.Errorf("severity %q is not one of %s: %w", f.Severity, severityNames(), openrecall.ErrInvalid)
	}
	switch f.State {
	case "", openrecall.QueueFiring, openrecall.QueueResolved:
	default:
		return fmt.Errorf("state %q is not one of firing, resolved: %w", f.State, openrecall.ErrInvalid)
	}
	switch f.Sort {
	case "", openrecall.QueueUrgency, openrecall.QueueOldest, openrecall.QueueNewest:
	default:
		return fmt.Errorf("sort %q is not one of urgency, oldest, newest: %w", f.Sort, openrecall.ErrInvalid)
	}
	if f.Limit < 0 {
		return fmt.Errorf("limit %d: want 0 (all) or more: %w", f.Limit, openrecall.ErrInvalid)
	}
	return nil
}

func severityNames() string {
	names := make([]string, len(openrecall.Severities))
	for i, s := range openrecall.Severities {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// containsFold reports whether s contains lower (already lower case),
// ignoring case; an empty lower matches everything.
func containsFold(s, lower string) bool {
	return lower == "" || strings.Contains(strings.ToLower(s), lower)
}

// searchMatches reports whether the item's title, identity, service or a
// label (as key=value) contains lower, ignoring case.
func searchMatches(w openrecall.Waiting, lower string) bool {
	if lower == "" || containsFold(w.Title, lower) || containsFold(w.Identity.String(), lower) ||
		containsFold(w.Identity.Service, lower) || containsFold(w.AnalysisID, lower) {
		return true
	}
	for k, v := range w.Labels {
		if containsFold(k+"="+v, lower) {
			return true
		}
	}
	return false
}

// queueKey is what the queue's orders compare: an item's attack, resolved
// state, severity rank, age and id.
type queueKey struct {
	attack, resolved bool
	sev              int
	since            int64
	id               string
}

func keyOf(w openrecall.Waiting) queueKey {
	return queueKey{attack: w.Attack != "", resolved: w.Resolved(), sev: urgencyRank(w.Severity), since: w.Since.UnixNano(), id: w.AnalysisID}
}

// urgencyRank ranks a severity for the queue, most urgent first: a
// severity the sender did not say (unknown) counts as critical.
func urgencyRank(s openrecall.Severity) int {
	switch s {
	case openrecall.SeverityHigh:
		return 1
	case openrecall.SeverityMedium:
		return 2
	case openrecall.SeverityLow:
		return 3
	case openrecall.SeverityInfo:
		return 4
	}
	return 0
}

// queueOrder is the comparison of sort: every order ends on the id, so it
// is total and a cursor names one place in it.
//
// In the urgency order the newest of a class comes first: a critical that
// just arrived is what a person on shift has not seen yet, and the older
// ones stay above everything less severe.
func queueOrder(sort string) func(x, y queueKey) int {
	switch sort {
	case openrecall.QueueUrgency:
		return func(x, y queueKey) int {
			if x.attack != y.attack {
				return boolFirst(x.attack, y.attack)
			}
			if x.resolved != y.resolved {
				return boolFirst(!x.resolved, !y.resolved)
			}
			return cmp.Or(cmp.Compare(x.sev, y.sev), cmp.Compare(y.since, x.since), strings.Compare(y.id, x.id))
		}
	case openrecall.QueueNewest:
		return func(x, y queueKey) int {
			return cmp.Or(cmp.Compare(y.since, x.since), strings.Compare(y.id, x.id))
		}
	}
	return func(x, y queueKey) int {
		return cmp.Or(cmp.Compare(x.since, y.since), strings.Compare(x.id, y.id))
	}
}

// boolFirst orders true before false.
func boolFirst(x, y bool) int {
	switch {
	case x == y:
		return 0
	case x:
		return -1
	}
	return 1
}

// cursorOf writes k as an opaque cursor of sort's order.
func cursorOf(k queueKey, sort string) string {
	s := strings.Join([]string{sortName(sort), flag(k.attack), flag(k.resolved), strconv.Itoa(k.sev),
		strconv.FormatInt(k.since, 10), k.id}, "~")
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

// parseCursor reads a cursor cursorOf wrote for the same order; empty is
// the first page.
func parseCursor(c, sort string) (*queueKey, error) {
	if c == "" {
		return nil, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("cursor %q: %s; start again from the first page: %w", c, why, openrecall.ErrInvalid)
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, bad("not a cursor of the queue")
	}
	parts := strings.SplitN(string(b), "~", 6)
	if len(parts) != 6 {
		return nil, bad("not a cursor of the queue")
	}
	if parts[0] != sortName(sort) {
		return nil, bad("it pages the " + parts[0] + " order, not " + sortName(sort))
	}
	sev, err1 := strconv.Atoi(parts[3])
	since, err2 := strconv.ParseInt(parts[4], 10, 64)
	if err1 != nil || err2 != nil || parts[1] != "0" && parts[1] != "1" || parts[2] != "0" && parts[2] != "1" {
		return nil, bad("not a cursor of the queue")
	}
	return &queueKey{attack: parts[1] == "1", resolved: parts[2] == "1", sev: sev, since: since, id: parts[5]}, nil
}

func sortName(sort string) string {
	if sort == "" {
		return openrecall.QueueOldest
	}
	return sort
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// queueAll is every item that waits, as f selects in the store (its
// severity), analyses and open groups, in no particular order.
func (a *App) queueAll(ctx context.Context, f openrecall.WaitingFilter) ([]openrecall.Waiting, error) {
	if a.Waiting == nil {
		return nil, errNoWaiting
	}
	ws, err := a.Waiting.AwaitingIndex(ctx, f)
	if err != nil || a.Groups == nil {
		return ws, err
	}
	gs, err := a.Groups.WaitingGroups(ctx, f)
	if err != nil {
		return nil, err
	}
	for _, g := range gs {
		w, err := a.groupWaiting(ctx, g)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}
