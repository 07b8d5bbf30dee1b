package intake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/openrecall/openrecall/internal/rulecorpus"
	"github.com/openrecall/openrecall/internal/testenv"
)

// corpusWebhooks renders every rule of the rule corpus as the bench queue
// does (one webhook per line), the same firings resolved, and all of them in
// one webhook whose own fields come before its alerts. Nil when the corpus
// is absent outside CI; in CI a missing corpus fails the test.
func corpusWebhooks(t *testing.T) map[string][]byte {
	t.Helper()
	rules, err := rulecorpus.LoadNear(".")
	if errors.Is(err, rulecorpus.ErrAbsent) && !testenv.CI() {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var queue bytes.Buffer
	if err := rulecorpus.WriteQueue(&queue, rules, 2*len(rules)); err != nil {
		t.Fatal(err)
	}
	var items []map[string]any
	var resolved bytes.Buffer
	for i, r := range rules {
		item := rulecorpus.Alert(r, rulecorpus.Firing{N: i, Service: "svc-" + r.Exporter})
		items = append(items, item)
		done := map[string]any{}
		for k, v := range item {
			done[k] = v
		}
		done["status"], done["endsAt"] = "resolved", "2026-11-02T00:00:00Z"
		line, err := rulecorpus.Webhook(done)
		if err != nil {
			t.Fatal(err)
		}
		resolved.Write(append(line, '\n'))
	}
	all, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{
		"corpus queue":                     queue.Bytes(),
		"corpus resolved":                  resolved.Bytes(),
		"corpus one webhook, fields first": fmt.Appendf(nil, `{"version":"4","status":"firing","receiver":"openrecall","groupKey":"{}:{}","alerts":%s}`+"\n", all),
	}
}

// webhookItems returns the alerts[] items of every webhook line of body.
func webhookItems(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, line := range bytes.Split(body, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var w struct{ Alerts []json.RawMessage }
		if err := json.Unmarshal(line, &w); err != nil {
			t.Fatal(err)
		}
		out = append(out, w.Alerts...)
	}
	return out
}

// TestFastItemEqualsGeneral is the example side of P46: on the captured
// Alertmanager fixtures (testdata) and the rendered rule corpus
// (as the bench reads it, resolved, and in one webhook), each also
// pretty-printed and read with the format detected or forced, the reader
// gives exactly the records of the general path. Every alerts[] item of
// the corpus takes the fast path, so that it is what the bench measures.
func TestFastItemEqualsGeneral(t *testing.T) {
	inputs := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	if len(files) == 0 {
		t.Fatal("no captured Alertmanager fixtures in testdata")
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = body
	}
	corpus := corpusWebhooks(t)
	if corpus == nil {
		t.Log("rule corpus absent: fixtures only")
	}
	for name, body := range corpus {
		inputs[name] = body
		var it amItem
		for i, raw := range webhookItems(t, body) {
			if !fastItem(raw, &it) {
				t.Errorf("%s: item %d does not take the fast path: %s", name, i, raw)
				break
			}
		}
	}
	for name, body := range inputs {
		var pretty bytes.Buffer
		if bytes.Count(bytes.TrimSpace(body), []byte{'\n'}) == 0 {
			if err := json.Indent(&pretty, body, "", "  "); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		for _, form := range []string{"as is", "pretty"} {
			in := body
			if form == "pretty" {
				if pretty.Len() == 0 {
					continue
				}
				in = pretty.Bytes()
			}
			for _, f := range []Format{"", FormatAlertmanager, FormatJSON} {
				got, err := ParseBytes(in, Options{Format: f, Source: name})
				if err != nil {
					t.Fatal(err)
				}
				want, err := ParseBytesGeneral(in, Options{Format: f, Source: name})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) == 0 {
					t.Errorf("%s (%s, format %q): no records", name, form, f)
				}
				if !reflect.DeepEqual(got, want) {
					for i := range min(len(got), len(want)) {
						if !reflect.DeepEqual(got[i], want[i]) {
							t.Errorf("%s (%s, format %q), record %d:\nfast path %+v\ngeneral   %+v", name, form, f, i, got[i], want[i])
							break
						}
					}
					t.Errorf("%s (%s, format %q): %d records by the fast path, %d by the general", name, form, f, len(got), len(want))
				}
			}
		}
	}
}

// TestCleanMapCollidingKeys pins a bug P46 found: labels whose keys clean
// to the same key (" severity " and "severity") kept whichever one map
// order put last, so one webhook read twice gave two alerts. The key
// written clean wins, else the first in byte order.
func TestCleanMapCollidingKeys(t *testing.T) {
	tests := []struct {
		in   map[string]string
		want map[string]string
	}{
		{map[string]string{" severity ": "", "severity": "{}"}, map[string]string{"severity": "{}"}},
		{map[string]string{"env\t": "c", " env": "a", "env": "b"}, map[string]string{"env": "b"}},
		{map[string]string{" a": "1", "a\t": "2", "b": "3"}, map[string]string{"a": "1", "b": "3"}},
		{map[string]string{" ": "x", "\t": "y"}, nil},
	}
	for _, tt := range tests {
		for range 50 { // map order differs from one range to the next
			if got := cleanMap(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("cleanMap(%q) = %q, want %q", tt.in, got, tt.want)
			}
		}
	}
	body := `{"status":"firing","alerts":[{"status":"firing","labels":{"alertname":"A"," severity ":"","severity":"critical"}}]}`
	for range 20 {
		recs, err := ParseBytes([]byte(body), Options{})
		if err != nil || len(recs) != 1 || recs[0].Err != nil {
			t.Fatalf("read %s: %v %+v", body, err, recs)
		}
		if got := recs[0].Alert.Severity; got != "critical" {
			t.Fatalf("severity %q, want critical", got)
		}
	}
}

// cleanTextReference is cleanText as it was before its plain-ASCII fast
// path.
func cleanTextReference(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, s))
}

