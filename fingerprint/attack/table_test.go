package attack

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestEnterpriseTable(t *testing.T) {
	tab := Enterprise()
	domain, version := tab.Version()
	if domain != "enterprise-attack" || version != "18.1" {
		t.Errorf("Version() = %q %q, want enterprise-attack 18.1", domain, version)
	}
	tactics := tab.Tactics()
	if len(tactics) != 14 {
		t.Fatalf("%d tactics, want the 14 of Enterprise", len(tactics))
	}
	seen := map[string]bool{}
	for _, tc := range tactics {
		seen[tc.Pattern] = true
	}
	for _, p := range Patterns() {
		if !seen[p] {
			t.Errorf("no tactic maps to %s", p)
		}
	}
	techs := tab.Techniques()
	count := map[string]int{}
	for _, tt := range techs {
		count[tt.Status]++
		if len(tt.Tactics) == 0 {
			t.Errorf("%s has no tactic", tt.ID)
		}
		if tt.Status == "revoked" && tt.RevokedBy == "" {
			t.Errorf("%s is revoked by nothing", tt.ID)
		}
	}
	if count["active"] != 691 || count["deprecated"] != 12 || count["revoked"] != 132 {
		t.Errorf("statuses = %v, want 691 active, 12 deprecated, 132 revoked", count)
	}
	if !slices.IsSortedFunc(techs, func(a, b Technique) int { return strings.Compare(a.ID, b.ID) }) {
		t.Error("techniques are not in id order")
	}
	t.Logf("ATT&CK %s %s: %d tactics, %d techniques %v", domain, version, len(tactics), len(techs), count)
}

func TestTechniqueLookups(t *testing.T) {
	tab := Enterprise()
	tests := []struct {
		id      string
		tactics []string
		status  string
	}{
		{"T1611", []string{"privilege-escalation"}, "active"},
		{"T1059", []string{"execution"}, "active"},
		{"t1059.001", []string{"execution"}, "active"},
		{"T1048", []string{"exfiltration"}, "active"},
		{"T1078", []string{"defense-evasion", "persistence", "privilege-escalation", "initial-access"}, "active"},
		{"T1086", []string{"execution"}, "revoked"},
	}
	for _, tt := range tests {
		got, ok := tab.Technique(tt.id)
		if !ok {
			t.Errorf("Technique(%s) not found", tt.id)
			continue
		}
		if !slices.Equal(got.Tactics, tt.tactics) || got.Status != tt.status {
			t.Errorf("Technique(%s) = %v %s, want %v %s", tt.id, got.Tactics, got.Status, tt.tactics, tt.status)
		}
	}
	if got, _ := tab.Technique("T1086"); got.RevokedBy != "T1059.001" {
		t.Errorf("T1086 revoked by %q, want T1059.001", got.RevokedBy)
	}
	for _, id := range []string{"T9999", "T1059.000", "T105", "TA0004", "X1059", ""} {
		if _, ok := tab.Technique(id); ok {
			t.Errorf("Technique(%q) found", id)
		}
	}
	if tc, ok := tab.TacticByID("TA0004"); !ok || tc.Shortname != "privilege-escalation" || tc.Pattern != PrivilegeEscalation {
		t.Errorf("TacticByID(TA0004) = %+v %v", tc, ok)
	}
	if _, ok := tab.TacticByID("TA0027"); ok {
		t.Error("TacticByID(TA0027) (a Mobile tactic) found in Enterprise")
	}
}

func TestPatternOf(t *testing.T) {
	tests := map[string]string{
		"privilege-escalation": PrivilegeEscalation,
		"Command_and_Control":  CommandAndControl,
		"exfiltration":         DataExfiltration,
		"Resource Development": ResourceDevelopment,
		"data_destruction":     "",
		"":                     "",
	}
	for in, want := range tests {
		if got := PatternOf(in); got != want {
			t.Errorf("PatternOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	tests := []string{
		"",
		"tactic\tTA0004\tprivilege-escalation\n",
		"tactic\tTA0004\tprivilege-escalation\tPrivilege Escalation\ntechnique\tT1611\tnope\tactive\t\tEscape to Host\n",
		"tactic\tTA0004\tprivilege-escalation\tPrivilege Escalation\ntechnique\tT16\tprivilege-escalation\tactive\t\tEscape\n",
		"tactic\tTA0004\tprivilege-escalation\tPrivilege Escalation\ntechnique\tT1611\tprivilege-escalation\tgone\t\tEscape\n",
		"tactic\tTA0004\tsomething-else\tSomething\n",
		"tactic\tTA0004\tprivilege-escalation\tPrivilege Escalation\ntechnique\tT1611\tprivilege-escalation\tactive\t\tA\ntechnique\tT1611\tprivilege-escalation\tactive\t\tB\n",
		"bogus\tline\n",
	}
	for _, in := range tests {
		if _, err := Parse(strings.NewReader(in)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) error = %v, want ErrInvalid", in, err)
		}
	}
}

func TestParseSmallTable(t *testing.T) {
	in := "# comment\nversion\tx\t1\ntactic\tTA0004\tprivilege-escalation\tPrivilege Escalation\n" +
		"technique\tT1611\tprivilege-escalation\tactive\t\tEscape to Host\n"
	tab, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if p, ids := tab.Tactic("T1611 and T1059"); p != PrivilegeEscalation || !slices.Equal(ids, []string{"T1611"}) {
		t.Errorf("small table: %q %v", p, ids)
	}
	if p, _ := tab.Tactic("attack.execution"); p != "" {
		t.Errorf("a tactic the table lacks was recognized: %q", p)
	}
}
