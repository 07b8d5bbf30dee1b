package routing

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// BenchmarkParseAnalysis is the quality gate's one-pass parse of a model
// answer of the common shape, with an escape and a number in exponent form.
func BenchmarkParseAnalysis(b *testing.B) {
	const answer = `{"decision": "false_positive", "confidence": 0.92, "summary": "batch worker OOMKilled at the nightly peak; \"same as last week\"",
  "hypotheses": ["memory limit too low for the nightly batch", "a leak in the report exporter"],
  "verification_commands": ["kubectl -n batch describe pod report-7f9c", "kubectl top pod -n batch"],
  "next_steps": ["raise the limit to 2Gi"], "skip_paths": [], "cited_memory_ids": ["inc-0042", "inc-0107"], "model": "cheap", "live": false}`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseAnalysis(answer); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParseAnalysisEqualsTwoPass holds the one-pass answer parse to the
// two-pass reference on any text, as property P44 does on generated
// answers: the same analysis and the same error.
func FuzzParseAnalysisEqualsTwoPass(f *testing.F) {
	for _, s := range []string{
		`{"decision":"real","confidence":0.5}`,
		` {"decision": "false_positive", "confidence": 1e-1, "summary": "a\u00e9\"b", "hypotheses": [], "live": true} `,
		`{"decision":"real","confidence":01}`,
		`{"decision":"real","confidence":0.5,"decision":"real"}`,
		`{"decision":"real","confidence":0.5}{}`,
		`{"decision":"real","confidence":-0.5e+2,"next_steps":["x" , "y"],"model":"m"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, gotErr := ParseAnalysis(text)
		want, wantErr := ParseAnalysisTwoPass(text)
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("error %v, two-pass %v", gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("analysis %+v, two-pass %+v", got, want)
		}
	})
}

// TestParsedDecisionOwnsItsMemory: the decision of a parsed answer shares
// no memory with the answer text, so an open group's head, which keeps the
// decision for as long as the group may grow, does not keep the whole
// answer alive (issue [miss-path]: serve's heap grew by the answers).
func TestParsedDecisionOwnsItsMemory(t *testing.T) {
	tests := []struct{ answer, want string }{
		{`{"decision":"known_benign","confidence":0.9,"summary":"` + strings.Repeat("x", 4096) + `"}`, "known_benign"},
		{`{"decision":"real","confidence":0.5}`, "real"},
		{`{"decision":"not_a_decision","confidence":0.5}`, "not_a_decision"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			a, ok := decodeAnswer(tt.answer)
			if !ok || string(a.Decision) != tt.want {
				t.Fatalf("decodeAnswer: %q, %v; want %q", a.Decision, ok, tt.want)
			}
			text, d := unsafe.StringData(tt.answer), unsafe.StringData(string(a.Decision))
			if p := uintptr(unsafe.Pointer(d)); p >= uintptr(unsafe.Pointer(text)) && p < uintptr(unsafe.Pointer(text))+uintptr(len(tt.answer)) {
				t.Errorf("decision %q points into the answer text", a.Decision)
			}
		})
	}
}
