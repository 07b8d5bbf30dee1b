package templates

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Line is one labelled line: the text a template is made of and the id of
// the event it belongs to.
type Line struct {
	Event, Text string
}

// System is the labelled lines of one system.
type System struct {
	Name  string
	Lines []Line
}

// Score is how a template function groups one system's lines.
type Score struct {
	Lines     int     // lines scored
	Events    int     // distinct ground-truth events
	Templates int     // distinct templates (a line without one counts alone)
	Accuracy  float64 // grouping accuracy (Zhu et al.)
	Precision float64 // pairwise: pairs in one template that are one event
	Recall    float64 // pairwise: pairs of one event that share a template
	Mixed     float64 // share of lines in a template of two or more events
	NoTmpl    int     // lines without a template ("")
	// MixedTemplates lists the templates that mix events, with the events
	// they mix, most lines first (for a report).
	MixedTemplates []Mix
}

// Mix is a template that holds lines of several events.
type Mix struct {
	Template string
	Events   map[string]int
	Lines    int
}

// Evaluate groups the lines by template and scores the grouping against
// the events. A line whose template is "" has no identity: it is a group
// of its own.
func Evaluate(lines []Line, template func(string) string) Score {
	s := Score{Lines: len(lines)}
	group := make([]string, len(lines))
	for i, l := range lines {
		t := template(l.Text)
		if t == "" {
			s.NoTmpl++
			t = fmt.Sprintf("\x00line %d", i)
		}
		group[i] = t
	}
	byTmpl := map[string]map[string]int{}
	byEvent := map[string]map[string]int{}
	for i, l := range lines {
		if byTmpl[group[i]] == nil {
			byTmpl[group[i]] = map[string]int{}
		}
		byTmpl[group[i]][l.Event]++
		if byEvent[l.Event] == nil {
			byEvent[l.Event] = map[string]int{}
		}
		byEvent[l.Event][group[i]]++
	}
	s.Events, s.Templates = len(byEvent), len(byTmpl)
	correct, mixed := 0, 0
	for i, l := range lines {
		// Correct iff the template holds only this event and the event
		// only this template.
		if len(byTmpl[group[i]]) == 1 && len(byEvent[l.Event]) == 1 {
			correct++
		}
		if len(byTmpl[group[i]]) > 1 {
			mixed++
		}
	}
	pairs := func(n int) float64 { return float64(n) * float64(n-1) / 2 }
	var tp, predicted, actual float64
	for t, evs := range byTmpl {
		n := 0
		for _, c := range evs {
			tp += pairs(c)
			n += c
		}
		predicted += pairs(n)
		if len(evs) > 1 {
			s.MixedTemplates = append(s.MixedTemplates, Mix{Template: t, Events: evs, Lines: n})
		}
	}
	for _, ts := range byEvent {
		n := 0
		for _, c := range ts {
			n += c
		}
		actual += pairs(n)
	}
	sort.Slice(s.MixedTemplates, func(i, j int) bool {
		if s.MixedTemplates[i].Lines != s.MixedTemplates[j].Lines {
			return s.MixedTemplates[i].Lines > s.MixedTemplates[j].Lines
		}
		return s.MixedTemplates[i].Template < s.MixedTemplates[j].Template
	})
	if len(lines) > 0 {
		s.Accuracy = float64(correct) / float64(len(lines))
		s.Mixed = float64(mixed) / float64(len(lines))
	}
	s.Precision, s.Recall = 1, 1
	if predicted > 0 {
		s.Precision = tp / predicted
	}
	if actual > 0 {
		s.Recall = tp / actual
	}
	return s
}

// Summary is the mean of per-system scores (each system weighs the same,
// as in Zhu et al.) and the pooled share of mixed lines.
type Summary struct {
	Systems                     int
	Lines                       int
	Accuracy, Precision, Recall float64 // means over systems
	Mixed                       float64 // mixed lines over all lines
}

// Summarize averages the scores.
func Summarize(scores []Score) Summary {
	var sum Summary
	mixed := 0.0
	for _, s := range scores {
		sum.Systems++
		sum.Lines += s.Lines
		sum.Accuracy += s.Accuracy
		sum.Precision += s.Precision
		sum.Recall += s.Recall
		mixed += s.Mixed * float64(s.Lines)
	}
	if sum.Systems > 0 {
		n := float64(sum.Systems)
		sum.Accuracy, sum.Precision, sum.Recall = sum.Accuracy/n, sum.Precision/n, sum.Recall/n
	}
	if sum.Lines > 0 {
		sum.Mixed = mixed / float64(sum.Lines)
	}
	return sum
}

// LoadDir reads every *.tsv file of dir as one system named by the file:
// each non-empty line not starting with "#" is "EVENT<TAB>TEXT".
func LoadDir(dir string) ([]System, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.tsv"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("templates: no *.tsv in %s", dir)
	}
	sort.Strings(paths)
	var out []System
	for _, p := range paths {
		sys, err := loadTSV(p)
		if err != nil {
			return nil, err
		}
		out = append(out, sys)
	}
	return out, nil
}

func loadTSV(path string) (System, error) {
	f, err := os.Open(path)
	if err != nil {
		return System{}, err
	}
	defer func() { _ = f.Close() }() // read only
	sys := System{Name: strings.TrimSuffix(filepath.Base(path), ".tsv")}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ev, text, ok := strings.Cut(line, "\t")
		if !ok || ev == "" {
			return System{}, fmt.Errorf("%s:%d: want EVENT<TAB>TEXT", path, n)
		}
		sys.Lines = append(sys.Lines, Line{Event: ev, Text: text})
	}
	return sys, sc.Err()
}

// LoadLoghub reads Loghub's 2k samples from dir: a file
// NAME_2k.log_structured.csv (in a folder NAME or not) or NAME.csv per
// system, its Content and EventId columns. Only the systems named are read.
func LoadLoghub(dir string, names []string) ([]System, error) {
	var out []System
	for _, name := range names {
		path := loghubPath(dir, name)
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		sys, err := readLoghub(f, name)
		_ = f.Close() // read only
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, sys)
	}
	return out, nil
}

// loghubPath finds a system's structured sample in dir: a clone of Loghub
// (NAME/NAME_2k.log_structured.csv), its files side by side
// (NAME_2k.log_structured.csv) or NAME.csv; the first that exists.
func loghubPath(dir, name string) string {
	paths := []string{
		filepath.Join(dir, name, name+"_2k.log_structured.csv"),
		filepath.Join(dir, name+"_2k.log_structured.csv"),
		filepath.Join(dir, name+".csv"),
	}
	for _, p := range paths[:len(paths)-1] {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return paths[len(paths)-1]
}

func readLoghub(r io.Reader, name string) (System, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return System{}, err
	}
	content, event := -1, -1
	for i, h := range head {
		switch strings.TrimPrefix(h, "\ufeff") {
		case "Content":
			content = i
		case "EventId":
			event = i
		}
	}
	if content < 0 || event < 0 {
		return System{}, fmt.Errorf("no Content or EventId column")
	}
	sys := System{Name: name}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return sys, nil
		}
		if err != nil {
			return System{}, err
		}
		sys.Lines = append(sys.Lines, Line{Event: rec[event], Text: rec[content]})
	}
}
