package fingerprint

import (
	"errors"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

func load(t *testing.T, name, src string) *Rules {
	t.Helper()
	r, err := LoadRules(strings.NewReader(src), name)
	if err != nil {
		t.Fatalf("LoadRules(%s): %v", name, err)
	}
	return r
}

func TestDefaultRulesLoad(t *testing.T) {
	r, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	if r.Name() != DefaultRulesName {
		t.Errorf("Name() = %q", r.Name())
	}
	for _, field := range openrecall.FingerprintFields {
		if r.fields[field] == nil {
			t.Errorf("default rules have nothing for field %s", field)
		}
	}
}

func TestLoadRulesErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		// want lists substrings the error must contain.
		want []string
	}{
		{"bad regex", `
fields:
  error_class:
    patterns:
      - name: broken
        value: timeout
        regex: 'time(out'
`, []string{"custom.yaml:7", "field error_class", `pattern "broken"`, "regex", `missing closing ) in "time(out"`}},
		{"non-canonical pattern value", `
fields:
  error_class:
    patterns:
      - name: shouty
        value: Time-Out
        regex: 'timeout'
`, []string{"custom.yaml:6", "field error_class", `pattern "shouty"`, `"Time-Out" is not a canonical token`, `did you mean "time_out"`}},
		{"non-canonical table value", `
fields:
  service_role:
    tables:
      - name: mine
        sources: [service]
        values:
          api: API Edge
`, []string{"custom.yaml:8", "field service_role", `table "mine"`, `entry "api"`, "not a canonical token"}},
		{"unknown field", `
fields:
  error_kind:
    patterns: []
`, []string{"custom.yaml:4", `unknown field "error_kind"`, "error_class"}},
		{"unknown pattern key", `
fields:
  error_class:
    patterns:
      - name: p
        value: timeout
        regexp: 'timeout'
`, []string{"custom.yaml:7", `pattern "p"`, `unknown key "regexp"`}},
		{"unknown source", `
fields:
  error_class:
    patterns:
      - name: p
        value: timeout
        regex: 'timeout'
        sources: [body]
`, []string{"custom.yaml:8", `pattern "p"`, `unknown source "body"`}},
		{"unknown top-level key", `
rules: []
`, []string{"custom.yaml:2", `unknown top-level key "rules"`}},
		{"pattern without name", `
fields:
  error_class:
    patterns:
      - value: timeout
        regex: 'timeout'
`, []string{"custom.yaml:5", "pattern without a name"}},
		{"duplicate pattern", `
fields:
  error_class:
    patterns:
      - {name: p, value: timeout, regex: 'timeout'}
      - {name: p, value: timeout, regex: 'timed out'}
`, []string{"custom.yaml:6", `pattern "p" defined twice`}},
		{"case-duplicate table key", `
fields:
  error_class:
    tables:
      - name: t
        sources: [label:alertname]
        values:
          Foo: timeout
          FOO: timeout
`, []string{"custom.yaml:9", `entry "FOO" repeats "Foo"`}},
		{"bad version", `
version: 2
`, []string{"custom.yaml:2", "version"}},
		{"not yaml", "fields: [\n", []string{"custom.yaml"}},
		{"replace not a bool", `
replace: sometimes
`, []string{"custom.yaml:2", "replace: want true or false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadRules(strings.NewReader(tt.src), "custom.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, openrecall.ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"pattern without regex", `
fields:
  error_class:
    patterns:
      - {name: only_value, value: timeout}
`, []string{"partial.yaml:5", "field error_class", `pattern "only_value" needs both regex and value`}},
		{"table without sources", `
fields:
  environment:
    tables:
      - name: envs
        values: {prd: prod}
`, []string{"partial.yaml:5", "field environment", `table "envs" has no sources`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := load(t, "partial.yaml", tt.src)
			_, err := New(r)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, openrecall.ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestMerge(t *testing.T) {
	defaults, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	crash := openrecall.Alert{Labels: labels("alertname", "KubePodCrashLooping")}
	tests := []struct {
		name     string
		override string
		alert    openrecall.Alert
		field    string
		want     string
	}{
		{"new table entry", `
fields:
  error_class:
    tables:
      - name: alertname
        values: {PaymentsSlow: latency_slo}
`, openrecall.Alert{Labels: labels("alertname", "PaymentsSlow")}, openrecall.FieldErrorClass, "latency_slo"},
		{"other entries kept", `
fields:
  error_class:
    tables:
      - name: alertname
        values: {PaymentsSlow: latency_slo}
`, crash, openrecall.FieldErrorClass, "crashloopbackoff"},
		{"entry overridden", `
fields:
  error_class:
    tables:
      - name: alertname
        values: {kubepodcrashlooping: config_error}
`, crash, openrecall.FieldErrorClass, "config_error"},
		{"entry removed falls through to patterns", `
fields:
  error_class:
    tables:
      - name: alertname
        values: {TargetDown: ""}
      - name: mine
        sources: [label:alertname]
        values: {Other: timeout}
`, openrecall.Alert{Labels: labels("alertname", "TargetDown"), Text: "dns lookup failed"}, openrecall.FieldErrorClass, "dns_failure"},
		{"value outside vocabulary, uppercase regex", `
fields:
  error_class:
    patterns:
      - name: gpu
        value: gpu_xid_error
        regex: 'Xid <num>|NVRM: Xid'
`, openrecall.Alert{Text: "NVRM: Xid 79, GPU has fallen off the bus"}, openrecall.FieldErrorClass, "gpu_xid_error"},
		{"new pattern wins over defaults", `
fields:
  error_class:
    patterns:
      - name: refused_is_dns_here
        value: dns_failure
        regex: 'connection refused'
`, openrecall.Alert{Text: "connection refused"}, openrecall.FieldErrorClass, "dns_failure"},
		{"pattern replaced in place", `
fields:
  environment:
    patterns:
      - name: text_prod
        regex: '\blive\b'
`, openrecall.Alert{Text: "live site down"}, openrecall.FieldEnvironment, "prod"},
		{"replaced pattern no longer matches old text", `
fields:
  environment:
    patterns:
      - name: text_prod
        regex: '\blive\b'
`, openrecall.Alert{Text: "production down"}, openrecall.FieldEnvironment, ""},
		{"pattern disabled", `
fields:
  attack_pattern:
    patterns:
      - name: path_traversal
        disabled: true
`, openrecall.Alert{Text: "GET /../../etc/passwd"}, openrecall.FieldAttackPattern, ""},
		{"table sources overridden", `
fields:
  environment:
    tables:
      - name: names
        sources: [label:stage]
`, openrecall.Alert{Environment: "prod"}, openrecall.FieldEnvironment, ""},
		{"replace drops defaults", `
replace: true
fields:
  error_class:
    patterns:
      - {name: only, value: timeout, regex: 'slow'}
`, crash, openrecall.FieldErrorClass, ""},
		{"replace keeps its own rules", `
replace: true
fields:
  error_class:
    patterns:
      - {name: only, value: timeout, regex: 'slow'}
`, openrecall.Alert{Text: "slow"}, openrecall.FieldErrorClass, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			merged := defaults.Merge(load(t, "custom.yaml", tt.override))
			e, err := New(merged)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			got, _ := e.Extract(tt.alert).Get(tt.field)
			if got != tt.want {
				_, ev := e.Explain(tt.alert)
				t.Errorf("%s = %q, want %q (evidence %+v)", tt.field, got, tt.want, ev)
			}
		})
	}
}

// TestMergeDoesNotModify checks that Merge leaves both inputs as they were.
func TestMergeDoesNotModify(t *testing.T) {
	defaults, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	override := load(t, "custom.yaml", `
fields:
  error_class:
    tables:
      - name: alertname
        values: {KubePodCrashLooping: config_error}
    patterns:
      - name: crashloop
        disabled: true
`)
	crash := openrecall.Alert{Labels: labels("alertname", "KubePodCrashLooping"), Text: "crash loop"}
	before := newExtractor(t, defaults).Extract(crash)
	merged := defaults.Merge(override)
	if got := newExtractor(t, merged).Extract(crash).ErrorClass; got != "config_error" {
		t.Fatalf("merged error_class = %q", got)
	}
	if after := newExtractor(t, defaults).Extract(crash); after != before {
		t.Errorf("defaults changed by Merge: %s, was %s", after, before)
	}
	if len(override.fields["error_class"].tables[0].values) != 1 || len(override.fields["error_class"].patterns) != 1 {
		t.Errorf("override changed by Merge")
	}
	if merged.Name() != DefaultRulesName+" + custom.yaml" {
		t.Errorf("merged Name() = %q", merged.Name())
	}
}

func newExtractor(t *testing.T, r *Rules) *Extractor {
	t.Helper()
	e, err := New(r)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
