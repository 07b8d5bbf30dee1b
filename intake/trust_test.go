package intake

import (
	"strings"
	"testing"
)

// TestNestedTooDeep: JSON nested deeper than encoding/json's limit is
// rejected as nested too deep, with the record's position and the byte
// where the limit was passed — not as "unexpected character" (issue 33,
// item 10; fails without the fix). A value nested exactly to the limit is
// read.
func TestNestedTooDeep(t *testing.T) {
	nest := func(n int) string {
		return `{"title":"deep","data":` + strings.Repeat(`{"a":`, n-1) + "1" + strings.Repeat("}", n-1) + "}"
	}
	tests := []struct {
		name, in, pos string
	}{
		{"object", nest(maxJSONDepth + 5), "line 1"},
		{"array in an object", `{"title":"x","a":` + strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1) + "}", "line 1"},
		{"second line", `{"title":"ok"}` + "\n" + nest(maxJSONDepth+1), "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := readAll(t, tt.in, Options{})
			last := recs[len(recs)-1]
			if last.Err == nil {
				t.Fatalf("read as an alert: %+v", last.Alert)
			}
			if got := last.Err.Position.String(); got != tt.pos {
				t.Errorf("position %q, want %q", got, tt.pos)
			}
			if r := last.Err.Reason; !strings.Contains(r, "nested deeper than 10000 levels") || !strings.Contains(r, "at byte ") || strings.Contains(r, "unexpected character") {
				t.Errorf("reason %q, want nested too deep at a byte", r)
			}
		})
	}
	if recs := readAll(t, nest(maxJSONDepth-1), Options{}); len(recs) != 1 || recs[0].Err != nil {
		t.Errorf("a value nested to the limit: %+v", recs)
	}
}
