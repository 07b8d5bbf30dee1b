package property

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/intake/sender"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// Sender tables (issue [teeth] point 3): for each sender, a table written
// from the sender's own documentation, independently of its mapping
// (tests/property/testdata/sendertables/NAME.yaml): which member carries
// the severity and what each documented value means, which carries the
// status and which values are recoveries, acknowledgements or
// confirmations, and which member is the rule. The property sets each
// documented value into one of the sender's fixtures and reads it as the
// sender.
const senderTablesDir = "testdata/sendertables"

// senderTable is one sender's table as written.
type senderTable struct {
	Sender   string     `yaml:"sender"`
	Fixture  string     `yaml:"fixture"`
	Severity tableField `yaml:"severity"`
	Status   tableField `yaml:"status"`
	Rule     tableRule  `yaml:"rule"`
	file     string
}

// tableField is a member (path) and what each documented value of it means
// (values), or cases, each setting several members at once.
type tableField struct {
	Path   tablePath         `yaml:"path"`
	Values map[string]string `yaml:"values"`
	Also   map[string]any    `yaml:"also"`
	Cases  []tableCase       `yaml:"cases"`
}

// tableCase sets members of the fixture (path → value) and says what the
// alert must read.
type tableCase struct {
	Set  map[string]any `yaml:"set"`
	Want string         `yaml:"want"`
}

// tableRule is the documented rule member: the alert's rule is its value,
// exactly, whatever is written into it.
type tableRule struct {
	Path   tablePath      `yaml:"path"`
	Values []string       `yaml:"values"`
	Also   map[string]any `yaml:"also"`
}

// tablePath is a member's path: keys joined by dots with [n] for an
// element ("alerts[0].labels.severity"), or a list of keys (a key that
// holds a dot).
type tablePath []any

func (p *tablePath) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		var keys []string
		if err := n.Decode(&keys); err != nil {
			return err
		}
		for _, k := range keys {
			*p = append(*p, k)
		}
		return nil
	}
	parsed, err := parseTablePath(n.Value)
	*p = parsed
	return err
}

var (
	tableIndex  = regexp.MustCompile(`^([^\[]*)((?:\[\d+\])*)$`)
	tableNumber = regexp.MustCompile(`\d+`)
)

func parseTablePath(s string) (tablePath, error) {
	var out tablePath
	for _, part := range strings.Split(s, ".") {
		m := tableIndex.FindStringSubmatch(part)
		if m == nil {
			return nil, fmt.Errorf("bad path %q", s)
		}
		if m[1] != "" {
			out = append(out, m[1])
		}
		for _, ix := range tableNumber.FindAllString(m[2], -1) {
			i, _ := strconv.Atoi(ix)
			out = append(out, i)
		}
	}
	return out, nil
}

// tableProbe is one documented value to try: what to set, and what the
// sender's alerts must read.
type tableProbe struct {
	Table int
	Kind  string // severity, status, rule
	Set   map[string]any
	Want  string
}

func (p tableProbe) String() string {
	t := senderTables()[p.Table]
	return fmt.Sprintf("%s (%s) %s %v → %s", t.Sender, t.file, p.Kind, p.Set, p.Want)
}

// tableIdentities names an alert's identity, as the pipeline does.
var tableIdentities = func() *fingerprint.Extractor {
	ex, err := fingerprint.New(nil)
	if err != nil {
		panic(err)
	}
	return ex
}()

var (
	senderTablesOnce []senderTable
	senderTablesErr  error
)

// senderTables reads every table once.
func senderTables() []senderTable {
	if senderTablesOnce != nil || senderTablesErr != nil {
		return senderTablesOnce
	}
	files, err := filepath.Glob(filepath.Join(senderTablesDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		senderTablesErr = fmt.Errorf("no sender tables under %s: %v", senderTablesDir, err)
		return nil
	}
	slices.Sort(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			senderTablesErr = err
			return nil
		}
		var t senderTable
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		dec.KnownFields(true)
		if err := dec.Decode(&t); err != nil {
			senderTablesErr = fmt.Errorf("%s: %v", f, err)
			return nil
		}
		t.file = filepath.Base(f)
		senderTablesOnce = append(senderTablesOnce, t)
	}
	return senderTablesOnce
}

// tableProbes lists every documented value of every table.
func tableProbes() []tableProbe {
	var out []tableProbe
	for i, t := range senderTables() {
		for _, f := range []struct {
			kind  string
			field tableField
		}{{"severity", t.Severity}, {"status", t.Status}} {
			keys := make([]string, 0, len(f.field.Values))
			for k := range f.field.Values {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				set := map[string]any{pathKey(f.field.Path): tableScalar(k)}
				for p, v := range f.field.Also {
					set[p] = v
				}
				out = append(out, tableProbe{Table: i, Kind: f.kind, Set: set, Want: f.field.Values[k]})
			}
			for _, c := range f.field.Cases {
				out = append(out, tableProbe{Table: i, Kind: f.kind, Set: c.Set, Want: c.Want})
			}
		}
		for _, v := range t.Rule.Values {
			set := map[string]any{pathKey(t.Rule.Path): v}
			for p, x := range t.Rule.Also {
				set[p] = x
			}
			out = append(out, tableProbe{Table: i, Kind: "rule", Set: set, Want: v})
		}
	}
	return out
}

