package jsonfast_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/jsonfast"
)

// filler sets the fields of a value by reflection: every field, or each
// with probability keep, to values that exercise the encoding (JSON and
// HTML specials, invalid UTF-8, line separators, numbers at the exponent
// cut-offs, times with zones).
type filler struct {
	rng  *rand.Rand
	keep float64
}

var fillStrings = []string{"plain", "<b>&amp;</b>", "quote\" back\\slash", "ctl\x01\b\f\n\r\t", "bad\xff\xc3", "ls\u2028ps\u2029", "é😀", ""}
var fillFloats = []float64{0.85, 1e-7, 1e21, 123456.5, -0.25, 1, 0}

func (f filler) fill(v reflect.Value, depth int) {
	if f.keep < 1 && f.rng.Float64() >= f.keep {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fillStrings[f.rng.IntN(len(fillStrings))])
	case reflect.Int, reflect.Int64:
		if v.Type() == reflect.TypeOf(time.Duration(0)) {
			v.SetInt(int64(f.rng.IntN(5000)) * int64(time.Millisecond))
			return
		}
		v.SetInt(int64(f.rng.IntN(2000)) - 300)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Float64:
		v.SetFloat(fillFloats[f.rng.IntN(len(fillFloats))])
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			zone := time.FixedZone("", (f.rng.IntN(27)-13)*1800)
			v.Set(reflect.ValueOf(time.Date(2026, 11, 30, 17, 1, 2, f.rng.IntN(1e9), zone)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i), depth+1)
			}
		}
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		n := f.rng.IntN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			f.fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range f.rng.IntN(4) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			f.fill(k, depth+1)
			f.fill(e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	}
}

// TestAppendResultMatchesEncodingJSON compares the hand-written result
// encoder with encoding/json, both HTML modes, on results with every field
// set (a field added to any type a result holds is set here and must be
// written), with random fields left zero, and on the zero result.
func TestAppendResultMatchesEncodingJSON(t *testing.T) {
	results := filledResults(rand.New(rand.NewPCG(20261130, 1)), 400, openrecall.Result{})
	for i, r := range results {
		for _, html := range []bool{true, false} {
			var std bytes.Buffer
			enc := json.NewEncoder(&std)
			enc.SetEscapeHTML(html)
			stdErr := enc.Encode(r)
			got, err := jsonfast.AppendResult([]byte("prefix"), r, html)
			if (err != nil) != (stdErr != nil) {
				t.Fatalf("result %d (html %v): error %v, encoding/json %v", i, html, err, stdErr)
			}
			if stdErr != nil {
				continue
			}
			want := "prefix" + strings.TrimSuffix(std.String(), "\n")
			if string(got) != want {
				t.Fatalf("result %d (html %v):\n got %s\nwant %s", i, html, got, want)
			}
		}
	}
}

// filledResults returns first, then n results filled by rng: every field
// set, and every other one with random fields left zero.
func filledResults(rng *rand.Rand, n int, first ...openrecall.Result) []openrecall.Result {
	results := first
	for i := range n {
		var r openrecall.Result
		keep := 1.0
		if i%2 == 1 {
			keep = 0.6
		}
		filler{rng: rng, keep: keep}.fill(reflect.ValueOf(&r).Elem(), 0)
		results = append(results, r)
	}
	return results
}

// TestAppendAnalysisMatchesEncodingJSON is the same for an analysis
// alone.
func TestAppendAnalysisMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261130, 2))
	for i := range 300 {
		var a openrecall.Analysis
		if i > 0 {
			filler{rng: rng, keep: 0.7}.fill(reflect.ValueOf(&a).Elem(), 0)
		}
		for _, html := range []bool{true, false} {
			var std bytes.Buffer
			enc := json.NewEncoder(&std)
			enc.SetEscapeHTML(html)
			stdErr := enc.Encode(a)
			got, err := jsonfast.AppendAnalysis(nil, a, html)
			if (err != nil) != (stdErr != nil) || (err == nil && string(got) != strings.TrimSuffix(std.String(), "\n")) {
				t.Fatalf("analysis %d (html %v):\n got %s (%v)\nwant %s (%v)", i, html, got, err, std.String(), stdErr)
			}
		}
	}
}

// TestAppendResultFallsBack checks that a result encoding/json refuses
// (a non-finite score, a year past 9999) is refused with its error.
func TestAppendResultFallsBack(t *testing.T) {
	for _, r := range []openrecall.Result{
		{Triage: openrecall.TriageResult{Confidence: math.NaN()}},
		{Matches: []openrecall.Match{{Score: math.Inf(1)}}},
		{Audit: []openrecall.AuditEntry{{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}},
	} {
		_, stdErr := json.Marshal(r)
		got, err := jsonfast.AppendResult(nil, r, true)
		if stdErr == nil {
			if err != nil {
				t.Fatalf("error %v where encoding/json has none", err)
			}
			continue
		}
		if err == nil || err.Error() != stdErr.Error() || len(got) != 0 {
			t.Fatalf("AppendResult = %q, %v; encoding/json's error %v", got, err, stdErr)
		}
	}
}
