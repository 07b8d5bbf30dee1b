// Command mutants measures the teeth of the property suite: it applies each
// semantic mutant of tests/property/mutants/ to a scratch copy of the tree
// (never the real checkout), runs the property suite alone on it, and prints
// per mutant whether a property killed it, then the kill rate. A mutant
// whose find text no longer occurs exactly once in its file does not apply:
// it is reported as an error, never counted as killed.
//
//	go run ./scripts/mutants [-profile fast|ci] [-seed N] [-only M03,M07] [-all] [-targeted [-rest 4m]] [-jobs N] [-shard I/N|auto/N [-changed K]]
//
// -targeted runs each mutant first against the properties its spec expects
// to kill it (the P<n> of its expect line) and, only when they do not, the
// whole suite under a time bound (-rest): a mutant the bounded rest does not
// kill in time is reported as survived, never as killed. It keeps the run
// short enough for CI; without it every mutant runs the whole suite.
//
// -jobs N judges N mutants at once, each on a scratch copy of its own (the
// default is the number of CPUs, at most 4): a mutant's time is mostly the
// link of the suite's test binary and one property's run, both bound to
// one core, so two copies on two cores take about half the wall time.
//
// -shard judges a slice of the set, and -changed adds the mutants of what
// the last commits touched (select.go): CI's run.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// mutant is one spec file: a single find/replace in one file that breaks
// one rule.
type mutant struct {
	ID, Path, File, Rule, Expect string
	Find, Replace                string
}

func main() {
	dir := flag.String("dir", "tests/property/mutants", "directory of mutant specs (*.mut)")
	profile := flag.String("profile", "fast", "property profile the suite runs under")
	seed := flag.String("seed", "20260101", "OPENRECALL_PBT_SEED")
	only := flag.String("only", "", "comma-separated mutant IDs to run (default all)")
	keep := flag.Bool("keep", false, "keep the scratch copy")
	all := flag.Bool("all", false, "run every property on each mutant (no -failfast), to list every property that kills it")
	flag.BoolVar(&targeted, "targeted", false, "run each mutant against the properties its spec expects first, then the rest of the suite under -rest")
	flag.DurationVar(&restBound, "rest", 4*time.Minute, "with -targeted, the time bound of the whole-suite run of a mutant its expected properties did not kill")
	jobs := flag.Int("jobs", min(runtime.NumCPU(), 4), "mutants judged at once, each on its own scratch copy")
	flag.StringVar(&shard, "shard", "", "I/N or auto/N: judge only the mutants whose place in ID order is I modulo N (auto: I is HEAD's commit count modulo N)")
	flag.IntVar(&changed, "changed", 0, "with -shard, also judge every mutant whose file or spec the last N commits touched")
	flag.Parse()
	failFast = !*all
	if err := run(*dir, *profile, *seed, *only, *keep, max(*jobs, 1)); err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(1)
	}
}

