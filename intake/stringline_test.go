package intake

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/openrecall/openrecall"
)

// stringLineReference is what a top-level JSON string line gave before
// jsonfast decoded it: json.Unmarshal, then the text alert, or the
// rejection with json.Unmarshal's reason.
func stringLineReference(raw []byte, pos openrecall.Position) []Record {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return reject(nil, pos, "%s", jsonReason(err))
	}
	a, err := textAlert(s)
	if err != nil {
		return reject(nil, pos, "%v", err)
	}
	a.Position = pos
	return []Record{{Alert: a}}
}

// TestPropertyStringLineIsUnmarshal is an equivalence: a line that is a
// JSON string (or starts like one) reads as json.Unmarshal decodes it —
// escapes, surrogates, invalid UTF-8, control bytes, a broken end — to the
// same alert or the same rejection.
func TestPropertyStringLineIsUnmarshal(t *testing.T) {
	params := gopter.DefaultTestParametersWithSeed(20261204)
	params.MinSuccessfulTests = 1000
	props := gopter.NewProperties(params)
	piece := gen.OneConstOf(`a`, `disk full on db-1`, ` `, `\n`, `\"`, `\\`, `\/`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\udc00x`,
		`\u0000`, `\x`, `\u12`, "\t", "\x01", "\xff", "é", "\u2028", `<b>&</b>`, `"`, `\`)
	body := gen.SliceOf(piece).Map(func(ps []string) string {
		out := ""
		for _, p := range ps {
			out += p
		}
		return out
	})
	end := gen.OneConstOf(`"`, `"`, `"`, ``, `" `, `"x`, `\"`)
	props.Property("a string line reads as json.Unmarshal decodes it", prop.ForAll(
		func(b, e string) bool {
			raw := []byte(`"` + b + e)
			pos := openrecall.Position{Line: 1}
			p := &parser{}
			got := p.value(nil, raw, pos, 1, false)
			want := stringLineReference(bytes.TrimSpace([]byte(string(raw))), pos)
			if !reflect.DeepEqual(got, want) {
				t.Logf("line %q:\n got %+v\nwant %+v", raw, got, want)
				return false
			}
			return true
		},
		body, end,
	))
	props.TestingRun(t)
}
