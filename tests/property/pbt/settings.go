package pbt

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Environment variables the helper reads.
const (
	// EnvSeed is the base seed; every property derives its own from it.
	EnvSeed = "OPENRECALL_PBT_SEED"
	// EnvProfile names the profile: fast, ci, conformance or nightly.
	EnvProfile = "OPENRECALL_PBT_PROFILE"
	// EnvCase replays one case, written <caseSeed>:<size>.
	EnvCase = "OPENRECALL_PBT_CASE"
)

// DefaultSeed is the base seed when OPENRECALL_PBT_SEED is unset.
const DefaultSeed int64 = 20260101

// Profile fixes how hard a run searches: the number of generated cases per
// property, the largest size parameter of the size ramp and the largest
// number of accepted shrink steps.
type Profile struct {
	Name       string
	Cases      int
	MaxSize    int
	MaxShrinks int
}

// ProfileNamed returns the profile called name ("fast", "ci", "conformance"
// or "nightly"). conformance is ci's sizes on a third of its cases: the
// storage properties run again on PostgreSQL (make test-pg) after the ci
// run on SQLite has searched the generators' whole reach, to check that
// the other backend behaves the same, so they need not search it again.
func ProfileNamed(name string) (Profile, error) {
	switch name {
	case "fast":
		return Profile{Name: "fast", Cases: 40, MaxSize: 20, MaxShrinks: 200}, nil
	case "ci":
		return Profile{Name: "ci", Cases: 150, MaxSize: 40, MaxShrinks: 500}, nil
	case "conformance":
		return Profile{Name: "conformance", Cases: MinCasesForCoverage, MaxSize: 40, MaxShrinks: 500}, nil
	case "nightly":
		return Profile{Name: "nightly", Cases: 2000, MaxSize: 100, MaxShrinks: 2000}, nil
	}
	return Profile{}, fmt.Errorf("profile %q is not one of fast, ci, conformance, nightly", name)
}

// Case identifies one generated case: the seed of its random stream and its
// size parameter. A case regenerates the same value under any profile.
type Case struct {
	Seed int64
	Size int
}

// String returns the case as <seed>:<size>, the form OPENRECALL_PBT_CASE reads.
func (c Case) String() string { return fmt.Sprintf("%d:%d", c.Seed, c.Size) }

// ParseCase parses <seed>:<size>.
func ParseCase(s string) (Case, error) {
	seed, size, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Case{}, fmt.Errorf("case %q: want <caseSeed>:<size>", s)
	}
	n, err := strconv.ParseInt(seed, 10, 64)
	if err != nil {
		return Case{}, fmt.Errorf("case %q: seed: %w", s, err)
	}
	z, err := strconv.Atoi(size)
	if err != nil || z < 0 {
		return Case{}, fmt.Errorf("case %q: size must be a non-negative integer", s)
	}
	return Case{Seed: n, Size: z}, nil
}

// Settings is how one run of the suite searches.
type Settings struct {
	// Seed is the base seed.
	Seed int64
	// Profile is the search profile.
	Profile Profile
	// Replay, when set, runs only this case of every selected property.
	Replay *Case
	// Package is the package path the replay command names, such as
	// "./tests/property/".
	Package string
}

// FromEnv reads the settings from the environment. short (testing.Short())
// selects the fast profile when OPENRECALL_PBT_PROFILE is unset; the default
// is ci.
func FromEnv(short bool) (Settings, error) {
	s := Settings{Seed: DefaultSeed, Package: packagePath()}
	if v := strings.TrimSpace(os.Getenv(EnvSeed)); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return Settings{}, fmt.Errorf("%s=%q: %w", EnvSeed, v, err)
		}
		s.Seed = n
	}
	name := strings.TrimSpace(os.Getenv(EnvProfile))
	if name == "" {
		name = "ci"
		if short {
			name = "fast"
		}
	}
	p, err := ProfileNamed(name)
	if err != nil {
		return Settings{}, fmt.Errorf("%s: %w", EnvProfile, err)
	}
	s.Profile = p
	if v := strings.TrimSpace(os.Getenv(EnvCase)); v != "" {
		c, err := ParseCase(v)
		if err != nil {
			return Settings{}, fmt.Errorf("%s: %w", EnvCase, err)
		}
		s.Replay = &c
	}
	return s, nil
}

// packagePath returns the working directory (the package under test) as a
// "./path/" relative to the module root, or "." when it cannot tell.
func packagePath() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	dir := wd
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel) + "/"
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}

// PropertySeed derives a property's seed from the base seed and its ID, so a
// property's cases do not depend on which other properties run.
func PropertySeed(base int64, id string) int64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return int64(mix(h.Sum64()^uint64(base)) >> 1)
}

// CaseSeed derives the seed of case i of a property.
func CaseSeed(propertySeed int64, i int) int64 {
	return int64(mix(uint64(propertySeed)+uint64(i)*0x9e3779b97f4a7c15) >> 1)
}

// CaseSize returns the size parameter of case i of n: a linear ramp from 0 to
// maxSize.
func CaseSize(i, n, maxSize int) int {
	if n <= 1 {
		return maxSize
	}
	if i >= n {
		return maxSize
	}
	return i * maxSize / (n - 1)
}

// mix is splitmix64's finalizer.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
