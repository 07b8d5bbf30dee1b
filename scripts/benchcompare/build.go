package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// hookEnv names the file a build of this harness writes its allocation
// counts and I/O counters to when it exits; unset, the hook does nothing.
const hookEnv = "OPENRECALL_BENCHCOMPARE_OUT"

// hookFile is added to cmd/openrecall of both builds (through go build
// -overlay: neither tree is touched). main.go's one os.Exit call is
// rewritten to call benchcompareExit, so the counts are read after run has
// returned (the database closed, the output flushed) and just before the
// process exits, whatever the command did.
const hookFile = `package main

import (
	"fmt"
	"os"
	"runtime/metrics"
	"strings"
)

// benchcompareExit is main's os.Exit in a build of make bench-compare: with
// ` + hookEnv + ` set, it first writes the process's cumulative heap
// allocations (runtime/metrics) and its /proc/self/io counters there.
func benchcompareExit(code int) {
	if path := os.Getenv("` + hookEnv + `"); path != "" {
		s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/tiny/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
		metrics.Read(s)
		var b strings.Builder
		for _, m := range s {
			if m.Value.Kind() == metrics.KindUint64 {
				fmt.Fprintf(&b, "%s: %d\n", m.Name, m.Value.Uint64())
			}
		}
		if io, err := os.ReadFile("/proc/self/io"); err == nil {
			b.Write(io)
		}
		_ = os.WriteFile(path, []byte(b.String()), 0o644)
	}
	os.Exit(code)
}
`

// hookName is the file name the hook takes in cmd/openrecall.
const hookName = "zz_benchcompare_exit.go"

// hookedMain returns main.go with its one os.Exit call replaced by
// benchcompareExit; the os import stays used.
func hookedMain(src []byte) ([]byte, error) {
	if n := bytes.Count(src, []byte("os.Exit(")); n != 1 {
		return nil, fmt.Errorf("cmd/openrecall/main.go has %d os.Exit calls, want exactly 1 to hook the allocation counts on", n)
	}
	out := bytes.Replace(src, []byte("os.Exit("), []byte("benchcompareExit("), 1)
	return append(out, []byte("\n// The os import stays used after bench-compare's rewrite.\nvar _ = os.Exit\n")...), nil
}

// build builds src's cmd/openrecall, with the exit hook laid over it, into
// bin; work holds the overlay's files.
func build(ctx context.Context, src, bin, work, label string) error {
	pkg := filepath.Join(src, "cmd", "openrecall")
	main, err := os.ReadFile(filepath.Join(pkg, "main.go"))
	if err != nil {
		return err
	}
	hooked, err := hookedMain(main)
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	replace := map[string]string{
		filepath.Join(pkg, "main.go"): filepath.Join(work, "main.go"),
		filepath.Join(pkg, hookName):  filepath.Join(work, hookName),
	}
	if err := os.WriteFile(replace[filepath.Join(pkg, "main.go")], hooked, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(replace[filepath.Join(pkg, hookName)], []byte(hookFile), 0o644); err != nil {
		return err
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return err
	}
	overlayPath := filepath.Join(work, "overlay.json")
	if err := os.WriteFile(overlayPath, overlay, 0o644); err != nil {
		return err
	}
	// -trimpath: the packages' build cache keys then do not hold the tree's
	// directory, so the temporary worktree of BASE reuses what the working
	// tree built wherever the sources are the same (the cgo SQLite driver
	// above all), and neither binary holds a temporary path.
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-overlay", overlayPath,
		"-ldflags", "-X main.version=benchcompare-"+label, "-o", bin, "./cmd/openrecall")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %w: %s", label, err, bytes.TrimSpace(out))
	}
	return nil
}

// git runs git in dir and returns its trimmed standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(errOut.Bytes()))
	}
	return strings.TrimSpace(string(out)), nil
}

// checkout adds a detached worktree of rev at dir and returns the function
// that removes it again.
func checkout(ctx context.Context, root, rev, dir string) (remove func() error, err error) {
	if _, err := git(ctx, root, "worktree", "add", "--detach", "--quiet", dir, rev); err != nil {
		return nil, err
	}
	return func() error {
		// A fresh context: the worktree goes even after an interrupt.
		_, err := git(context.Background(), root, "worktree", "remove", "--force", dir)
		return err
	}, nil
}