// pathKey writes a path back as a set key: a path with a key holding a dot
// is written as JSON (a list of keys).
func pathKey(p tablePath) string {
	var b strings.Builder
	for i, k := range p {
		switch x := k.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", x)
		case string:
			if strings.ContainsAny(x, ".[]") {
				j, _ := json.Marshal([]any(p))
				return string(j)
			}
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(x)
		}
	}
	return b.String()
}

// tableScalar reads a documented value written as a YAML key: a whole
// number is sent as a JSON number when the table says so with "#" before
// it ("#4"), else as text.
func tableScalar(k string) any {
	if n, ok := strings.CutPrefix(k, "#"); ok {
		if i, err := strconv.Atoi(n); err == nil {
			return i
		}
	}
	return k
}

// setPath sets the member at path (a set key) in v, making objects on the
// way.
func setPath(v any, key string, val any) (any, error) {
	var p tablePath
	if strings.HasPrefix(key, "[\"") {
		var keys []any
		if err := json.Unmarshal([]byte(key), &keys); err != nil {
			return nil, err
		}
		p = keys
	} else {
		var err error
		if p, err = parseTablePath(key); err != nil {
			return nil, err
		}
	}
	var set func(cur any, p tablePath) (any, error)
	set = func(cur any, p tablePath) (any, error) {
		if len(p) == 0 {
			return val, nil
		}
		switch k := p[0].(type) {
		case string:
			obj, _ := cur.(map[string]any)
			if obj == nil {
				obj = map[string]any{}
			}
			next, err := set(obj[k], p[1:])
			obj[k] = next
			return obj, err
		case float64:
			p[0] = int(k)
			return set(cur, p)
		case int:
			arr, _ := cur.([]any)
			if k >= len(arr) {
				return cur, fmt.Errorf("no element %d in %v", k, cur)
			}
			next, err := set(arr[k], p[1:])
			arr[k] = next
			return arr, err
		}
		return cur, fmt.Errorf("bad path element %v", p[0])
	}
	return set(v, p)
}

// checkTableProbe sets the probe's members in the sender's fixture and
// reads it as the sender.
func checkTableProbe(p tableProbe) error {
	t := senderTables()[p.Table]
	body, err := os.ReadFile(filepath.Join("..", "..", "intake", "testdata", "senders", t.Sender, t.Fixture))
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("setup: %s: %v", t.Fixture, err)
	}
	keys := make([]string, 0, len(p.Set))
	for k := range p.Set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if v, err = setPath(v, k, p.Set[k]); err != nil {
			return fmt.Errorf("setup: %s: set %s: %v", t.file, k, err)
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	format, ok := intake.SenderFormat(sender.Set{}, t.Sender)
	if !ok {
		return fmt.Errorf("setup: %s: no sender %q", t.file, t.Sender)
	}
	recs, err := intake.ParseBytes(out, intake.Options{Format: format})
	if err != nil {
		return fmt.Errorf("read: %s: %v", p, err)
	}
	if len(recs) == 0 {
		return fmt.Errorf("read: %s: no alert", p)
	}
	for _, r := range recs {
		if r.Err != nil {
			return fmt.Errorf("read: %s: %v", p, r.Err)
		}
		a := r.Alert
		if a.Sender != t.Sender {
			return fmt.Errorf("read: %s: read as %q", p, a.Sender)
		}
		switch p.Kind {
		case "severity":
			if string(a.Severity) != p.Want {
				return fmt.Errorf("severity: %s: read %s", p, a.Severity)
			}
		case "status":
			got := a.Status
			if got == "" {
				got = openrecall.StatusFiring
			}
			if got != p.Want {
				return fmt.Errorf("status: %s: read %s", p, got)
			}
			if p.Want != openrecall.StatusFiring && openrecall.Triaged(a.Status) {
				return fmt.Errorf("notice: %s: status %s would be triaged", p, a.Status)
			}
		case "rule":
			// The rule an alert's identity names (an Alertmanager alert's
			// alertname label: intake's own readers leave Alert.Rule to it).
			if got := tableIdentities.Identify(a).Rule; got != strings.TrimSpace(p.Want) {
				return fmt.Errorf("rule: %s: read %q", p, got)
			}
		}
	}
	return nil
}

// senderTableProperties is P158.
func senderTableProperties() []pbt.Property {
	probes := tableProbes()
	gen := gg.IntRange(0, max(len(probes)-1, 0)).Map(func(i int) tableProbe { return tableProbes()[i] })
	return []pbt.Property{
		pbt.ForAll("P158_sender_tables_from_their_documentation",
			"Every sender's documented values mean what its documentation says, whatever its mapping says (tables written from each sender's documentation, tests/property/testdata/sendertables/): each documented severity value, set into one of the sender's fixtures, reads as the band of the table; each documented status value reads as its status, and a recovery, acknowledgement or confirmation is a notice (never triaged); the rule the alert's identity names is the documented rule member's value exactly, whatever it holds (a host, a number, a macro's expansion).",
			"TableProbeGen", gopter.Gen(gen), checkTableProbe,
			pbt.PinFunc("every documented value of every table", func() error {
				if senderTablesErr != nil {
					return fmt.Errorf("setup: %v", senderTablesErr)
				}
				for _, p := range probes {
					if err := checkTableProbe(p); err != nil {
						return err
					}
				}
				return nil
			}),
			pbt.Classify(func(p tableProbe) []string { return []string{p.Kind} }),
		),
	}
}
