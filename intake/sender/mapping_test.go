package sender

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

// TestBuiltinMappings loads every embedded mapping: each is valid, named
// as its file, and in All.
func TestBuiltinMappings(t *testing.T) {
	senders, err := loadMappings(builtinFS, "mappings", "mappings")
	if err != nil {
		t.Fatal(err)
	}
	files, err := fs.Glob(builtinFS, "mappings/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(senders) != len(files) || len(senders) == 0 {
		t.Fatalf("%d senders from %d files", len(senders), len(files))
	}
	names := Names()
	for i, s := range senders {
		if want := strings.TrimSuffix(filepath.Base(files[i]), ".yaml"); s.Name != want {
			t.Errorf("%s defines %q: name a mapping file after its sender", files[i], s.Name)
		}
		if !slices.Contains(names, s.Name) {
			t.Errorf("%s is not in All", s.Name)
		}
		if s.Match == nil || s.Map == nil || s.Builtin {
			t.Errorf("%s: a mapping is an adapter with Match and Map", s.Name)
		}
	}
}

// writeMapping writes a mapping file into a new directory and returns the
// directory.
func writeMapping(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLoadMappingsErrors: every error names the file, the line and the
// field, and a directory with an error loads nothing.
func TestLoadMappingsErrors(t *testing.T) {
	const head = "name: acme\nrecognise: [has: a]\n"
	tests := []struct {
		name, body string
		want       string // after "DIR/bad.yaml:"
	}{
		{"unknown key", "name: acme\nrecognize: [has: a]\nparts: {title: a}\n",
			`2: recognize: unknown key (known: ` + strings.Join(topKeys, ", ") + `)`},
		{"unknown part", head + "parts:\n  title: a\n  titel: b\n",
			`5: parts.titel: unknown key`},
		{"unknown candidate key", head + "parts:\n  title: {path: a, fallback: b}\n",
			`4: parts.title.fallback: unknown key`},
		{"unknown name in an expression", head + "parts:\n  title: [msg, {expr: 'hb.msg', as: msg}]\n",
			`4: parts.title[1].expr: unknown name hb (column 1)`},
		{"line inside a block expression", head + "parts:\n  title:\n    expr: |\n      str(\"a\") +\n        nope\n    as: a\n",
			`7: parts.title.expr: unknown name nope (column 3)`},
		{"wrong arguments", head + "parts:\n  title: {expr: 'str(1)', as: a}\n",
			`4: parts.title.expr: cannot use int as argument (type string) to call str (column 5)`},
		{"bad keys", "name: acme\nkeys: folded\nrecognise: [has: a]\nparts: {title: a}\n",
			`2: keys: "folded": want fold (the payload's member names matched folded) or exact`},
		{"missing name", "recognise: [has: a]\nparts: {title: a}\n",
			`1: name: missing: the sender's name`},
		{"bad name", "name: Acme Monitor\nrecognise: [has: a]\nparts: {title: a}\n",
			`1: name: "Acme Monitor": want a lowercase URL path segment`},
		{"bad path", "name: acme\nrecognise: [has: alert..id]\nparts: {title: a}\n",
			`2: recognise[0].has: bad path "alert..id": an empty key (two dots, or a dot at an end)`},
		{"blank: keep is for one object's members", head + "parts:\n  title: a\n  labels: {\"*\": {from: l, keys: 'x', blank: keep}}\n",
			`5: parts.labels.*.blank: keep copies every member of one object as sent: from the path of an object, without keys, except or join`},
		{"numbers: ms outside a timestamp", head + "parts:\n  title: {path: a, numbers: ms}\n",
			`4: parts.title: numbers: ms is for a timestamp's candidates`},
		{"numbers other than ms", head + "parts:\n  title: a\n  timestamp: {path: at, numbers: us}\n",
			`5: parts.timestamp.numbers: "us": want ms (a number is unix seconds, milliseconds above 1e12)`},
		{"blank other than keep or empty", head + "parts:\n  title: a\n  labels: {t: {path: t, blank: skip}}\n",
			`5: parts.labels.t.blank: "skip": want keep (the value as read, not trimmed) or empty (keep, an empty value kept too)`},
		{"blank: keep outside a label", head + "parts:\n  title: {path: a, blank: keep}\n",
			`4: parts.title: blank: keep is for the candidates of a label or annotation of one key`},
		{"bad path in compact", head + "parts:\n  title: {expr: 'compact(\"a..b\")', as: a}\n",
			`4: parts.title.expr: compact: bad path "a..b": an empty key (two dots, or a dot at an end)`},
		{"bad path in an expression", head + "parts:\n  title: {expr: 'str(\"a.\")', as: a}\n",
			`4: parts.title.expr: str: bad path "a.": an empty key`},
		{"bad arrays", head + "arrays: split\nparts: {title: a}\n",
			`3: arrays: "split": want blank (a path holding an array reads as blank) or join`},
		{"join with every element's labels", head + "parts:\n  title: a\n  labels: {\"*\": {from: \"t[].l\", join: \",\"}}\n",
			`5: parts.labels.*: join goes with the path of one object`},
		{"bad path of every element's labels", head + "parts:\n  title: a\n  labels: {\"*\": \"t[]l\"}\n",
			`5: parts.labels.*: bad path "t[]l": a key after [] follows a dot`},
		{"a condition that is not a bool", "name: acme\nrecognise: ['str(\"kind\")']\nparts: {title: a}\n",
			`2: recognise[0]: expected bool, but got string: a condition is true or false`},
		{"a status condition that is not a bool", head + "parts:\n  title: a\n  status: {resolved: 'lower(str(\"state\"))'}\n",
			`5: parts.status.resolved: expected bool, but got string: a condition is true or false`},
		{"a candidate that is not text", head + "parts:\n  title: {expr: 'has(\"a\")', as: a}\n",
			`4: parts.title.expr: expected string, but got bool: a candidate gives text`},
		{"a let that is not text", "name: acme\nlet: {ok: {expr: 'has(\"a\")'}}\nrecognise: [ok]\nparts: {title: $ok}\n",
			`4: parts.title: let "ok" is a bool, not text`},
		{"unknown let", head + "parts: {title: $check}\n",
			`3: parts.title: unknown let "check"`},
		{"an expression without as", head + "parts:\n  rule: {expr: 'str(\"a\") + str(\"b\")'}\n  title: a\n",
			`4: parts.rule.as: missing: an expression says which field it reads`},
		{"no recognise", "name: acme\nparts: {title: a}\n",
			`1: recognise: missing`},
		{"two tests in one condition", "name: acme\nrecognise: [{has: a, is: {a: object}}]\nparts: {title: a}\n",
			`2: recognise[0]: one test a condition`},
		{"unknown kind", "name: acme\nrecognise: [is: {a: text}]\nparts: {title: a}\n",
			`2: recognise[0].is.a: "text": want one of null, object, array, string, number, bool`},
		{"bad severity", "name: acme\nseverity: {P1: urgent}\nrecognise: [has: a]\nparts: {title: a}\n",
			`2: severity.P1: "urgent": want critical, high, medium, low or info`},
		{"level not in the table", "name: acme\nseverity: {P1: high}\nlevels: [P1, P2]\nrecognise: [has: a]\nparts: {title: a}\n",
			`3: levels[1]: "P2" is not in the severity table`},
		{"unknown link", head + "parts:\n  title: a\n  links: {home: url}\n",
			`5: parts.links.home: unknown link (known: source, runbook, dashboard, panel, silence, alertmanager)`},
		{"tag without tags", head + "parts:\n  title: a\n  service: {tag: service}\n",
			`5: parts.service.tag: the mapping declares no tags`},
		{"let shadowing a function", "name: acme\nlet: {str: a}\nrecognise: [has: a]\nparts: {title: a}\n",
			`2: let.str: "str" is the name of a function or variable of the expressions`},
		{"evidence in odd numbers", head + "parts:\n  title: a\n  text: {expr: 'evidence(\"check\", str(\"a\"), \"host\")'}\n",
			`5: parts.text.expr: evidence takes pairs: key, value, key, value, …`},
		{"evidenceOf of no list", head + "parts:\n  title: a\n  text: {expr: 'evidenceOf(\"check\")'}\n",
			`5: parts.text.expr: cannot use string as argument`},
		{"utcTime of a number", head + "parts:\n  title: a\n  text: {expr: 'utcTime(1)'}\n",
			`5: parts.text.expr: cannot use int as argument`},
		{"now is no function of a mapping", head + "parts:\n  title: a\n  text: {expr: 'string(now())'}\n",
			`5: parts.text.expr: unknown name now`},
		{"recognise reading an item's let", "name: acme\nitems: alerts\nlet: {check: name}\nrecognise: ['check != \"\"']\nparts: {title: $check}\n",
			`4: recognise[0]: unknown name check (column 1)`},
		{"a bad regular expression", head + "parts:\n  title: {expr: 'reFind(str(\"a\"), \"(x\")', as: a}\n",
			`4: parts.title.expr: reFind: error parsing regexp: missing closing ): ` + "`(x`"},
		{"a pattern that is no constant", head + "parts:\n  title: {expr: 'reReplace(str(\"a\"), str(\"b\"), \"\")', as: a}\n",
			`4: parts.title.expr: reReplace: the pattern is a constant string (compiled when the mapping loads)`},
		{"a bad index", "name: acme\nrecognise: [has: \"a[x].b\"]\nparts: {title: a}\n",
			`2: recognise[0].has: bad path "a[x].b": an index is [N], N a number from 0`},
		{"a key after an index without a dot", "name: acme\nrecognise: [has: \"a[0]b\"]\nparts: {title: a}\n",
			`2: recognise[0].has: bad path "a[0]b": a key after an index follows a dot (a[0].b)`},
		{"a bad pluck path", head + "parts:\n  title: a\n  text: {expr: 'join(pluck(\"a[]b\"), \",\")'}\n",
			`5: parts.text.expr: pluck: bad path "a[]b": a key after [] follows a dot (a[].b)`},
		{"then reading a let it cannot", head + "parts:\n  title: {path: a, then: 'nope + value'}\n",
			`4: parts.title.then: unknown name nope (column 1)`},
		{"then giving no text", head + "parts:\n  title: {path: a, then: 'value == \"x\"'}\n",
			`4: parts.title.then: expected string, but got bool: a candidate gives text`},
		{"a let inside each", "name: acme\nlet: {x: a}\nrecognise: [has: a]\nparts:\n  title: {each: list, path: $x}\n",
			`5: parts.title.path: inside each a candidate reads the element: lets are the alert's`},
		{"pick without each", head + "parts:\n  title: {path: a, pick: last}\n",
			`4: parts.title.pick: pick goes with each`},
		{"a bad pick", head + "parts:\n  title: {each: list, path: a, pick: middle}\n",
			`4: parts.title.pick: "middle": want first or last`},
		{"origin and as", head + "parts:\n  title: {path: a, as: b, origin: '\"c\"'}\n",
			`4: parts.title.origin: as or origin, not both`},
		{"an origin giving no text", head + "parts:\n  title: {path: a, origin: 'has(\"a\")'}\n",
			`4: parts.title.origin: expected string, but got bool: a candidate gives text`},
		{"a bad open decode", head + "open: {path: m, when: [has: m], decode: xml}\nparts: {title: a}\n",
			`3: open.decode: "xml": want json`},
		{"items from an empty list", "name: acme\nrecognise: [has: a]\nitems: {from: []}\nparts: {title: a}\n",
			`3: items.from: an empty list`},
		{"decode without each", head + "parts:\n  title: {path: a, decode: json}\n",
			`4: parts.title.decode: decode goes with each`},
		{"a bad decode", head + "parts:\n  title: {each: list, path: a, decode: yaml}\n",
			`4: parts.title.decode: "yaml": want json`},
		{"each inside each", head + "parts:\n  title: {each: list, of: [{each: inner, path: a}]}\n",
			`4: parts.title.of[0].each: each inside each`},
		{"a bad severity range", "name: acme\nseverity: {\"9..1\": high}\nrecognise: [has: a]\nparts: {title: a}\n",
			`2: severity.9..1: "9..1": a range is N..M, N.. or ..M of whole numbers, N <= M`},
		{"a blank blank", "name: acme\nblank: [\" \"]\nrecognise: [has: a]\nparts: {title: a}\n",
			`2: blank[0]: a blank value is blank already`},
		{"self without only", "name: acme\nitems: {from: alerts, self: true}\nrecognise: [has: a]\nparts: {title: a}\n",
			`2: items.self: self needs only`},
		{"items without from", "name: acme\nitems: {only: [has: a]}\nrecognise: [has: a]\nparts: {title: a}\n",
			`2: items.from: missing: the path of the array of alerts`},
		{"only reading a let", "name: acme\nlet: {x: a}\nitems: {from: alerts, only: ['x != \"\"']}\nrecognise: [has: a]\nparts: {title: a}\n",
			`3: items.only[0]: unknown name x (column 1)`},
		{"open without when", head + "open: {path: inner}\nparts: {title: a}\n",
			`3: open: want {path: the payload the envelope carries, when: conditions that make it an envelope}`},
		{"open decode not json", head + "open: {path: inner, decode: yaml, when: [has: inner]}\nparts: {title: a}\n",
			`3: open.decode: "yaml": want json (the payload sent as JSON text)`},
		{"member without in", head + "parts:\n  title: {member: a.b}\n",
			`4: parts.title: member and in go together`},
		{"evidence skip not a list", head + "parts:\n  title: a\n  text: {join: [], evidence: {\"*\": {from: f, skip: \"<NA>\"}}}\n",
			`5: parts.text.evidence.*.skip: want a list of values that make no line`},
		{"reject without reason", head + "reject: {when: 'true'}\nparts: {title: a}\n",
			`3: reject: want {when: conditions, reason: an expression giving the reason}`},
		{"a bad label key pattern", head + "parts:\n  title: a\n  labels: {\"*\": {from: details, keys: \"(\"}}\n",
			`5: parts.labels.*.keys: error parsing regexp`},
		{"a bad label blank", "name: acme\ntags: tags\nrecognise: [has: a]\nparts:\n  title: a\n  labels: {\"*\": {from: $tags, blank: drop}}\n",
			`6: parts.labels.*.blank: "drop": want skip`},
		{"evidence key without value", head + "parts:\n  title: a\n  text: {join: [], evidence: {\"f *\": {from: fields, key: k}}}\n",
			`5: parts.text.evidence.f *: key and value go together`},
		{"an evidence limit of zero", head + "parts:\n  title: a\n  text: {join: [], evidence: {\"*\": {from: d, limit: 0}}}\n",
			`5: parts.text.evidence.*.limit: want a number of lines, at least 1`},
		{"pair without pairs", head + "parts:\n  title: {pair: name}\n",
			`4: parts.title.pair: the mapping declares no pairs (pairs: …)`},
		{"pairs without value", "name: acme\npairs: {from: fields, key: k}\nrecognise: [has: a]\nparts: {title: a}\n",
			`2: pairs: want {from: the array of pairs, key: the member holding a key, value: the member holding its value}`},
		{"a bad blank pattern", "name: acme\nblank: [{matches: \"(\"}]\nrecognise: [has: a]\nparts: {title: a}\n",
			`2: blank[0].matches: error parsing regexp`},
		{"labels from an expression that is no list", head + "parts:\n  title: a\n  labels: {\"*\": {expr: 'str(\"a\")'}}\n",
			`5: parts.labels.*.expr: want a list of "key:value" texts, not a string`},
		{"an except with a star inside", head + "parts:\n  title: a\n  text: {join: [], evidence: {\"*\": {from: d, except: [\"a*b\"]}}}\n",
			`5: parts.text.evidence.*.except[0]: "a*b": a * only at the end (a prefix)`},
		{"one version", "name: acme\nversions:\n  - recognise: [has: a]\n    parts: {title: a}\n",
			`3: versions: want a list of at least two versions`},
		{"parts beside versions", "name: acme\nparts: {title: a}\nversions:\n  - {recognise: [has: a], parts: {title: a}}\n  - {recognise: [has: b], parts: {title: b}}\n",
			`2: parts: a mapping with versions says it in each version (versions[].parts)`},
		{"a version without recognise", "name: acme\nversions:\n  - {recognise: [has: a], parts: {title: a}}\n  - parts: {title: b}\n",
			`4: versions[1].recognise: missing`},
		{"an unknown key of a version", "name: acme\nversions:\n  - {recognise: [has: a], parts: {title: a}}\n  - {recognise: [has: b], parts: {title: b}, open: {path: x}}\n",
			`4: versions[1].open: unknown key (known: recognise, when, reject, items, tags, pairs, let, parts)`},
		{"an error inside a version", "name: acme\nversions:\n  - {recognise: [has: a], parts: {title: a}}\n  - recognise: [has: b]\n    parts: {title: {expr: 'nope', as: b}}\n",
			`5: versions[1].parts.title.expr: unknown name nope (column 1)`},
		{"a version's when reading a let", "name: acme\nversions:\n  - {recognise: [has: a], parts: {title: a}}\n  - recognise: [has: b]\n    let: {x: b}\n    when: ['x != \"\"']\n    parts: {title: $x}\n",
			`6: versions[1].when[0]: unknown name x (column 1)`},
		{"a let of another version", "name: acme\nversions:\n  - {recognise: [has: a], let: {x: a}, parts: {title: $x}}\n  - {recognise: [has: b], parts: {title: $x}}\n",
			`4: versions[1].parts.title: unknown let "x"`},
		{"evidence lines from an expression that is no list", head + "parts:\n  title: a\n  text: {join: [], evidence: {\"m *\": {expr: 'str(\"a\")'}}}\n",
			`5: parts.text.evidence.m *.expr: want a list of [name, value] pairs, not a string`},
		{"evidence lines from an expression and a path", head + "parts:\n  title: a\n  text: {join: [], evidence: {\"m *\": {expr: '[]', from: a}}}\n",
			`5: parts.text.evidence.m *: expr goes alone: it gives the lines`},
		{"an evidence list of no mappings", head + "parts:\n  title: a\n  text: {join: [], evidence: [a]}\n",
			`5: parts.text.evidence[0]: want a mapping of line keys to candidate lists`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeMapping(t, map[string]string{"bad.yaml": tt.body, "good.yaml": "name: good\nrecognise: [has: a]\nparts: {title: a}\n"})
			got, err := LoadMappings(dir)
			if err == nil {
				t.Fatalf("loaded %d senders, want an error", len(got))
			}
			if got != nil {
				t.Errorf("an error and %d senders: want none", len(got))
			}
			want := filepath.Join(dir, "bad.yaml") + ":" + tt.want
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, want)
			}
		})
	}
	t.Run("a name twice", func(t *testing.T) {
		const body = "name: acme\nrecognise: [has: a]\nparts: {title: a}\n"
		dir := writeMapping(t, map[string]string{"a.yaml": body, "b.yml": body})
		_, err := LoadMappings(dir)
		if want := filepath.Join(dir, "b.yml") + `:1: name: "acme" is already the name of ` + filepath.Join(dir, "a.yaml"); err == nil || err.Error() != want {
			t.Errorf("error %v, want %s", err, want)
		}
	})
	t.Run("no directory", func(t *testing.T) {
		if _, err := LoadMappings(filepath.Join(t.TempDir(), "none")); err == nil {
			t.Error("no error")
		}
	})
}