func run(dir, profile, seed, only string, keep bool, jobs int) error {
	ms, err := load(dir)
	if err != nil {
		return err
	}
	if only != "" {
		want := map[string]bool{}
		for _, id := range strings.Split(only, ",") {
			want[strings.TrimSpace(id)] = true
		}
		var sel []mutant
		for _, m := range ms {
			if want[m.ID] {
				sel = append(sel, m)
			}
		}
		ms = sel
	}
	if shard != "" {
		i, n, err := parseShard(shard)
		if err != nil {
			return err
		}
		if i < 0 {
			c, err := commitCount()
			if err != nil {
				return err
			}
			i = c % n
		}
		touched := map[string]bool{}
		if changed > 0 {
			if touched, err = touchedBy(changed); err != nil {
				return err
			}
		}
		var inShard, byChange int
		total := len(ms)
		ms, inShard, byChange = slice(ms, i, n, touched)
		fmt.Printf("shard %d/%d: %d of %d mutants, and %d more whose file or spec the last %d commits touched\n", i, n, inShard, total, byChange, changed)
	}
	jobs = min(jobs, max(len(ms), 1))
	scratches := make([]string, jobs)
	for i := range scratches {
		scratch, err := os.MkdirTemp("", "openrecall-mutants-")
		if err != nil {
			return err
		}
		if !keep {
			defer func() {
				if err := os.RemoveAll(scratch); err != nil {
					fmt.Fprintf(os.Stderr, "mutants: remove the scratch copy: %v\n", err)
				}
			}()
		}
		if err := copyTree(".", scratch); err != nil {
			return fmt.Errorf("copy the tree: %w", err)
		}
		scratches[i] = scratch
	}
	fmt.Printf("scratch copies %s, profile %s, seed %s, %d mutants, %d at once\n", strings.Join(scratches, " "), profile, seed, len(ms), jobs)
	// Each worker owns one scratch copy: a mutant is applied, judged and
	// restored there before the worker takes the next. The first worker
	// first runs the suite on its unmutated copy (the others start judging
	// meanwhile): a suite that fails unmutated would kill every mutant, so
	// then no verdict counts.
	var (
		mu                       sync.Mutex
		nKilled, nSurvived, nErr int
		wg                       sync.WaitGroup
		baseline                 error
	)
	next := make(chan mutant)
	for i, scratch := range scratches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				if killed, _, out := suite(scratch, profile, seed, "", 0); killed {
					mu.Lock()
					baseline = fmt.Errorf("the suite fails on the unmutated copy:\n%s", tail(out, 40))
					mu.Unlock()
					for range next { // drain: nothing judged now counts
					}
					return
				}
			}
			for m := range next {
				start := time.Now()
				status, detail := apply(scratch, m, profile, seed)
				mu.Lock()
				switch status {
				case "killed":
					nKilled++
				case "survived":
					nSurvived++
				default:
					nErr++
				}
				fmt.Printf("%-4s %-9s %-44s expect %-5s %5.0fs  %s\n", m.ID, status, trim(m.Rule, 44), m.Expect, time.Since(start).Seconds(), detail)
				mu.Unlock()
			}
		}()
	}
	for _, m := range ms {
		next <- m
	}
	close(next)
	wg.Wait()
	if baseline != nil {
		return baseline
	}
	judged := nKilled + nSurvived
	rate := 0.0
	if judged > 0 {
		rate = 100 * float64(nKilled) / float64(judged)
	}
	fmt.Printf("kill rate: %d of %d killed (%.0f%%), %d survived, %d errors (profile %s, seed %s)\n", nKilled, judged, rate, nSurvived, nErr, profile, seed)
	if nErr > 0 {
		return fmt.Errorf("%d mutants did not apply or did not build", nErr)
	}
	if nSurvived > 0 {
		return fmt.Errorf("%d mutants survived: the suite does not kill every mutant of its set", nSurvived)
	}
	return nil
}

// packageDir returns dir, or the nearest directory above it within root
// that holds a Go file: the package a mutated data file is embedded in.
func packageDir(root, dir string) string {
	for d := dir; d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		if gos, _ := filepath.Glob(filepath.Join(root, d, "*.go")); len(gos) > 0 {
			return d
		}
	}
	return "."
}

// apply mutates one file of the scratch copy, runs the suite and restores
// the file. It returns killed, survived or error, and a detail.
func apply(scratch string, m mutant, profile, seed string) (result, detail string) {
	path := filepath.Join(scratch, m.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		return "error", "does not apply: " + err.Error()
	}
	if n := strings.Count(string(orig), m.Find); n != 1 {
		return "error", fmt.Sprintf("does not apply: its find text occurs %d times in %s", n, m.File)
	}
	mutated := strings.Replace(string(orig), m.Find, m.Replace, 1)
	if err := os.WriteFile(path, []byte(mutated), 0o644); err != nil {
		return "error", err.Error()
	}
	defer func() {
		// Every later mutant runs on this copy: a file left mutated would
		// judge them all wrongly, so a failed restore is an error.
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			result, detail = "error", "restore "+m.File+": "+err.Error()
		}
	}()
	// The package of the mutated file is what can stop building (a mutant
	// changes one file); the suite's own build covers what imports it. A
	// file that is not Go (a sender's mapping, embedded) belongs to the
	// package of the nearest directory above it that holds Go files.
	if out, err := goCmd(scratch, nil, "build", "./"+filepath.ToSlash(packageDir(scratch, filepath.Dir(m.File)))); err != nil {
		return "error", "does not build: " + firstLine(out)
	}
	if targeted {
		if ids := expected(m.Expect); len(ids) > 0 {
			killed, by, out := suite(scratch, profile, seed, "^("+strings.Join(ids, "|")+")_", 0)
			if strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]") {
				return "error", "suite did not build: " + firstLine(out)
			}
			if killed {
				return "killed", "by " + by + " (expected)"
			}
		}
		killed, by, out := suite(scratch, profile, seed, "", restBound)
		switch {
		case strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]"):
			return "error", "suite did not build: " + firstLine(out)
		case strings.Contains(out, "panic: test timed out"):
			return "survived", fmt.Sprintf("the whole suite did not kill it within %s", restBound)
		case killed:
			return "killed", "by " + by
		}
		return "survived", ""
	}
	killed, by, out := suite(scratch, profile, seed, "", 0)
	if strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]") {
		return "error", "suite did not build: " + firstLine(out)
	}
	if killed {
		return "killed", "by " + by
	}
	return "survived", ""
}

