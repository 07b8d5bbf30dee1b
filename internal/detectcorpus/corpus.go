package detectcorpus

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Files are the corpus files Load reads, in order.
var Files = [...]string{"falco_rules.jsonl", "sigma_rules.jsonl"}

// ErrAbsent marks a corpus folder that is not there (tests skip on it, or
// fail under CI=true: testenv.Missing).
var ErrAbsent = errors.New("security detection corpus not found")

// LogSource says what a rule reads: Sigma's logsource, or for Falco product
// "falco" and the rule's event source (syscall, k8s_audit, aws_cloudtrail,
// gcp_auditlog, okta, github) as service.
type LogSource struct {
	Product  string `json:"product,omitempty"`
	Service  string `json:"service,omitempty"`
	Category string `json:"category,omitempty"`
}

// Rule is one detection rule of the corpus, as normalized there.
type Rule struct {
	Source      string `json:"source"` // "falco", "sigma" or "panther"
	ID          string `json:"id"`     // Falco: the rule name; Sigma: its UUID; Panther: its RuleID
	Title       string `json:"title"`
	Description string `json:"description"`
	Output      string `json:"output,omitempty"`   // Falco's output template
	Priority    string `json:"priority,omitempty"` // Falco: WARNING, CRITICAL, …
	Level       string `json:"level,omitempty"`    // Sigma: low … critical
	Severity    string `json:"severity,omitempty"` // Panther: Info, Low, Medium, High, Critical
	// Attack is a Panther rule's "MITRE ATT&CK" reports, "TA0006:T1110".
	Attack []string `json:"attack,omitempty"`
	// LogTypes are a Panther rule's log types, "AWS.CloudTrail".
	LogTypes       []string  `json:"logtypes,omitempty"`
	Status         string    `json:"status,omitempty"` // Sigma: test, stable, deprecated, …
	Tags           []string  `json:"tags"`
	LogSource      LogSource `json:"logsource"`
	Author         string    `json:"author,omitempty"`
	Date           string    `json:"date,omitempty"`
	Modified       string    `json:"modified,omitempty"`
	FalsePositives []string  `json:"falsepositives,omitempty"`
	Maturity       string    `json:"maturity,omitempty"`
	Enabled        *bool     `json:"enabled,omitempty"`
	Repo           string    `json:"repo"`
	Path           string    `json:"path"`
}

// Key returns the rule's key, unique in the corpus: source and id.
func (r Rule) Key() string { return r.Source + ":" + r.ID }

// tactics are the ATT&CK Enterprise tactic shortnames, with their ids and
// names, in the Enterprise matrix order.
var tactics = [...]struct{ short, id, name string }{
	{"reconnaissance", "TA0043", "Reconnaissance"},
	{"resource-development", "TA0042", "Resource Development"},
	{"initial-access", "TA0001", "Initial Access"},
	{"execution", "TA0002", "Execution"},
	{"persistence", "TA0003", "Persistence"},
	{"privilege-escalation", "TA0004", "Privilege Escalation"},
	{"defense-evasion", "TA0005", "Defense Evasion"},
	{"credential-access", "TA0006", "Credential Access"},
	{"discovery", "TA0007", "Discovery"},
	{"lateral-movement", "TA0008", "Lateral Movement"},
	{"collection", "TA0009", "Collection"},
	{"command-and-control", "TA0011", "Command and Control"},
	{"exfiltration", "TA0010", "Exfiltration"},
	{"impact", "TA0040", "Impact"},
	// ATT&CK v19 replaced Defense Evasion by these two; Sigma's rules use
	// them. Their ids are not in the v18.1 data this project has.
	{"stealth", "", "Stealth"},
	{"defense-impairment", "", "Defense Impairment"},
}

// tagTactic returns the index in tactics of a tactic tag (Sigma's
// attack.<tactic> with '-' or '_', Falco's mitre_<tactic>, an id with or
// without its name: TA0005, TA0005-defense-evasion), or -1.
func tagTactic(tag string) int {
	t := strings.ToLower(tag)
	if len(t) >= 6 && t[:2] == "ta" && allDigits(t[2:6]) && (len(t) == 6 || t[6] == '-') {
		for i, tc := range tactics {
			if tc.id != "" && strings.EqualFold(tc.id, t[:6]) {
				return i
			}
		}
		return -1
	}
	switch {
	case strings.HasPrefix(t, "attack."):
		t = t[len("attack."):]
	case strings.HasPrefix(t, "mitre_"):
		t = t[len("mitre_"):]
	default:
		return -1
	}
	t = strings.ReplaceAll(t, "_", "-")
	for i, tc := range tactics {
		if t == tc.short {
			return i
		}
	}
	return -1
}

// tagTechnique returns the technique id of a technique tag (T1059,
// T1059.001, attack.t1059.001, T1562-impair-defenses) in upper case, or "".
func tagTechnique(tag string) string {
	t := strings.ToUpper(strings.TrimPrefix(strings.ToLower(tag), "attack."))
	if i := strings.IndexByte(t, '-'); i > 0 {
		t = t[:i]
	}
	if len(t) != 5 && len(t) != 9 || t[0] != 'T' {
		return ""
	}
	for i := 1; i < len(t); i++ {
		if i == 5 {
			if t[i] != '.' {
				return ""
			}
			continue
		}
		if t[i] < '0' || t[i] > '9' {
			return ""
		}
	}
	return t
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// HasATTACK says whether the rule has ATT&CK tags: a technique (T1059,
// attack.t1059.001) or an Enterprise tactic (attack.execution,
// mitre_execution). It is the corpus's ground truth, computed here from the
// tags alone.
func (r Rule) HasATTACK() bool {
	for _, t := range r.Tags {
		if tagTactic(t) >= 0 || tagTechnique(t) != "" {
			return true
		}
	}
	return false
}

// Find returns the corpus folder testdata/security found by walking up from
// dir, or an error wrapping ErrAbsent.
func Find(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "testdata", "security")
		if _, err := os.Stat(filepath.Join(p, Files[0])); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no testdata/security above %s: %w", abs, ErrAbsent)
		}
	}
}

// Load reads every rule of the corpus files in dir, Falco's first, each in
// file order. Keys are unique.
func Load(dir string) ([]Rule, error) {
	var out []Rule
	seen := map[string]bool{}
	for _, name := range Files {
		path := filepath.Join(dir, name)
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", path, ErrAbsent)
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
		line := 0
		for sc.Scan() {
			line++
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var r Rule
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				_ = f.Close()
				return nil, fmt.Errorf("%s line %d: %w", path, line, err)
			}
			if r.Source != "falco" && r.Source != "sigma" || r.ID == "" || r.Title == "" {
				_ = f.Close()
				return nil, fmt.Errorf("%s line %d: rule without source, id or title", path, line)
			}
			if seen[r.Key()] {
				_ = f.Close()
				return nil, fmt.Errorf("%s line %d: rule %s twice", path, line, r.Key())
			}
			seen[r.Key()] = true
			out = append(out, r)
		}
		err = sc.Err()
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return out, nil
}