// acmeMapping is a team's mapping of a sender with items, exercising every
// part of the format; acmePayload is one of its payloads.
const acmeMapping = `# Acme Monitor: a webhook with an array of alerts.
name: acme
display: Acme Monitor
episode: true
severity: {P1: critical, P2: high, P3: medium}
doc: {point: Webhooks > Add, title: title, rule: check.name, id: account + id}
recognise:
  - equals: {source: acme}
  - is: {alerts: array}
items: alerts
tags: tags
let:
  check: [check.name, check_name]
parts:
  title: [title, {expr: 'check + " failed"', as: check.name}]
  severity: priority
  rule: $check
  service: [{tag: service}, /service]
  environment: /env
  id: {of: [/account, id], prefix: acme-, sep: ":"}
  host: {expr: 'urlHost(str("target"))'}
  timestamp: started
  status:
    resolved: [{one_of: {state: [ok, resolved]}}]
    acknowledged: 'str("state") == "acked"'
  labels:
    "*": details
    "tag_*": $tags
    team: /team
    shard: {expr: 'split(str("id"), "")[9]'}   # out of range: blank, never an error
  entities:
    user: actor.user
  links:
    source: url
    runbook: [runbook, /runbook]
    silence: silence
  text:
    join: [message]
    evidence:
      check: $check
      target: target
`