// targeted and restBound are the -targeted and -rest flags; shard and
// changed are -shard and -changed (select.go).
var (
	targeted  bool
	restBound time.Duration
	shard     string
	changed   int
)

var propRe = regexp.MustCompile(`\bP\d+\b`)

// expected returns the property numbers an expect line names, in order
// and without repeats ("P40, steps (P15)" gives P40, P15).
func expected(expect string) []string {
	var ids []string
	seen := map[string]bool{}
	for _, id := range propRe.FindAllString(expect, -1) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// failFast stops the suite at the first failing property (the kill rate
// needs no more); -all turns it off.
var failFast = true

var failRe = regexp.MustCompile(`--- FAIL: TestProperties/(P\d+)_`)

// suite runs the property suite alone (only the properties sub matches
// when it is not empty, under the timeout bound when it is not 0); killed
// is true when it fails, by names the failing properties.
func suite(dir, profile, seed, sub string, bound time.Duration) (bool, string, string) {
	env := []string{"OPENRECALL_PBT_PROFILE=" + profile, "OPENRECALL_PBT_SEED=" + seed}
	run, timeout := "^TestProperties$", "15m"
	if sub != "" {
		run += "/" + sub
	}
	if bound > 0 {
		timeout = bound.String()
	}
	// -vet=off: make lint vets the tree; a mutant changes no test source,
	// and vetting the suite again for each one costs seconds.
	// -ldflags=-w: no DWARF in the test binary (a 90 MB link); a verdict
	// needs none, and leaving it out takes about 4 s off every mutant's
	// link on 2 cores. A panic's stack trace does not use it.
	args := []string{"test", "-count=1", "-vet=off", "-ldflags=-w", "-timeout", timeout, "-run", run, "./tests/property/"}
	if failFast {
		args = append(args[:1], append([]string{"-failfast"}, args[1:]...)...)
	}
	out, err := goCmd(dir, env, args...)
	var ids []string
	seen := map[string]bool{}
	for _, m := range failRe.FindAllStringSubmatch(out, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			ids = append(ids, m[1])
		}
	}
	by := strings.Join(ids, ",")
	if by == "" {
		by = firstLine(out)
	}
	return err != nil, by, out
}

func goCmd(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}

// load reads every *.mut spec of dir, in name order. A spec is
// "key: value" header lines (id, file, rule, expect), then
//
//	<<<<<<< find
//	...the exact text to find...
//	=======
//	...its replacement...
//	>>>>>>> replace
func load(dir string) ([]mutant, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.mut"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var ms []mutant
	ids := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		m, err := parse(string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		m.Path = p
		if prev, dup := ids[m.ID]; dup {
			return nil, fmt.Errorf("%s: id %s already used by %s", p, m.ID, prev)
		}
		ids[m.ID] = p
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("no mutants in %s", dir)
	}
	return ms, nil
}

func parse(s string) (mutant, error) {
	var m mutant
	head, body, ok := strings.Cut(s, "<<<<<<< find\n")
	if !ok {
		return m, fmt.Errorf("no '<<<<<<< find' line")
	}
	find, rest, ok := strings.Cut(body, "=======\n")
	if !ok {
		return m, fmt.Errorf("no '=======' line")
	}
	repl, _, ok := strings.Cut(rest, ">>>>>>> replace")
	if !ok {
		return m, fmt.Errorf("no '>>>>>>> replace' line")
	}
	// The line break before "=======" and ">>>>>>> replace" ends the
	// block, not the text.
	m.Find, m.Replace = strings.TrimSuffix(find, "\n"), strings.TrimSuffix(repl, "\n")
	for _, line := range strings.Split(head, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "id":
			m.ID = v
		case "file":
			m.File = v
		case "rule":
			m.Rule = v
		case "expect":
			m.Expect = v
		}
	}
	switch {
	case m.ID == "" || m.File == "" || m.Rule == "":
		return m, fmt.Errorf("id, file and rule are required")
	case m.Find == "" || m.Find == m.Replace:
		return m, fmt.Errorf("empty find text, or a replacement equal to it")
	}
	return m, nil
}

// copyTree copies the Go sources and data of src into dst, skipping .git,
// bin and local state.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", ".openrecall", "node_modules":
				if rel != "." {
					return filepath.SkipDir
				}
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return trim(l, 120)
		}
	}
	return ""
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func trim(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
