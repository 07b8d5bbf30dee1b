package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// A slice of the mutant set, for a run that cannot afford every mutant (CI
// has two cores and each mutant links the suite's test binary: about 20 s
// of one core each). -shard I/N keeps the mutants whose place in ID order
// is I modulo N; "auto/N" takes I from the number of commits on HEAD, so
// successive landings judge successive slices and N of them judge them
// all. -changed K adds, whatever their slice, every mutant whose target
// file or spec one of the last K commits touched: the code a change is
// about is always judged.

// parseShard reads "I/N" or "auto/N"; auto is given as i < 0.
func parseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("-shard %q: want I/N or auto/N", s)
	}
	if n, err = strconv.Atoi(b); err != nil || n < 1 {
		return 0, 0, fmt.Errorf("-shard %q: N must be a whole number of at least 1", s)
	}
	if a == "auto" {
		return -1, n, nil
	}
	if i, err = strconv.Atoi(a); err != nil || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("-shard %q: I must be auto or a whole number from 0 to %d", s, n-1)
	}
	return i, n, nil
}

// slice returns the mutants of shard i of n (ms in ID order) and every
// mutant whose file or spec is in touched, with how many each rule chose.
func slice(ms []mutant, i, n int, touched map[string]bool) (sel []mutant, inShard, byChange int) {
	for k, m := range ms {
		switch {
		case k%n == i:
			inShard++
		case touched[filepath.ToSlash(m.File)] || touched[filepath.ToSlash(m.Path)]:
			byChange++
		default:
			continue
		}
		sel = append(sel, m)
	}
	return sel, inShard, byChange
}

// commitCount is the number of commits on HEAD.
func commitCount() (int, error) {
	out, err := exec.Command("git", "rev-list", "--count", "HEAD").Output()
	if err != nil {
		return 0, fmt.Errorf("git rev-list --count HEAD: %w", err)
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// touchedBy returns the files the last k commits of HEAD changed.
func touchedBy(k int) (map[string]bool, error) {
	out, err := exec.Command("git", "log", "-n", strconv.Itoa(k), "--format=", "--name-only", "HEAD").Output()
	if err != nil {
		return nil, fmt.Errorf("git log -n %d --name-only: %w", k, err)
	}
	files := map[string]bool{}
	for _, f := range strings.Fields(string(out)) {
		files[f] = true
	}
	return files, nil
}
