package probe

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/intake/sender"
)

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func clone(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// paths lists every field path of v, depth first: a path is the keys and
// indexes from the root.
func paths(v any, prefix []any, out *[][]any) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := append(append([]any{}, prefix...), k)
			*out = append(*out, p)
			paths(x[k], p, out)
		}
	case []any:
		for i := range x {
			p := append(append([]any{}, prefix...), i)
			*out = append(*out, p)
			paths(x[i], p, out)
		}
	}
}

func pathString(p []any) string {
	var b strings.Builder
	for _, e := range p {
		switch k := e.(type) {
		case string:
			b.WriteString("." + k)
		case int:
			b.WriteString("[" + strconv.Itoa(k) + "]")
		}
	}
	return b.String()
}

// mutate returns a copy of doc with the field at p removed (remove) or
// set to v.
func mutate(doc any, p []any, remove bool, v any) any {
	c := clone(doc)
	parent := c
	for _, e := range p[:len(p)-1] {
		switch k := e.(type) {
		case string:
			parent = parent.(map[string]any)[k]
		case int:
			parent = parent.([]any)[k]
		}
	}
	switch k := p[len(p)-1].(type) {
	case string:
		m := parent.(map[string]any)
		if remove {
			delete(m, k)
		} else {
			m[k] = v
		}
	case int:
		a := parent.([]any)
		if remove {
			// An array element removed: the array is rebuilt without it.
			na := append(append([]any{}, a[:k]...), a[k+1:]...)
			if len(p) == 1 {
				return na
			}
			return mutate(c, p[:len(p)-1], false, na)
		}
		a[k] = v
	}
	return c
}

// otherType is a value of another JSON type than v.
func otherType(v any) (string, any) {
	switch v.(type) {
	case string:
		return "number", 7.0
	case float64:
		return "string", "7"
	case bool:
		return "string", "true"
	case map[string]any:
		return "array", []any{"x"}
	case []any:
		return "object", map[string]any{"x": "y"}
	}
	return "object", map[string]any{"x": "y"}
}

// format is the intake format serve reads fx's endpoint with (server's
// senderFormat, from the same registry).
func format(fx fixture) intake.Format {
	sd, ok := sender.Lookup(fx.sender)
	switch {
	case !ok:
		return intake.FormatAuto
	case !sd.Builtin:
		return intake.Format(sd.Name)
	case sd.Name == "alertmanager", sd.Name == "grafana":
		return intake.FormatAlertmanager
	case sd.Name == "prometheus":
		return intake.FormatPrometheus
	case sd.Name == "pagerduty":
		return intake.FormatPagerDuty
	}
	return intake.FormatAuto
}

// readable is what of an alert a person or the triage reads: the alert
// as parsed, without its id and position.
func readable(body []byte, fx fixture) []string {
	recs, err := intake.ParseBytes(body, intake.Options{Format: format(fx), Source: "probe"})
	again, err2 := intake.ParseBytes(body, intake.Options{Format: format(fx), Source: "probe"})
	if err != nil || err2 != nil || len(again) != len(recs) {
		return nil
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		a := r.Alert
		a.ID = ""
		a.Position = openrecall.Position{}
		if !a.Timestamp.Equal(again[i].Alert.Timestamp) { // a time the reader made up (now)
			a.Timestamp = time.Time{}
		}
		b, _ := json.Marshal(a)
		out[i] = string(b)
	}
	return out
}

// emptyPart matches an id with an empty part: a constant prefix (the
// sender's id missing) or a separator with nothing after it.
var emptyPart = regexp.MustCompile(`^[^-]*-$|[-/:@]$|[-/:@][-/:@]`)

// owner is the first accepted alert that got an id.
type owner struct {
	where, readable string
}

// mutations is family 3.
func (p *prober) mutations() *Family {
	f := &Family{Name: "field mutations", Expected: "2xx or 4xx with a message, never 5xx; no accepted alert lost; no distinct alert answered duplicate", Counts: map[string]int{}}
	// owners are the first alert of each id that a mutation gave a new id
	// to (the sender's id removed, nulled or emptied, or a field the
	// fallback hashes changed), by sender; asIs the ids of each fixture as
	// sent.
	owners := map[string]owner{}
	tok := p.srv.tok.all
	i := 0
	post := func(fx fixture, where string, body []byte, asIs map[int]string, missing bool) map[int]string {
		f.Probes++
		a := p.do("POST", fx.path, body, bearerHdr(tok))
		class, fail := classify(a)
		f.Counts[class]++
		if fail != "" {
			f.Failures = append(f.Failures, fail+" | "+where+": "+a.String())
			return nil
		}
		if a.code < 200 || a.code >= 300 {
			return nil
		}
		ans := p.record(where, a)
		ids := map[int]string{}
		read := readable(body, fx)
		for j, an := range ans {
			if an.Rejection != "" || an.AlertID == "" {
				continue
			}
			ids[j] = an.AlertID
			if asIs == nil || !missing || an.AlertID == asIs[j] || j >= len(read) {
				continue
			}
			key := fx.sender + "\x00" + an.AlertID
			o, seen := owners[key]
			switch {
			case !seen:
				owners[key] = owner{where: fmt.Sprintf("%s record %d", where, j), readable: read[j]}
			case an.Duplicate && read[j] != o.readable && emptyPart.MatchString(an.AlertID):
				f.Counts["distinct alert answered duplicate"]++
				f.Failures = append(f.Failures, fmt.Sprintf("distinct alerts share an id with an empty part (%s) | %s record %d answered duplicate of %s (id %q)", fx.sender, where, j, o.where, an.AlertID))
			case an.Duplicate && read[j] != o.readable:
				// A shared id built of the sender's other fields: often the
				// same alert in another state (resolved, a later firing).
				// Counted for a person to judge, not failed.
				f.Counts["duplicate of a differing alert, id not empty (judge)"]++
			}
		}
		return ids
	}
	for _, fx := range p.fixtures {
		var ps [][]any
		paths(fx.doc, nil, &ps)
		// The fixture as it is first: the owner of its ids.
		// (always sent: the mutations' ids are judged against it).
		i++
		asIs := post(fx, fx.sender+"/"+fx.file+" as is", fx.raw, nil, false)
		for _, pth := range ps {
			cur := get(fx.doc, pth)
			tname, tv := otherType(cur)
			muts := []struct {
				name   string
				remove bool
				v      any
			}{{"removed", true, nil}, {"null", false, nil}, {tname, false, tv}, {"empty string", false, ""}}
			for _, m := range muts {
				if !m.remove && reflect.DeepEqual(m.v, cur) {
					continue
				}
				i++
				if !p.keep(i - 1) {
					continue
				}
				body, _ := json.Marshal(mutate(fx.doc, pth, m.remove, m.v))
				post(fx, fmt.Sprintf("%s/%s %s %s", fx.sender, fx.file, pathString(pth), m.name), body, asIs, m.remove || m.v == nil || m.v == "")
			}
		}
		if err := p.srv.alive(p.c); err != nil {
			f.Failures = append(f.Failures, "server not alive | after "+fx.sender+"/"+fx.file+": "+err.Error())
			return f
		}
	}
	return f
}

func get(doc any, p []any) any {
	v := doc
	for _, e := range p {
		switch k := e.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}