// TestCleanTextPlainPath checks cleanText against its reference on every
// pair of pieces that matter to the plain-ASCII test: printable ASCII, the
// white space and control characters it keeps or drops, DEL, C1 controls,
// invalid UTF-8 and other non-ASCII text.
func TestCleanTextPlainPath(t *testing.T) {
	pieces := []string{"", "a", " ", "~", "\n", "\t", "\r", "\r\n", "\x00", "\x1f", "\x7f", "\u0085", "\u009f", "\u00a0", "é", "\xff", "\xed\xa0\x80", "\u2028", "  x  "}
	for _, a := range pieces {
		for _, b := range pieces {
			for _, c := range pieces {
				s := a + b + c
				if got, want := cleanText(s), cleanTextReference(s); got != want {
					t.Errorf("cleanText(%q) = %q, want %q", s, got, want)
				}
			}
		}
	}
}

// TestObjectKey checks objectKey against json.Unmarshal, the decoding it
// shortcuts for plain keys.
func TestObjectKey(t *testing.T) {
	for _, raw := range []string{`"alerts"`, `"status"`, `"x y"`, `""`, `"a\"b"`, `"\u0061lerts"`, `"é"`, "\"\xff\"", "\"a\x01\"", `"a`, `"`, `"a"b"`, `"\/"`, `"~"`, "\"\x7f\""} {
		got, ok := objectKey([]byte(raw))
		var want string
		wantOK := json.Unmarshal([]byte(raw), &want) == nil
		if ok != wantOK || got != want {
			t.Errorf("objectKey(%q) = %q, %v; json.Unmarshal gives %q, %v", raw, got, ok, want, wantOK)
		}
	}
}

// FuzzFastItemEqualsGeneral reads arbitrary bytes as the alerts[] items of
// webhooks of both kinds (group fields before the alerts, and a batch whose
// fields come after) with the fast path and with the general path: the
// records must be the same.
func FuzzFastItemEqualsGeneral(f *testing.F) {
	for _, seed := range []string{
		`{"status":"firing","labels":{"alertname":"A","severity":"critical"},"annotations":{"summary":"s\n\u003e"},"startsAt":"2026-11-29T21:10:00Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"c91d997d55db7a73"}`,
		`{"labels":{"a":null,"a":"x"},"status":null,"fingerprint":"f"}`,
		`{"labels":{"alertname":"\ud83d\u0041\ud800"},"title":"t"}`,
		"{\"labels\":{\"k\":\"\xed\xa0\x80\"},\"status\":\"resolved\"}",
		`{"labels":{"alertname":"A"},"status":"firing","status":"resolved"}`,
		`{"labels":{"alertname":"A"},"startsAt":1764450600,"values":{"B":1}}`,
		`{"labels":{}}, {"annotations":{"summary":"x"},"fingerprint":""}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, items []byte) {
		for _, group := range []string{`{"status":"firing","version":"4","alerts":[%s]}`, `{"alerts":[%s],"status":"resolved"}`} {
			body := fmt.Appendf(nil, group, items)
			for _, format := range []Format{"", FormatAlertmanager} {
				got, err := ParseBytes(body, Options{Format: format})
				if err != nil {
					t.Fatal(err)
				}
				want, err := ParseBytesGeneral(body, Options{Format: format})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("read %q (format %q):\nfast path %+v\ngeneral   %+v", body, format, got, want)
				}
			}
		}
	})
}

// FuzzDecodeString holds decodeString to json.Unmarshal into a string, on
// any bytes.
func FuzzDecodeString(f *testing.F) {
	for _, seed := range []string{`"plain"`, `"a\nb\u003e"`, `"\ud83d\u0041\ud800"`, "\"\xed\xa0\x80\"", `null`, `5`, `"a`, `"\'"`, ` "x" `, "\"a\x01\"", `"\uD83D\uDE00"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := decodeString(raw)
		var want string
		wantOK := json.Unmarshal(raw, &want) == nil
		if ok != wantOK || got != want {
			t.Fatalf("decodeString(%q) = %q, %v; json.Unmarshal gives %q, %v", raw, got, ok, want, wantOK)
		}
	})
}