const acmePayload = `{"source": "acme", "account": "42", "service": "billing", "env": "prod", "team": "payments",
 "runbook": "https://wiki.example.com/rb",
 "alerts": [
  {"id": "a1", "title": "Disk full", "priority": "P1", "check": {"name": "disk"}, "tags": ["service:api", "region:eu", "critical"],
   "target": "https://api.example.com:8443/x", "started": "2024-05-01T10:00:00+0000", "state": "firing",
   "details": {"disk": "/dev/sda", "pct": 97, "none": null}, "actor": {"user": "root"},
   "url": "https://acme.example.com/a/a1", "silence": "ftp://acme.example.com/s", "message": "disk at 97%"},
  {"id": "a2", "check_name": "cpu", "priority": "P9", "state": "OK", "started": 1714557600},
  {"id": "a3", "check_name": "mem", "state": "acked"}
 ]}`

// TestLoadMappingsEndToEnd reads a team's mapping from a directory and a
// payload through it: recognised by Read, one event per item, every part.
func TestLoadMappingsEndToEnd(t *testing.T) {
	dir := writeMapping(t, map[string]string{"acme.yaml": acmeMapping, "README.md": "not a mapping"})
	senders, err := LoadMappings(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(senders) != 1 {
		t.Fatalf("%d senders, want 1", len(senders))
	}
	s := senders[0]
	if s.Name != "acme" || s.Display != "Acme Monitor" || !s.Episode || s.Security || s.Doc.Point != "Webhooks > Add" {
		t.Errorf("sender %+v", s)
	}
	if diff := cmp.Diff([]string{"P1", "P2", "P3"}, s.Levels); diff != "" {
		t.Errorf("levels (-want +got):\n%s", diff)
	}
	if got := s.Severity(" p-1 "); got != openrecall.SeverityCritical {
		t.Errorf("severity of p-1: %s", got)
	}
	if got := s.Severity("P9"); got != openrecall.SeverityUnknown {
		t.Errorf("severity of P9: %s, want unknown (unlisted)", got)
	}
	v, err := Parse([]byte(acmePayload))
	if err != nil {
		t.Fatal(err)
	}
	got, events, err := Read(append(All(), s), v)
	if err != nil || got.Name != "acme" {
		t.Fatalf("read by %q: %v", got.Name, err)
	}
	for i := range events {
		events[i].PayloadID = ""
	}
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	want := []Event{{
		ID: "acme-42:a1", Title: "Disk full", Text: "disk at 97%\n\ncheck: disk\ntarget: https://api.example.com:8443/x",
		Severity: "P1", Service: "api", Environment: "prod", Host: "api.example.com", Rule: "disk",
		Status: openrecall.StatusFiring, Timestamp: at,
		Labels:   map[string]string{"disk": "/dev/sda", "pct": "97", "tag_service": "api", "tag_region": "eu", "tag_critical": "true", "team": "payments"},
		Entities: map[string]string{"user": "root"},
		Links:    map[string]string{"source": "https://acme.example.com/a/a1", "runbook": "https://wiki.example.com/rb"},
		Origin: map[string]string{"title": "title", "severity": "priority", "service": "tags", "environment": "env",
			"rule": "check.name", "id": "account+id"},
	}, {
		ID: "acme-42:a2", Title: "cpu failed", Text: "check: cpu", Severity: "P9", Service: "billing", Environment: "prod",
		Rule: "cpu", Status: openrecall.StatusResolved, Timestamp: at,
		Labels: map[string]string{"team": "payments"},
		Links:  map[string]string{"runbook": "https://wiki.example.com/rb"},
		Origin: map[string]string{"title": "check.name", "severity": "priority", "service": "service", "environment": "env",
			"rule": "check_name", "id": "account+id"},
	}, {
		ID: "acme-42:a3", Title: "mem failed", Text: "check: mem", Service: "billing", Environment: "prod",
		Rule: "mem", Status: openrecall.StatusAcknowledged,
		Labels: map[string]string{"team": "payments"},
		Links:  map[string]string{"runbook": "https://wiki.example.com/rb"},
		Origin: map[string]string{"title": "check.name", "service": "service", "environment": "env",
			"rule": "check_name", "id": "account+id"},
	}}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for _, body := range []string{`{"source": "acme"}`, `{"source": "other", "alerts": []}`, `{"alerts": [{"id": "x"}]}`} {
		if v, _ := Parse([]byte(body)); s.Match(v) {
			t.Errorf("%s recognised as acme's", body)
		}
	}
	// Items that are no array and no object: no alert.
	if v, _ := Parse([]byte(`{"source": "acme", "alerts": "none"}`)); true {
		if events, err := s.Map(v); len(events) != 0 || err != nil {
			t.Errorf("alerts: \"none\" read as %d events, %v", len(events), err)
		}
	}
}

// TestMappingConcurrent reads with one mapping from many goroutines (run
// with -race): a mapping's Match and Map are safe for concurrent use.
func TestMappingConcurrent(t *testing.T) {
	s := mapped("checkly")
	bodies := fixtureBodies(t, "checkly")
	want := make([][]Event, len(bodies))
	for i, b := range bodies {
		v, _ := Parse(b)
		want[i], _ = s.Map(v)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 20; r++ {
				for i, b := range bodies {
					v, _ := Parse(b)
					if !s.Match(v) {
						t.Errorf("fixture %d not matched", i)
					}
					got, _ := s.Map(v)
					if !cmp.Equal(want[i], got) {
						t.Errorf("fixture %d read otherwise", i)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// fixtureBodies returns the payloads of a sender's fixtures.
func fixtureBodies(t testing.TB, name string) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "senders", name, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, f := range files {
		if base := filepath.Base(f); base == "golden.json" || base == "identity.json" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		t.Fatalf("no fixtures of %s", name)
	}
	return out
}

// TestMappingLayoutIndependent is P48 for mappings: a mapping reads a
// payload the same whatever the order of its object members and the layout
// of its text — every fixture of every built-in mapping, and a team's
// mapping with items, written with members as written, reversed, sorted and
// shuffled, compact, indented with spaces, tabs or CRLF, or spaced.
func TestMappingLayoutIndependent(t *testing.T) {
	type payload struct {
		s    Sender
		name string
		body []byte
	}
	var payloads []payload
	builtins, err := builtinMappings()
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range builtins {
		for i, b := range fixtureBodies(t, name) {
			// A sender intake's own reader reads (Grafana) hands its
			// mapping only the shapes it reads (the legacy notification):
			// its other fixtures are the reader's.
			if bs, _ := Lookup(name); bs.Builtin {
				if v, err := Parse(b); err == nil && !s.Match(v) {
					continue
				}
			}
			// A fixture in an envelope (an SNS Notification): the
			// payload it carries, which the mapping reads.
			if v, err := Parse(b); err == nil && !s.Match(v) && s.Open != nil {
				if inner, ok := s.Open(v); ok {
					b = []byte(inner.Compact())
				}
			}
			payloads = append(payloads, payload{s, fmt.Sprintf("%s/%d", name, i), b})
		}
	}
	team, err := LoadMappings(writeMapping(t, map[string]string{"acme.yaml": acmeMapping}))
	if err != nil {
		t.Fatal(err)
	}
	payloads = append(payloads, payload{team[0], "acme", []byte(acmePayload)})
	rng := rand.New(rand.NewSource(48))
	for _, p := range payloads {
		tree, err := parseOrdered(p.body)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		// A fixture carried in another sender's envelope (an SNS
		// notification) is read as the mapping's Open opens it.
		opened := func(v Value) Value {
			if !p.s.Match(v) && p.s.Open != nil {
				if inner, ok := p.s.Open(v); ok {
					return inner
				}
			}
			return v
		}
		v, _ := Parse(p.body)
		v = opened(v)
		want, wantErr := p.s.Map(v)
		if !p.s.Match(v) {
			t.Errorf("%s: not recognised", p.name)
		}
		for order := range 4 {
			for layout := range 5 {
				for range 3 {
					var b bytes.Buffer
					tree.write(&b, order, rng, layout, 0)
					v2, err := Parse(b.Bytes())
					if err != nil {
						t.Fatalf("%s rewritten: %v\n%s", p.name, err, b.String())
					}
					v2 = opened(v2)
					if !p.s.Match(v2) {
						t.Errorf("%s (order %d, layout %d): not recognised", p.name, order, layout)
					}
					got, gotErr := p.s.Map(v2)
					if diff := cmp.Diff(want, got); diff != "" || (gotErr == nil) != (wantErr == nil) {
						t.Errorf("%s (order %d, layout %d) reads otherwise (-as written +rewritten):\n%s", p.name, order, layout, diff)
					}
				}
			}
		}
	}
}

// jsonNode is a JSON value that keeps its members' order and its scalars as
// written.
type jsonNode struct {
	raw  string // a scalar, as JSON
	keys []string
	vals []*jsonNode
	obj  bool
	arr  bool
}

// parseOrdered parses one JSON value keeping member order.
func parseOrdered(b []byte) (*jsonNode, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return parseNode(d)
}

func parseNode(d *json.Decoder) (*jsonNode, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch x := tok.(type) {
	case json.Delim:
		n := &jsonNode{obj: x == '{', arr: x == '['}
		for d.More() {
			if n.obj {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := parseNode(d)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		_, err := d.Token()
		return n, err
	case json.Number:
		return &jsonNode{raw: x.String()}, nil
	default:
		raw, err := json.Marshal(x)
		return &jsonNode{raw: string(raw)}, err
	}
}

// write writes the node: members as written (order 0), reversed (1),
// sorted (2) or shuffled (3); compact (layout 0), indented with two spaces
// (1), tabs (2), CRLF and spaces (3), or spaced on one line (4).
func (n *jsonNode) write(b *bytes.Buffer, order int, rng *rand.Rand, layout, depth int) {
	if !n.obj && !n.arr {
		b.WriteString(n.raw)
		return
	}
	idx := make([]int, len(n.vals))
	for i := range idx {
		idx[i] = i
	}
	if n.obj {
		switch order {
		case 1:
			slices.Reverse(idx)
		case 2:
			slices.SortFunc(idx, func(a, c int) int { return strings.Compare(n.keys[a], n.keys[c]) })
		case 3:
			rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		}
	}
	open, end := byte('['), byte(']')
	if n.obj {
		open, end = '{', '}'
	}
	nl := func(d int) {
		switch layout {
		case 1:
			b.WriteString("\n" + strings.Repeat("  ", d))
		case 2:
			b.WriteString("\n" + strings.Repeat("\t", d))
		case 3:
			b.WriteString("\r\n" + strings.Repeat(" ", d))
		case 4:
			b.WriteString(" ")
		}
	}
	b.WriteByte(open)
	for i, j := range idx {
		if i > 0 {
			b.WriteByte(',')
		}
		nl(depth + 1)
		if n.obj {
			k, _ := json.Marshal(n.keys[j])
			b.Write(k)
			if layout == 0 {
				b.WriteByte(':')
			} else {
				b.WriteString(" : ")
			}
		}
		n.vals[j].write(b, order, rng, layout, depth+1)
	}
	if len(idx) > 0 {
		nl(depth)
	}
	b.WriteByte(end)
}

// BenchmarkMappingRead measures each built-in mapping's reading of one
// payload: Match then Map, as intake calls them.
func BenchmarkMappingRead(b *testing.B) {
	builtins, err := builtinMappings()
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, 0, len(builtins))
	for name := range builtins {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := mapped(name)
		// The sender's own payloads: a fixture carried in another
		// sender's envelope (an SNS notification) is the envelope's.
		var values []Value
		for _, body := range fixtureBodies(b, name) {
			if v, err := Parse(body); err == nil && s.Match(v) {
				values = append(values, v)
			}
		}
		b.Run(name, func(b *testing.B) {
			if len(values) == 0 {
				b.Skip("every fixture is carried in another sender's envelope")
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				v := values[i%len(values)]
				if !s.Match(v) {
					b.Fatal("not matched")
				}
				if _, err := s.Map(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// The cost a mapping adds to every payload it does not recognise:
	// Detect tries each sender's Match in turn.
	b.Run("match-miss", func(b *testing.B) {
		v, _ := Parse([]byte(`{"title": "disk full", "severity": "high", "labels": {"host": "db1"}}`))
		ss := make([]Sender, 0, len(names))
		for _, name := range names {
			ss = append(ss, mapped(name))
		}
		b.ReportAllocs()
		for b.Loop() {
			for _, s := range ss {
				if s.Match(v) {
					b.Fatal("matched")
				}
			}
		}
	})
}

// TestMappingFeatures reads a payload with each feature of the format the
// converted built-in senders need: each case a small team mapping.
func TestMappingFeatures(t *testing.T) {
	const head = "name: acme\nplaceholders: keep\nrecognise: [has: kind]\n"
	tests := []struct {
		name, mapping, payload string
		want                   []Event
		wantErr                string
	}{{
		name: "then, firstLine and truncate: the value transformed, its origin kept",
		mapping: head + "parts:\n  title: [{path: summary, then: 'truncate(firstLine(value), 5)'}]\n" +
			"  rule: {path: check, then: 'upper(value)'}\n",
		payload: `{"kind": "x", "summary": "\n  Disk full on db1\nmore", "check": "disk"}`,
		want: []Event{{Title: "Disk …", Rule: "DISK", Status: "firing",
			Origin: map[string]string{"title": "summary", "rule": "check"}}},
	}, {
		name: "regular expressions and quote",
		mapping: head + "parts:\n  title: {expr: 'reReplace(str(\"path\"), `(?s)^.*[\\\\/]`, \"\") + \" \" + quote(reFind(str(\"msg\"), `code=(\\d+)`))', as: path}\n" +
			"  rule: {expr: 'reFind(str(\"msg\"), `[a-z]+`)', as: msg}\n",
		payload: `{"kind": "x", "path": "C:\\Windows\\cmd.exe", "msg": "failed code=42"}`,
		want: []Event{{Title: `cmd.exe "42"`, Rule: "failed", Status: "firing",
			Origin: map[string]string{"title": "path", "rule": "msg"}}},
	}, {
		name:    "compact: any value as compact JSON, keys sorted, a string quoted, absent null",
		mapping: head + "parts:\n  title: {expr: 'compact(\"tags\") + \" \" + compact(\"name\") + \" \" + compact(\"none\") + \" \" + compact(\"n\")', as: tags}\n",
		payload: `{"kind": "x", "tags": {"z": [1, "a<b"], "a": null}, "name": "db", "n": 2.50}`,
		want: []Event{{Title: `{"a":null,"z":[1,"a<b"]} "db" null 2.50`, Status: "firing",
			Origin: map[string]string{"title": "tags"}}},
	}, {
		name: "annotations, fingerprint and blank: keep (members as sent, empty ones kept, nulls skipped); isTime",
		mapping: head + "parts:\n  title: {member: summary, in: annotations}\n  fingerprint: fp\n" +
			"  timestamp: {expr: 'isTime(str(\"at\")) ? str(\"at\") : \"\"', as: at}\n" +
			"  labels: {\"*\": {from: labels, blank: keep}, trimmed: /labels.pad}\n" +
			"  annotations: {\"*\": {from: annotations, blank: keep}, \"a_*\": labels}\n",
		payload: `{"kind": "x", "fp": " c91d ", "at": "yesterday", "labels": {"pad": " p ", "empty": "", "n": 2.50, "none": null},
			"annotations": {"summary": " Disk full ", "o": {"b": 1, "a": "<"}}}`,
		want: []Event{{Title: "Disk full", Status: "firing", Fingerprint: "c91d",
			Labels:      map[string]string{"pad": " p ", "empty": "", "n": "2.50", "trimmed": "p"},
			Annotations: map[string]string{"summary": " Disk full ", "o": `{"a":"<","b":1}`, "a_pad": "p", "a_n": "2.50"},
			Origin:      map[string]string{"title": "annotations.summary"}}},
	}, {
		name: "numbers: ms (a number read as intake reads a time), blank: keep on a label of one key, isUnix, isLink",
		mapping: head + "parts:\n  title: t\n  timestamp: {path: at, numbers: ms}\n" +
			"  labels:\n    pad: {path: pad, blank: keep}\n    none: {path: empty, blank: keep}\n" +
			"    unix: {expr: 'isUnix(str(\"at\")) && isUnix(\"1.5e-3\") && !isUnix(\"-1\") && !isUnix(\"2e17\") ? \"yes\" : \"no\"'}\n" +
			"    link: {expr: 'isLink(\"https://a.example/x\") && !isLink(\"javascript:x\") ? \"yes\" : \"no\"'}\n",
		payload: `{"kind": "x", "t": "T", "at": 1700000000123456, "pad": "  ", "empty": ""}`,
		want: []Event{{Title: "T", Status: "firing", Timestamp: time.UnixMilli(1700000000123456).UTC(),
			Labels: map[string]string{"pad": "  ", "unix": "yes", "link": "yes"},
			Origin: map[string]string{"title": "t"}}},
	}, {
		name: "blank: empty on a label of one key: the candidate that applies sets it, an empty value kept",
		mapping: head + "parts:\n  title: t\n" +
			"  annotations:\n    ts: {expr: 'str(\"ts\")', when: 'kind(\"ts\") == \"object\"', blank: empty}\n" +
			"    other: {path: t, when: 'false', blank: empty}\n",
		payload: `{"kind": "x", "t": "T", "ts": {"at": 1}}`,
		want: []Event{{Title: "T", Status: "firing", Annotations: map[string]string{"ts": ""},
			Origin: map[string]string{"title": "t"}}},
	}, {
		name: "indexes, pluck and isNumber",
		mapping: head + "parts:\n  title: \"detection[0].rule\"\n" +
			"  rule: {expr: 'join(uniq(pluck(\"ind[].tactics[].name\")), \",\")', as: ind}\n" +
			"  labels: {numeric: {expr: 'isNumber(\"level\") ? \"yes\" : \"no\"'}, text: {expr: 'isNumber(\"detection\") ? \"yes\" : \"no\"'}}\n",
		payload: `{"kind": "x", "level": " 10.5 ", "detection": [{"rule": "r1"}, {"rule": "r2"}],
			"ind": [{"tactics": [{"name": "a"}, {"name": "b"}]}, {"tactics": [{"name": "a"}, {"name": ""}, {"x": 1}]}, 7]}`,
		want: []Event{{Title: "r1", Rule: "a,b", Status: "firing", Labels: map[string]string{"numeric": "yes", "text": "no"},
			Origin: map[string]string{"title": "detection[0].rule", "rule": "ind"}}},
	}, {
		name: "links: only absolute http(s) URLs of at most 2 KiB; a candidate that is none gives way to the next",
		mapping: head + "parts:\n  title: name\n  links:\n    source: [bad, url]\n    runbook: runbook\n    dashboard: dashboard\n" +
			"    panel: panel\n    silence: silence\n",
		payload: `{"kind": "x", "name": "n", "bad": "javascript:alert(document.cookie)", "url": "https://acme.example.com/a/1",
			"runbook": "data:text/html,<script>alert(1)</script>", "dashboard": "/d/abc", "panel": "https://acme.example.com/` +
			strings.Repeat("p", 2048) + `", "silence": "HTTPS://acme.example.com/silence"}`,
		want: []Event{{Title: "n", Status: "firing", Origin: map[string]string{"title": "name"},
			Links: map[string]string{"source": "https://acme.example.com/a/1", "silence": "HTTPS://acme.example.com/silence"}}},
	}, {
		name: "items: the payload itself, or the elements that are alerts, origins prefixed",
		mapping: "name: acme\nrecognise: [has: kind]\nitems: {from: data, self: true, origin: true, only: [{equals: {type: alert}}]}\n" +
			"parts:\n  title: name\n  id: {of: [id], prefix: a-}\n",
		payload: `{"kind": "page", "data": [{"type": "alert", "name": "one", "id": "1"}, {"type": "note", "name": "two"}, {"type": "alert", "name": "three", "id": "3"}]}`,
		want: []Event{
			{Title: "one", ID: "a-1", Status: "firing", Origin: map[string]string{"title": "data[].name", "id": "data[].id"}},
			{Title: "three", ID: "a-3", Status: "firing", Origin: map[string]string{"title": "data[].name", "id": "data[].id"}},
		},
	}, {
		name:    "items: self",
		mapping: "name: acme\nrecognise: [has: kind]\nitems: {from: data, self: true, origin: true, only: [{equals: {type: alert}}]}\nparts: {title: name}\n",
		payload: `{"kind": "one", "type": "alert", "name": "me", "data": [{"type": "alert", "name": "not me"}]}`,
		want:    []Event{{Title: "me", Status: "firing", Origin: map[string]string{"title": "name"}}},
	}, {
		name:    "items: from a list of paths, the first holding an array or object, its origin",
		mapping: "name: acme\nrecognise: [has: kind]\nitems: {from: [detail.list, list], origin: true}\nparts: {title: name}\n",
		payload: `{"kind": "page", "detail": {"list": "none"}, "list": [{"name": "one"}]}`,
		want:    []Event{{Title: "one", Status: "firing", Origin: map[string]string{"title": "list[].name"}}},
	}, {
		name:    "items: an object, origins prefixed without []",
		mapping: "name: acme\nrecognise: [has: kind]\nitems: {from: data, origin: true}\nparts: {title: [{of: [a, b], sep: \" \"}]}\n",
		payload: `{"kind": "one", "data": {"a": "x", "b": "y"}}`,
		want:    []Event{{Title: "x y", Status: "firing", Origin: map[string]string{"title": "data.a+data.b"}}},
	}, {
		name: "arrays: join, and labels from every element's object ([]), the first element's value of a name winning",
		mapping: "name: acme\narrays: join\nrecognise: [has: kind]\nparts:\n  title: [{path: names, when: 'kind(\"names\") == \"array\"'}]\n" +
			"  rule: {expr: 'str(\"one\")', as: one}\n  labels:\n    \"t_*\": {from: \"targets[].labels\"}\n",
		payload: `{"kind": "x", "names": ["a", " ", "b", {"o": 1}], "one": ["r"],
			"targets": [{"labels": {"env": "prod", "x": "1"}}, {"labels": {"env": "dev", "y": {"o": 2}}}, {"nolabels": 1}, 7]}`,
		want: []Event{{Title: "a, b", Rule: "r", Status: "firing", Labels: map[string]string{"t_env": "prod", "t_x": "1", "t_y": `{"o":2}`},
			Origin: map[string]string{"title": "names", "rule": "one"}}},
	}, {
		name: "each: the first (or last) element's value",
		mapping: head + "parts:\n  title: {each: ev, when: 'str(\"type\") == \"user\"', path: name}\n" +
			"  entities: {process: {each: ev, pick: last, when: 'str(\"type\") == \"proc\"', path: image}}\n",
		payload: `{"kind": "x", "ev": [{"type": "proc", "image": "a.exe"}, {"type": "user", "name": ""}, {"type": "user", "name": "bob"}, {"type": "proc", "image": "b.exe"}, {"type": "proc", "image": " "}]}`,
		want: []Event{{Title: "bob", Status: "firing", Entities: map[string]string{"process": "b.exe"},
			Origin: map[string]string{"title": "name"}}},
	}, {
		name: "each over an object: its members in name order, key their name, origin the member",
		mapping: head + "parts:\n  title: kind\n  environment: {each: labels, when: 'lower(key) in [\"env\", \"stage\"]', path: \"\"}\n" +
			"  service: {each: labels, pick: last, when: 'hasPrefix(key, \"svc\")', path: \"\", as: labels}\n" +
			"  labels: {second: {each: list, when: 'key == \"1\"', path: name}}\n",
		payload: `{"kind": "x", "labels": {"Stage": "", "env": "prod", "stage": "qa", "svc1": "a", "svc2": "b"}, "list": [{"name": "zero"}, {"name": "one"}]}`,
		want: []Event{{Title: "x", Environment: "prod", Service: "b", Status: "firing", Labels: map[string]string{"second": "one"},
			Origin: map[string]string{"title": "kind", "environment": "labels.env", "service": "labels"}}},
	}, {
		name: "each with decode: json: an array sent as JSON text is read as the array; other text is no array",
		mapping: head + "parts:\n  title: {each: ev, decode: json, when: 'str(\"type\") == \"user\"', path: name}\n" +
			"  rule: {each: plain, decode: json, path: name}\n" +
			"  entities: {process: {each: ev, decode: json, pick: last, when: 'str(\"type\") == \"proc\"', path: image}, file: {each: bad, decode: json, path: name}}\n",
		payload: `{"kind": "x", "ev": " [{\"type\": \"proc\", \"image\": \"a.exe\"}, {\"type\": \"user\", \"name\": \"bob\"}, {\"type\": \"proc\", \"image\": \"b.exe\"}]",
			"plain": [{"name": "r1"}], "bad": "[{\"name\": \"f\"}"}`,
		want: []Event{{Title: "bob", Rule: "r1", Status: "firing", Entities: map[string]string{"process": "b.exe"},
			Origin: map[string]string{"title": "name", "rule": "name"}}},
	}, {
		name: "origin: an origin computed from what the candidate reads, inside each too",
		mapping: head + "parts:\n  title: {path: name, origin: '\"n.\" + str(\"kind\")'}\n" +
			"  environment: {each: tags, when: 'str(\"k\") == \"env\"', path: v, origin: '\"tags.\" + key + \".\" + str(\"k\")'}\n",
		payload: `{"kind": "x", "name": "n1", "tags": [{"k": "team", "v": "a"}, {"k": "env", "v": "prod"}]}`,
		want: []Event{{Title: "n1", Environment: "prod", Status: "firing",
			Origin: map[string]string{"title": "n.x", "environment": "tags.1.env"}}},
	}, {
		name:    "evidenceOf: evidence of a list an expression builds, keys named by the payload",
		mapping: head + "parts:\n  title: kind\n  text: {expr: 'evidenceOf(concat([\"check\", str(\"c\")], flatten(map(members(\"in\"), [\"input \" + #, str(\"in.\" + # + \".v\")])), [\"tip\"]))'}\n",
		payload: `{"kind": "x", "c": "cpu", "in": {"B": {"v": "2"}, "A": {"v": " 1 "}, "C": {"v": ""}}}`,
		want: []Event{{Title: "x", Status: "firing", Text: "check: cpu\ninput A: 1\ninput B: 2",
			Origin: map[string]string{"title": "kind"}}},
	}, {
		name:    "utcTime: one instant written two ways is one text; no time is kept as sent",
		mapping: head + "parts:\n  title: kind\n  id: {of: [{expr: 'utcTime(str(\"a\"))'}, {expr: 'utcTime(str(\"b\"))'}, {expr: 'utcTime(str(\"c\"))'}], sep: \" \", as: a}\n",
		payload: `{"kind": "x", "a": "2024-05-14T09:03:13.120+0000", "b": "2024-05-14T11:03:13.12+02:00", "c": " soon "}`,
		want: []Event{{Title: "x", Status: "firing", ID: "2024-05-14T09:03:13.12Z 2024-05-14T09:03:13.12Z soon",
			Origin: map[string]string{"title": "kind", "id": "a"}}},
	}, {
		name: "evidence over an object, an array of key/value objects, flattened",
		mapping: head + "parts:\n  title: kind\n  text:\n    join: [raw]\n    evidence:\n" +
			"      \"*\": {from: result, except: [_*, punct], limit: 2}\n" +
			"      \"field *\": {from: fields, key: k, value: v}\n" +
			"      \"http.*\": {from: http, flatten: true, limit: 3}\n",
		payload: `{"kind": "x", "raw": "line", "result": {"_time": "1", "a": "1", "punct": "..", "b": ["x", "y"], "c": {"o": 1}, "d": "4"},
			"fields": [{"k": "user", "v": "bob"}, {"k": "empty", "v": ""}, "x"],
			"http": {"hostname": "h", "headers": [{"name": "A"}, {"name": "B"}], "url": "/x"}}`,
		want: []Event{{Title: "x", Status: "firing",
			Text:   "line\n\na: 1\nb: x, y\nfield user: bob\nhttp.headers.0.name: A\nhttp.headers.1.name: B\nhttp.hostname: h",
			Origin: map[string]string{"title": "kind"}}},
	}, {
		name: "labels of chosen members: keys, except, blank, join",
		mapping: "name: acme\nplaceholders: keep\nrecognise: [has: kind]\ntags: {from: meta, key: key, value: value}\nparts:\n  title: kind\n  labels:\n" +
			"    \"*\": {from: $tags, keys: 'tactic|technique', except: [technique_old], blank: skip}\n" +
			"    \"m.*\": {from: md, join: \",\"}\n",
		payload: `{"kind": "x", "meta": [{"key": "Tactic", "value": "TA1"}, {"key": "technique", "value": ""}, {"key": "technique_old", "value": "T0"}, {"key": "severity", "value": "high"}],
			"md": {"cve": ["a", "b"], "one": "x", "obj": {"z": 1}}}`,
		want: []Event{{Title: "x", Status: "firing", Labels: map[string]string{"tactic": "TA1", "m.cve": "a,b", "m.one": "x"},
			Origin: map[string]string{"title": "kind"}}},
	}, {
		name: "pairs: a key/value array, else the alert's own member; origins say which",
		mapping: "name: acme\nrecognise: [has: kind]\npairs: {from: fields, key: key, value: value}\nparts:\n" +
			"  title: {pair: [name, alert_name]}\n  rule: {pair: [check, alert_id]}\n  service: {pair: [svc, app]}\n" +
			"  labels: {\"*\": {expr: 'split(str(\"meta\"), \",\")'}}\n",
		payload: `{"kind": "x", "alert_id": "top", "svc": "", "meta": "Team:core, env: prod,bare",
			"fields": [{"key": " name ", "value": "Disk"}, {"key": "name", "value": "second"}, {"key": "svc", "value": "api"}]}`,
		want: []Event{{Title: "Disk", Rule: "top", Service: "api", Status: "firing", Labels: map[string]string{"Team": "core", "env": "prod"},
			Origin: map[string]string{"title": "fields.name", "rule": "alert_id", "service": "svc"}}},
	}, {
		name: "keys: fold: the payload's own member names folded (an exact one first), origins as sent; nested names exact",
		mapping: "name: acme\nkeys: fold\nrecognise: [has: KIND]\nparts:\n  title: ProblemTitle\n  rule: PROBLEM_TITLE\n" +
			"  service: {expr: 'str(\"svc.Name\")', as: svc}\n  labels: {n: /ALERT_ID, nested: svc.name, exact: problem_title}\n",
		payload: `{"kind": "x", "Problem Title": "Disk", "problem_title": "second", "SVC": {"Name": "api"}, "alert.id": "7"}`,
		want: []Event{{Title: "Disk", Rule: "Disk", Service: "api", Status: "firing", Labels: map[string]string{"n": "7", "exact": "second"},
			Origin: map[string]string{"title": "Problem Title", "rule": "Problem Title", "service": "svc"}}},
	}, {
		name: "data: an array of mixed elements walked by expr's functions, numbers as text",
		mapping: head + "parts:\n  title: {expr: 'type(data(\"tags\")[1]) + string(len(data(\"tags\")))', as: tags}\n" +
			"  labels: {\"*\": {expr: 'map(filter(data(\"tags\"), type(#) == \"map\"), #.k + \":\" + #.v)'}}\n",
		payload: `{"kind": "x", "tags": [{"k": "a", "v": 1.50}, "x", {"k": "b", "v": "2"}]}`,
		want: []Event{{Title: "string3", Status: "firing", Labels: map[string]string{"a": "1.50", "b": "2"},
			Origin: map[string]string{"title": "tags"}}},
	}, {
		name: "json and urlQuery: a JSON text read as data (nil when it is none), a URL's query parameter",
		mapping: head + "parts:\n  title: {expr: 'urlQuery(str(\"link\"), \"eventid\") + urlQuery(str(\"bad\"), \"x\")', as: link}\n" +
			"  labels:\n    \"*\": {expr: 'map(json(str(\"tags\")) ?? [], #.tag + \":\" + #.value)'}\n    bad: {expr: 'json(str(\"bad\")) == nil ? \"nil\" : \"parsed\"'}\n",
		payload: `{"kind": "x", "link": "https://z.example.com/tr_events.php?triggerid=1&eventid=42&eventid=43", "bad": "[oops?x=%zz",
			"tags": "[{\"tag\": \"a\", \"value\": 1.50}]"}`,
		want: []Event{{Title: "42", Status: "firing", Labels: map[string]string{"a": "1.50", "bad": "nil"},
			Origin: map[string]string{"title": "link"}}},
	}, {
		name: "member: an object's member by its exact name; evidence skip",
		mapping: head + "parts:\n  title: {member: \"a.b[c]\", in: f}\n  rule: [{member: x.y, in: f}, {member: k, in: \"\"}]\n" +
			"  text: {join: [], evidence: {\"*\": {from: f, flatten: true, limit: 3, skip: [\"<NA>\"]}}}\n",
		payload: `{"kind": "x", "k": "top", "f": {"a.b[c]": "sh", "a": {"b[c]": "nested"}, "x": {"y": "nested, not x.y"}, "m": " <NA> "}}`,
		want: []Event{{Title: "sh", Rule: "top", Status: "firing", Text: "a.b[c]: nested\na.b[c]: sh", // m skipped but counted: x.y is the fourth
			Origin: map[string]string{"title": "f.a.b[c]", "rule": "k"}}},
	}, {
		name:    "a blank pattern",
		mapping: "name: acme\nblank: [{matches: '(?i)^\\*.*insert.*\\*$'}]\nrecognise: [has: kind]\nparts:\n  title: [app, kind]\n",
		payload: `{"kind": "x", "app": "*Insert desired application name*"}`,
		want:    []Event{{Title: "x", Status: "firing", Origin: map[string]string{"title": "kind"}}},
	}, {
		name:    "a blank-value list",
		mapping: "name: acme\nblank: [\"-\", N/A]\nrecognise: [has: kind]\nparts:\n  title: [user, name]\n  labels: {host: host}\n",
		payload: `{"kind": "x", "user": " - ", "name": "n", "host": "N/A"}`,
		want:    []Event{{Title: "n", Status: "firing", Origin: map[string]string{"title": "name"}}},
	}, {
		name:    "reject: recognised, no alert, a reason",
		mapping: head + "reject: {when: 'str(\"kind\") != \"alert\"', reason: '\"a \" + quote(str(\"kind\")) + \" record is no alert\"'}\nparts: {title: kind}\n",
		payload: `{"kind": "flow"}`,
		wantErr: `a "flow" record is no alert`,
	}, {
		name: "evidence as a list (a key twice), lines from an expression of pairs, count",
		mapping: head + "parts:\n  title: kind\n  text:\n    join: []\n    evidence:\n" +
			"      - \"*\": {from: a, flatten: true}\n      - \"*\": {from: b, flatten: true, limit: 1}\n" +
			"        \"msg *\": {expr: 'map(filter(0..1, # < count(\"m\")), [str(\"m[\" + string(#) + \"].src\"), str(\"m[\" + string(#) + \"].text\")])'}\n" +
			"        more: {expr: 'count(\"m\") > 2 ? string(count(\"m\") - 2) + \" more\" : \"\"'}\n",
		payload: `{"kind": "x", "a": {"k": "1"}, "b": {"k": "2", "l": "3"}, "m": [{"src": "h1", "text": "one"}, {"src": "h2", "text": " "}, {"src": "h3"}, {}]}`,
		want: []Event{{Title: "x", Status: "firing", Text: "k: 1\nk: 2\nmsg h1: one\nmore: 2 more",
			Origin: map[string]string{"title": "kind"}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			senders, err := LoadMappings(writeMapping(t, map[string]string{"acme.yaml": tt.mapping}))
			if err != nil {
				t.Fatal(err)
			}
			v := mustParse(t, tt.payload)
			if !senders[0].Match(v) {
				t.Fatal("not recognised")
			}
			got, err := senders[0].Map(v)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || len(got) != 0 {
					t.Fatalf("Map = %v, %v; want the error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMappingSeverityRanges: a table's ranges of whole numbers, a decimal
// read by its whole part, the table's own values first.
func TestMappingSeverityRanges(t *testing.T) {
	senders, err := LoadMappings(writeMapping(t, map[string]string{"acme.yaml": "name: acme\n" +
		"severity: {\"..0\": info, \"1..3\": low, \"4..\": critical, \"2\": high}\nlevels: [\"0\", \"2\", \"4\"]\nrecognise: [has: a]\nparts: {title: a}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	s := senders[0]
	for raw, want := range map[string]openrecall.Severity{"-5": "info", "0": "info", "1": "low", "2": "high", "3.9": "low", " 4 ": "critical",
		"99": "critical", "x": "unknown", "": "unknown", "NaN": "unknown"} {
		if got := s.Severity(raw); got != want {
			t.Errorf("severity %q = %s, want %s", raw, got, want)
		}
	}
	if diff := cmp.Diff([]string{"0", "2", "4"}, s.Levels); diff != "" {
		t.Errorf("levels (-want +got):\n%s", diff)
	}
}

// TestMappingOpen: an envelope is opened when its conditions hold, and
// Read reads what it carries with the sender that recognises it.
func TestMappingOpen(t *testing.T) {
	senders, err := LoadMappings(writeMapping(t, map[string]string{"acme.yaml": "name: acme\n" +
		"recognise: [any: [{has: rule}, {has: wrapped.rule}]]\nopen: {path: wrapped, when: [{not: {has: rule}}, {is: {wrapped: object}}]}\n" +
		"parts: {title: rule}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	s := senders[0]
	if _, ok := s.Open(mustParse(t, `{"rule": "r", "wrapped": {"rule": "inner"}}`)); ok {
		t.Error("opened a payload that is an alert itself")
	}
	inner, ok := s.Open(mustParse(t, `{"wrapped": {"rule": "inner"}}`))
	if !ok || inner.Compact() != `{"rule":"inner"}` {
		t.Errorf("open = %s, %v", inner.Compact(), ok)
	}
	_, events, err := Read([]Sender{s}, mustParse(t, `{"wrapped": {"rule": "inner"}}`))
	if err != nil || len(events) != 1 || events[0].Title != "inner" {
		t.Errorf("read %+v, %v", events, err)
	}
}

// TestMappingVersions: a mapping with versions recognises what any version
// recognises; reading, the first version whose when holds (without when:
// whose recognise holds) reads the payload, and the last reads what none
// takes; each version has its own lets, and the head (the severity table)
// is shared.
func TestMappingVersions(t *testing.T) {
	senders, err := LoadMappings(writeMapping(t, map[string]string{"acme.yaml": "name: acme\nseverity: {P1: critical}\n" +
		"versions:\n" +
		"  - recognise: [has: legacy]\n" +
		"    when: [is: {legacy: object}]\n" +
		"    let: {name: legacy.name}\n" +
		"    parts: {title: $name, severity: legacy.prio, rule: {expr: 'scale(str(\"legacy.prio\"))', as: legacy.prio}}\n" +
		"  - recognise: [has: kind]\n" +
		"    items: alerts\n" +
		"    let: {name: [title, name]}\n" +
		"    parts: {title: $name}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	s := senders[0]
	tests := []struct {
		payload string
		match   bool
		want    []string // titles
	}{
		{`{"legacy": {"name": "old", "prio": "P1"}}`, true, []string{"old"}},
		{`{"kind": "x", "alerts": [{"title": "a"}, {"name": "b"}]}`, true, []string{"a", "b"}},
		// Recognised by the first version's recognise, but its when says
		// the last reads it.
		{`{"legacy": "old", "alerts": [{"title": "c"}]}`, true, []string{"c"}},
		// Recognised by none: the first version's when, else the last.
		{`{"legacy": {"name": "forced"}, "other": 1}`, true, []string{"forced"}},
		{`{"alerts": [{"title": "d"}]}`, false, []string{"d"}},
	}
	for _, tt := range tests {
		v := mustParse(t, tt.payload)
		if got := s.Match(v); got != tt.match {
			t.Errorf("%s: Match %v, want %v", tt.payload, got, tt.match)
		}
		evs, err := s.Map(v)
		if err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, e := range evs {
			titles = append(titles, e.Title)
		}
		if !slices.Equal(titles, tt.want) {
			t.Errorf("%s: titles %q, want %q", tt.payload, titles, tt.want)
		}
	}
	evs, _ := s.Map(mustParse(t, `{"legacy": {"name": "old", "prio": "P1"}}`))
	if e := evs[0]; e.Severity != "P1" || e.Rule != "critical" || s.Severity("P1") != "critical" {
		t.Errorf("the shared table: severity %q rule %q, want P1 read as critical", e.Severity, e.Rule)
	}
}

// TestMappingOpenJSON: open: {decode: json} opens a payload carried as JSON
// text, only when the text, trimmed, is a JSON object; else the envelope is
// read itself.
func TestMappingOpenJSON(t *testing.T) {
	senders, err := LoadMappings(writeMapping(t, map[string]string{"acme.yaml": "name: acme\n" +
		"recognise: [any: [{has: rule}, {has: message}]]\nopen: {path: message, decode: json, when: [{not: {has: rule}}]}\n" +
		"parts: {title: [rule, message]}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	s := senders[0]
	for payload, want := range map[string]string{
		`{"message": " {\"rule\": \"inner\"} "}`:            `{"rule":"inner"}`,
		`{"message": "{\"rule\": \"inner\"} and more"}`:     `{"rule":"inner"}`,
		`{"message": "[{\"rule\": \"inner\"}]"}`:            "",
		`{"message": "{not json"}`:                          "",
		`{"message": "plain text"}`:                         "",
		`{"message": {"rule": "an object, not text"}}`:      "",
		`{"message": 42}`:                                   "",
		`{"rule": "r", "message": "{\"rule\": \"inner\"}"}`: "",
	} {
		inner, ok := s.Open(mustParse(t, payload))
		if got := inner.Compact(); ok != (want != "") || ok && got != want {
			t.Errorf("open %s = %s, %v; want %q", payload, got, ok, want)
		}
	}
	_, events, err := Read([]Sender{s}, mustParse(t, `{"message": "{\"rule\": \"inner\"}"}`))
	if err != nil || len(events) != 1 || events[0].Title != "inner" {
		t.Errorf("read %+v, %v", events, err)
	}
	_, events, err = Read([]Sender{s}, mustParse(t, `{"message": "plain text"}`))
	if err != nil || len(events) != 1 || events[0].Title != "plain text" {
		t.Errorf("read %+v, %v", events, err)
	}
}

// TestMappingOpenDecode: with decode: json the envelope carries its
// payload as JSON text (an SNS Message): the object it encodes is opened;
// text that is no JSON object opens nothing.
func TestMappingOpenDecode(t *testing.T) {
	senders, err := LoadMappings(writeMapping(t, map[string]string{"acme.yaml": "name: acme\n" +
		"recognise: [has: rule]\nopen: {path: Message, decode: json, when: ['str(\"Type\") == \"Notification\"']}\n" +
		"parts: {title: rule}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	s := senders[0]
	inner, ok := s.Open(mustParse(t, `{"Type": "Notification", "Message": " {\"rule\": \"inner\"} "}`))
	if !ok || inner.Compact() != `{"rule":"inner"}` {
		t.Errorf("open = %s, %v", inner.Compact(), ok)
	}
	for _, body := range []string{`{"Type": "Notification", "Message": "[1]"}`, `{"Type": "Notification", "Message": "{bad"}`,
		`{"Type": "Notification", "Message": {"rule": "object"}}`, `{"Type": "Other", "Message": "{\"rule\": \"inner\"}"}`} {
		if got, ok := s.Open(mustParse(t, body)); ok {
			t.Errorf("%s opened: %s", body, got.Compact())
		}
	}
}
