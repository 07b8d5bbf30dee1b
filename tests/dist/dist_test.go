// Package dist_test runs the release binaries of make dist: the static
// linux/amd64 and linux/arm64 builds in dist/ and their SHA256SUMS. Each
// must be a static ELF for its machine, print the stamped version, and
// seed a memory and analyze the bundled example (examples/queue.jsonl, as
// make run does) with exit 0 and make run's summary; the two architectures
// must decide the same. The arm64 binary runs under qemu-aarch64-static
// (Debian's qemu-user-static, called directly: a container has no binfmt
// registration); without it that half skips loudly, and under CI=true it
// fails. Run it with `make test-dist` (OPENRECALL_DIST names the directory,
// OPENRECALL_DIST_VERSION the expected version); plain go test skips it.
//
// TestImage (image_test.go) reads make image's OCI archive
// (OPENRECALL_IMAGE) and runs its binary from the image's root file
// system; TestCompose (compose_test.go) checks deploy/compose with every
// go test.
package dist_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/openrecall/openrecall/internal/testenv"
)

// queue is the bundled example make run analyses.
const queue = "../../examples/queue.jsonl"

// wantSummary is the summary line make run prints for the bundled example
// after memory seed (docs/performance.md, "Savings, honestly").
const wantSummary = "  records   95: 93 triaged, 2 resolved (recorded), 0 rejected"

// platform is one release binary and how this machine runs it.
type platform struct {
	arch    string
	machine elf.Machine
	qemu    string // the user-mode emulator when the host cannot run it
}

var platforms = []platform{
	{arch: "amd64", machine: elf.EM_X86_64, qemu: "qemu-x86_64-static"},
	{arch: "arm64", machine: elf.EM_AARCH64, qemu: "qemu-aarch64-static"},
}

// run is what one invocation of a binary did.
type run struct {
	stdout, stderr string
	code           int
}

// binary runs a release binary, natively or under its emulator; env and
// attr, when set, are the process's environment and attributes (the
// image's test runs it under chroot as the image's user).
type binary struct {
	prefix []string
	dir    string
	env    []string
	attr   *syscall.SysProcAttr
}

func (b binary) run(t *testing.T, args ...string) run {
	t.Helper()
	argv := append(slices.Clone(b.prefix), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.SysProcAttr = b.dir, b.env, b.attr
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := run{stdout: stdout.String(), stderr: stderr.String()}
	if exitErr, ok := err.(*exec.ExitError); ok {
		r.code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	return r
}

func TestReleaseBinaries(t *testing.T) {
	dir := os.Getenv("OPENRECALL_DIST")
	if dir == "" {
		t.Skip("the release binaries' test runs with make test-dist (OPENRECALL_DIST=dist)")
	}
	sums := readSums(t, dir)
	version := os.Getenv("OPENRECALL_DIST_VERSION")
	if version == "" {
		t.Fatal("OPENRECALL_DIST_VERSION is empty: make test-dist sets it to the version make dist stamped")
	}
	var want []string
	for _, p := range platforms {
		want = append(want, "openrecall-"+version+"-linux-"+p.arch)
	}
	// make image adds its archive's line (make test-dist runs it).
	if image := os.Getenv("OPENRECALL_IMAGE"); image != "" {
		want = append(want, filepath.Base(image))
		checkSum(t, image, sums[filepath.Base(image)])
	}
	var got []string
	for name := range sums {
		got = append(got, name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("SHA256SUMS lists %q, want %q", got, want)
	}

	example, err := filepath.Abs(queue)
	if err != nil {
		t.Fatal(err)
	}
	decisions := map[string]string{} // arch → analyze's stdout
	for _, p := range platforms {
		t.Run(p.arch, func(t *testing.T) {
			name := "openrecall-" + version + "-linux-" + p.arch
			path := filepath.Join(dir, name)
			checkSum(t, path, sums[name])
			checkStatic(t, path, p.machine)

			b := binary{prefix: []string{path}, dir: t.TempDir()}
			if runtime.GOOS != "linux" || runtime.GOARCH != p.arch {
				emu, err := exec.LookPath(p.qemu)
				if err != nil {
					if testenv.CI() {
						t.Fatalf("CI=true and no %s on PATH: apt-get install qemu-user-static", p.qemu)
					}
					t.Skipf("SKIPPED: the linux/%s binary did not run: no %s on PATH (apt-get install qemu-user-static, then make test-dist)", p.arch, p.qemu)
				}
				b.prefix = []string{emu, path}
			}

			r := b.run(t, "version")
			if wantLine := "openrecall " + version + " (" + runtime.Version() + ")\n"; r.code != 0 || r.stdout != wantLine {
				t.Errorf("version: exit %d, stdout %q, want exit 0 and %q\nstderr: %s", r.code, r.stdout, wantLine, r.stderr)
			}
			r = b.run(t, "version", "-o", "json")
			var v struct {
				Version  string `json:"version"`
				Revision string `json:"vcs_revision"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &v); r.code != 0 || err != nil || v.Version != version || v.Revision != "" {
				t.Errorf("version -o json: exit %d, %+v (%v), want version %q and no VCS stamp\nstdout: %s", r.code, v, err, version, r.stdout)
			}

			r = b.run(t, "--db", "example.db", "memory", "seed")
			if r.code != 0 || !strings.HasPrefix(r.stdout, "seeded 43 memories") {
				t.Fatalf("memory seed: exit %d, stdout %q, want exit 0 and 43 memories seeded\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			r = b.run(t, "--db", "example.db", "analyze", example)
			if r.code != 0 {
				t.Fatalf("analyze %s: exit %d, want 0\nstderr: %s", queue, r.code, r.stderr)
			}
			// The header names the store: a binary whose cgo SQLite were
			// a stub would have failed at memory seed already.
			if !strings.Contains(r.stderr, "memory=sqlite model=deterministic") || !slices.Contains(lines(r.stderr), wantSummary) {
				t.Errorf("analyze %s: summary lacks %q (and the memory=sqlite header):\n%s", queue, wantSummary, r.stderr)
			}
			decisions[p.arch] = r.stdout
		})
	}
	if a, b := decisions["amd64"], decisions["arm64"]; a != "" && b != "" && a != b {
		t.Errorf("analyze decided differently on amd64 and arm64:\namd64:\n%s\narm64:\n%s", a, b)
	}
}

// readSums reads dir/SHA256SUMS (sha256sum's format) into name → hex digest.
func readSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatalf("make dist writes SHA256SUMS: %v", err)
	}
	defer func() { _ = f.Close() }() // read-only: closing loses nothing
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("SHA256SUMS: line %q is not sha256sum's \"DIGEST  NAME\"", sc.Text())
		}
		sums[name] = sum
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sums
}

func checkSum(t *testing.T, path, want string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != want {
		t.Errorf("%s: SHA-256 %x, SHA256SUMS says %s", path, sum, want)
	}
}

// checkStatic checks what file's "statically linked" and ldd's "not a
// dynamic executable" say: no program interpreter and no shared library
// needed, and that the binary is for machine.
func checkStatic(t *testing.T, path string, machine elf.Machine) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read-only: closing loses nothing
	if f.Machine != machine {
		t.Errorf("%s: ELF machine %v, want %v", path, f.Machine, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s: has a %v program header: dynamically linked", path, p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s: needs shared libraries %q", path, libs)
	}
}

func lines(s string) []string { return strings.Split(s, "\n") }
