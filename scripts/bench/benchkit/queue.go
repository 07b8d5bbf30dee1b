package benchkit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"strings"

	"github.com/openrecall/openrecall/internal/rulecorpus"
	"github.com/openrecall/openrecall/scripts/bench/queuegen"
)

// WriteCorpusQueue writes the fixed corpus queue: n Alertmanager webhooks
// rendered by package rulecorpus from the rule corpus, firing i of rule i
// mod the number of rules. corpus is the rule corpus file, or "" for the
// repository's, found above the working directory. It returns the file size
// and the rule count.
func WriteCorpusQueue(path, corpus string, n int) (int64, int, error) {
	rules, err := LoadRules(corpus)
	if err != nil {
		return 0, 0, err
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	err = rulecorpus.WriteQueue(f, rules, n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, 0, err
	}
	size, err := fileSize(path)
	return size, len(rules), err
}

// LoadRules reads the rule corpus file, or finds the repository's above the
// working directory when corpus is "".
func LoadRules(corpus string) ([]rulecorpus.Rule, error) {
	if corpus == "" {
		return rulecorpus.LoadNear(".")
	}
	return rulecorpus.Load(corpus)
}

// WriteMissesQueue writes the miss-path queue: n free-text alerts, one JSON
// string a line, line i the summary and the first line of the description
// of rule i mod the rule count, rendered for firing i (its own instance and
// value) and ended by a reference no other line has. Every line differs,
// yet the normalizer masks the reference, so firings of one rule would share
// a fingerprint cache entry: the benchmarks run this queue with the caches
// off, on an empty memory that vouches for nothing, so every alert takes
// the whole miss path and the strong route unless grouping spares it. It
// returns the file size and the rule count.
func WriteMissesQueue(path, corpus string, n int) (int64, int, error) {
	rules, err := LoadRules(corpus)
	if err != nil {
		return 0, 0, err
	}
	if len(rules) == 0 {
		return 0, 0, fmt.Errorf("misses queue: no rules in the corpus")
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	for i := range n {
		line, err := json.Marshal(missLine(rules[i%len(rules)], i))
		if err == nil {
			_, err = bw.Write(append(line, '\n'))
		}
		if err != nil {
			_ = f.Close() // the write error says what went wrong
			return 0, 0, fmt.Errorf("misses queue: line %d: %w", i+1, err)
		}
	}
	if err := bw.Flush(); err != nil {
		_ = f.Close() // the flush error says what went wrong
		return 0, 0, err
	}
	if err := f.Close(); err != nil {
		return 0, 0, err
	}
	size, err := fileSize(path)
	return size, len(rules), err
}

// missLine renders firing i of rule r as one line of free text: "summary:
// first line of the description (ref 3f09c2a1d4e5)", the reference a hash
// of i, so that no two lines are equal.
func missLine(r rulecorpus.Rule, i int) string {
	labels := rulecorpus.Labels(r, rulecorpus.Firing{N: i})
	value := rulecorpus.Value(i)
	text := strings.TrimSpace(rulecorpus.Expand(r.Summary, labels, value))
	if text == "" {
		text = r.Alert
	}
	desc, _, _ := strings.Cut(strings.TrimSpace(rulecorpus.Expand(r.Description, labels, value)), "\n")
	if desc = strings.TrimSpace(desc); desc != "" {
		text += ": " + desc
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "miss %d", i)
	return fmt.Sprintf("%s (ref %012x)", text, h.Sum64()&0xffffffffffff)
}

// WriteGeneratedQueue writes queuegen's mixed queue of n alerts from seed
// and returns its counts by kind and the file size.
func WriteGeneratedQueue(path string, n int, seed int64) (queuegen.Counts, int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, 0, err
	}
	counts, err := queuegen.Write(f, n, seed)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, 0, err
	}
	size, err := fileSize(path)
	return counts, size, err
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
