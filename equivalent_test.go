package openrecall

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// equivalentIgnores lists the places in a Result that Equivalent does not
// compare, each with the reason. A path ending in "." covers everything
// under it; a longer exact path listed in equivalentCompares overrides it.
// Every other place, including any field added to Result or to a type it
// holds, must make Equivalent report a difference: TestEquivalentRejects
// finds such a field by reflection and fails until Equivalent compares it
// or it is listed here with its reason.
var equivalentIgnores = map[string]string{
	"AnalysisID":           "an analysis id is new on every run",
	"Batch":                "a batch name is the run's",
	"Latency":              "latencies differ between runs",
	"FingerprintID":        "derived from the fingerprint, which is compared",
	"Alert.":               "one input gives one alert: its id names it",
	"Matches[0].Incident.": "a match's memory is named by its id",
	"Steps[0].Latency":     "latencies differ between runs",
	"Audit[0].Sequence":    "sequence numbers depend on what else the trail holds",
	"Audit[0].AnalysisID":  "an analysis id is new on every run",
	"Audit[0].Batch":       "a batch name is the run's",
	"Audit[0].Latency":     "latencies differ between runs",
	"Audit[0].Time":        "timestamps differ between runs",
	"Audit[0].PrevHash":    "hashes chain to what else the trail holds",
	"Audit[0].Hash":        "hashes chain to what else the trail holds",
}

// equivalentCompares are exact paths under an ignored prefix that
// Equivalent does compare.
var equivalentCompares = map[string]bool{
	"Alert.ID":               true,
	"Matches[0].Incident.ID": true,
}

// ignored returns the reason Equivalent ignores path, or "" when it must
// compare it.
func ignored(path string) string {
	if equivalentCompares[path] {
		return ""
	}
	if r, ok := equivalentIgnores[path]; ok {
		return r
	}
	for p, r := range equivalentIgnores {
		if strings.HasSuffix(p, ".") && strings.HasPrefix(path, p) {
			return r
		}
	}
	return ""
}

// change is one edit of a filled Result: the path it edits and how.
type change struct {
	path string
	edit func(reflect.Value) // edits the value at path
	at   []step
}

// step is one move from a value to a part of it.
type step struct {
	field int  // a struct field's index, or -1
	index bool // a slice's first element
	deref bool // a pointer's target
}

// filler gives every leaf a distinct non-zero value, the same sequence on
// every call, so two fills are equal and share no memory.
type filler struct{ n int }

func (f *filler) next() int { f.n++; return f.n }

var timeType = reflect.TypeFor[time.Time]()

func (f *filler) fill(t *testing.T, v reflect.Value) {
	t.Helper()
	if v.Type() == timeType {
		v.Set(reflect.ValueOf(time.Date(2026, 1, 1, 0, 0, f.next(), 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", f.next()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.next()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(f.next()) / 8)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		f.fill(t, k)
		f.fill(t, e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		f.fill(t, s.Index(0))
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill(t, p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				t.Fatalf("%s has the unexported field %s: teach this test how to fill and change it", v.Type(), v.Type().Field(i).Name)
			}
			f.fill(t, v.Field(i))
		}
	default:
		t.Fatalf("%s is a %s: teach this test how to fill and change it", v.Type(), v.Kind())
	}
}

// changes lists one edit per place in a value of type typ: every leaf
// (string, number, bool, map, time), every slice's length and every
// pointer's presence.
func changes(typ reflect.Type, path string, at []step) []change {
	here := func(p string, edit func(reflect.Value)) change {
		return change{path: p, edit: edit, at: append([]step(nil), at...)}
	}
	if typ == timeType {
		return []change{here(path, func(v reflect.Value) { v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Second))) })}
	}
	switch typ.Kind() {
	case reflect.String:
		return []change{here(path, func(v reflect.Value) { v.SetString(v.String() + "'") })}
	case reflect.Bool:
		return []change{here(path, func(v reflect.Value) { v.SetBool(!v.Bool()) })}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return []change{here(path, func(v reflect.Value) { v.SetInt(v.Int() + 1) })}
	case reflect.Float32, reflect.Float64:
		return []change{here(path, func(v reflect.Value) { v.SetFloat(v.Float() + 0.5) })}
	case reflect.Map:
		return []change{here(path, func(v reflect.Value) {
			k := reflect.New(typ.Key()).Elem()
			k.SetString("added")
			v.SetMapIndex(k, reflect.Zero(typ.Elem()))
		})}
	case reflect.Slice:
		out := []change{here(path+".len", func(v reflect.Value) { v.Set(reflect.Append(v, v.Index(0))) })}
		return append(out, changes(typ.Elem(), path+"[0]", append(at, step{field: -1, index: true}))...)
	case reflect.Pointer:
		out := []change{here(path+".nil", func(v reflect.Value) { v.Set(reflect.Zero(typ)) })}
		return append(out, changes(typ.Elem(), path+"->", append(at, step{field: -1, deref: true}))...)
	case reflect.Struct:
		var out []change
		for i := range typ.NumField() {
			name := typ.Field(i).Name
			if path != "" && !strings.HasSuffix(path, ">") {
				name = "." + name
			}
			out = append(out, changes(typ.Field(i).Type, path+name, append(at, step{field: i}))...)
		}
		return out
	}
	return nil // fill has already failed the test on any other kind
}

// TestEquivalentRejects fills a Result with distinct values everywhere,
// then changes one place at a time in a copy: Equivalent must report every
// change to a place it compares, naming it, and no change to a place it
// ignores by design (equivalentIgnores). Found by reflection, so a field
// added later is covered without editing this test.
func TestEquivalentRejects(t *testing.T) {
	base := func() Result {
		var r Result
		(&filler{}).fill(t, reflect.ValueOf(&r).Elem())
		return r
	}
	if err := Equivalent(base(), base()); err != nil {
		t.Fatalf("two equal fills: %v", err)
	}
	all := changes(reflect.TypeFor[Result](), "", nil)
	compared := 0
	for _, c := range all {
		t.Run(c.path, func(t *testing.T) {
			a, b := base(), base()
			v := reflect.ValueOf(&b).Elem()
			for _, s := range c.at {
				switch {
				case s.index:
					v = v.Index(0)
				case s.deref:
					v = v.Elem()
				default:
					v = v.Field(s.field)
				}
			}
			c.edit(v)
			if reflect.DeepEqual(a, b) {
				t.Fatalf("the edit of %s changed nothing", c.path)
			}
			err := Equivalent(a, b)
			if reason := ignored(c.path); reason != "" {
				if err != nil {
					t.Errorf("Equivalent reports a change of %s, which it ignores by design (%s): %v", c.path, reason, err)
				}
				return
			}
			compared++
			if err == nil {
				t.Errorf("Equivalent accepts a change of %s: compare it, or list it in equivalentIgnores with the reason", c.path)
			}
		})
	}
	t.Logf("%d places in a Result, %d compared", len(all), compared)
}
