package routing

import (
	"reflect"
	"testing"
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
