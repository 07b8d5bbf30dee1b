package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// hostileBody is one body of family 2.
type hostileBody struct {
	name  string
	body  func() []byte
	ctype string
	// want413: the body is over the server's max and must be answered 413.
	want413 bool
}

func hostileBodies() []hostileBody {
	fixed := func(s string) func() []byte { return func() []byte { return []byte(s) } }
	return []hostileBody{
		{name: "empty", body: fixed("")},
		{name: "whitespace", body: fixed(" \n\t\r\n ")},
		{name: "null", body: fixed("null")},
		{name: "number", body: fixed("42")},
		{name: "negative float", body: fixed("-1.5e308")},
		{name: "string", body: fixed(`"disk full"`)},
		{name: "true", body: fixed("true")},
		{name: "array of junk", body: fixed(`[1,"a",null,true,[],{},[[[]]],-0.0]`)},
		{name: "empty object", body: fixed("{}")},
		{name: "invalid UTF-8", body: fixed("{\"title\":\"\xff\xfe\xc3\x28 disk\"}")},
		{name: "NUL bytes", body: fixed("{\"title\":\"a\x00b\"}\x00\x00")},
		{name: "JSON nested 10,000 deep", body: func() []byte {
			return []byte(strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000))
		}},
		{name: "arrays nested 10,000 deep", body: func() []byte {
			return []byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000))
		}},
		{name: "truncated JSON", body: fixed(`{"title":"disk full","labels":{"a":`)},
		{name: "duplicate keys", body: fixed(`{"title":"a","title":"b","id":"x1","id":{"n":1}}`)},
		{name: "huge numbers", body: fixed(`{"title":"n","severity":1e999999,"id":123456789012345678901234567890,"timestamp":9e99}`)},
		{name: "wrong Content-Type", body: fixed(`{"title":"disk full on db-1"}`), ctype: "application/x-www-form-urlencoded"},
		{name: "XML", body: fixed(`<?xml version="1.0"?><alert>x</alert>`), ctype: "application/xml"},
		{name: "20 MiB body", body: func() []byte {
			var b bytes.Buffer
			b.WriteString(`{"title":"big","text":"`)
			b.Write(bytes.Repeat([]byte("x"), 20<<20-40))
			b.WriteString(`"}`)
			return b.Bytes()
		}, want413: 20<<20 > MaxBody},
		{name: "body over the server's max", body: func() []byte {
			return append([]byte("["), bytes.Repeat([]byte(" "), MaxBody)...)
		}, want413: true},
	}
}

// writeEndpoints are the ingest and write endpoints of family 2.
func writeEndpoints() []string {
	out := []string{"/api/v1/alerts", "/api/v2/alerts", "/v2/enqueue"}
	for _, s := range senders {
		out = append(out, "/api/v1/alerts/"+s)
	}
	return append(out, "/api/v1/retain", "/api/v1/groups/g1/decision", "/api/v1/exceptions", "/api/v1/exceptions/e1/revoke")
}

// jsonTypes are a field's values of every JSON type.
var jsonTypes = []struct {
	name string
	v    any
}{{"null", nil}, {"true", true}, {"number", 12345.5}, {"string", "probe-string"}, {"empty string", ""}, {"array", []any{"a", 1.0}}, {"object", map[string]any{"k": "v"}}}

// hostile is family 2.
func (p *prober) hostile() *Family {
	f := &Family{Name: "hostile bodies", Expected: "4xx with a message (413 over the max), 2xx or 503+Retry-After; never 5xx; every 2xx analysed", Counts: map[string]int{}}
	i := 0
	tok := p.srv.tok.all
	for _, ep := range writeEndpoints() {
		for _, hb := range hostileBodies() {
			i++
			if !p.keep(i - 1) {
				continue
			}
			f.Probes++
			hdr := bearerHdr(tok)
			if hb.ctype != "" {
				hdr["Content-Type"] = hb.ctype
			}
			a := p.do("POST", ep, hb.body(), hdr)
			p.judge(f, fmt.Sprintf("POST %s %s", ep, hb.name), a, hb.want413)
		}
		if err := p.srv.alive(p.c); err != nil {
			f.Failures = append(f.Failures, "server not alive | after "+ep+": "+err.Error())
			return f
		}
	}
	// Each sender's first fixture with each top-level field set to each JSON type.
	done := map[string]bool{}
	for _, fx := range p.fixtures {
		m, ok := fx.doc.(map[string]any)
		if done[fx.sender] || !ok {
			continue
		}
		done[fx.sender] = true
		for _, k := range sortedKeys(m) {
			for _, jt := range jsonTypes {
				i++
				if !p.keep(i - 1) {
					continue
				}
				f.Probes++
				c := clone(m).(map[string]any)
				c[k] = jt.v
				body, _ := json.Marshal(c)
				a := p.do("POST", fx.path, body, bearerHdr(tok))
				p.judge(f, fmt.Sprintf("POST %s %s with %s = %s", fx.path, fx.file, k, jt.name), a, false)
			}
		}
	}
	return f
}

// judge classifies a write answer into f.
func (p *prober) judge(f *Family, where string, a answer, want413 bool) {
	class, fail := classify(a)
	f.Counts[class]++
	switch {
	case fail != "":
		f.Failures = append(f.Failures, fail+" | "+where+": "+a.String())
	case want413 && a.code != 413:
		f.Failures = append(f.Failures, fmt.Sprintf("over the max, not 413 | %s: %s", where, a))
	case a.code >= 200 && a.code < 300:
		p.record(where, a)
	}
}
