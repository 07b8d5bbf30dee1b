package sender_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake/sender"
)

// mapped is a sender a team added, written in Go as a mapping file would
// define it: its title from "check".
func mapped(name string) sender.Sender {
	return sender.Sender{Name: name, Display: name + " (test)",
		Match: func(v sender.Value) bool { return v.Has("check") },
		Map: func(v sender.Value) ([]sender.Event, error) {
			var e sender.Event
			e.Set(sender.PartTitle, v.Get("check").String(), "check")
			return []sender.Event{e}, nil
		}}
}

// TestMergeOrderAndKinds: an added sender whose name is a built-in's
// (case-insensitive) replaces it in place; new ones come after every
// built-in, in the order given; each sender's kind says which it is.
func TestMergeOrderAndKinds(t *testing.T) {
	builtins := sender.All()
	set, err := sender.Merge(builtins, []sender.Sender{mapped("acme-monitor"), mapped("Datadog"), mapped("zeta")})
	if err != nil {
		t.Fatal(err)
	}
	names := set.Names()
	if len(names) != len(builtins)+2 {
		t.Fatalf("%d senders, want the %d built-ins and 2 new", len(names), len(builtins))
	}
	if got := names[len(builtins):]; !slices.Equal(got, []string{"acme-monitor", "zeta"}) {
		t.Errorf("new senders %v, want [acme-monitor zeta] after every built-in", got)
	}
	i := slices.Index(sender.Names(), "datadog")
	if names[i] != "Datadog" {
		t.Errorf("position %d is %q, want the override in the built-in's place", i, names[i])
	}
	if d, ok := set.Lookup("datadog"); !ok || d.Display != "Datadog (test)" {
		t.Errorf("Lookup(datadog) = %q, %v: want the override", d.Display, ok)
	}
	for name, want := range map[string]sender.Kind{
		"alertmanager": sender.KindReader, "sentry": sender.KindAdapter, "DATADOG": sender.KindOverride, "acme-monitor": sender.KindMapping,
	} {
		if got, ok := set.Kind(name); !ok || got != want {
			t.Errorf("Kind(%s) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if _, ok := set.Kind("nosuch"); ok {
		t.Error("Kind of an unknown sender reports one")
	}
	// The built-ins given are untouched.
	if !slices.Equal(sender.Names(), namesOf(builtins)) {
		t.Error("Merge modified the built-ins it was given")
	}
}

func namesOf(ss []sender.Sender) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// TestZeroSetIsTheBuiltins: the zero Set, what every caller that names
// no senders gets, is the built-in list; the package's Lookup and Names
// read it.
func TestZeroSetIsTheBuiltins(t *testing.T) {
	var zero sender.Set
	if !slices.Equal(zero.Names(), namesOf(sender.All())) || !slices.Equal(sender.Names(), zero.Names()) {
		t.Errorf("zero Set %v, want All's names %v", zero.Names(), namesOf(sender.All()))
	}
	if s, ok := sender.Lookup("SENTRY"); !ok || s.Name != "sentry" {
		t.Errorf("Lookup(SENTRY) = %q, %v", s.Name, ok)
	}
	if k, _ := zero.Kind("grafana"); k != sender.KindReader {
		t.Errorf("grafana is %q, want %q", k, sender.KindReader)
	}
	plain, err := sender.Merge(sender.All(), nil)
	if err != nil || !slices.Equal(plain.Names(), zero.Names()) {
		t.Errorf("Merge(All, nil) = %v, %v", plain.Names(), err)
	}
}

// TestMergeRefuses: an added sender with no usable name, a reserved name,
// a name given twice or no Map is refused, naming it.
func TestMergeRefuses(t *testing.T) {
	noMap := mapped("nomap")
	noMap.Map = nil
	builtin := mapped("flagged")
	builtin.Builtin = true
	tests := []struct {
		name  string
		extra []sender.Sender
	}{
		{"empty name", []sender.Sender{mapped("")}},
		{"slash in name", []sender.Sender{mapped("acme/monitor")}},
		{"space in name", []sender.Sender{mapped("acme monitor")}},
		{"leading dot", []sender.Sender{mapped(".acme")}},
		{"generic reading's name", []sender.Sender{mapped("json")}},
		{"a format's name", []sender.Sender{mapped("JSONL")}},
		{"twice", []sender.Sender{mapped("acme"), mapped("ACME")}},
		{"no map", []sender.Sender{noMap}},
		{"marked built-in", []sender.Sender{builtin}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := sender.Merge(sender.All(), tt.extra)
			if !errors.Is(err, openrecall.ErrInvalid) {
				t.Fatalf("err %v, want ErrInvalid", err)
			}
			if set.Senders() == nil || len(set.Names()) != len(sender.All()) {
				t.Errorf("a refused merge returned %d senders, want the zero Set (the built-ins)", len(set.Names()))
			}
		})
	}
}
