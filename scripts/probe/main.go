// Command probe builds openrecall, starts `openrecall serve` on a loopback
// port over a new SQLite file and runs internal/probe's families against
// it: auth (every guarded route × bad credentials), hostile bodies (every
// ingest and write endpoint), field mutations (every sender fixture's
// fields removed, nulled, retyped, emptied) and the drain (every accepted
// delivery analysed exactly once). It prints a table and exits 1 on any
// failure.
//
//	go run ./scripts/probe            # every probe
//	go run ./scripts/probe -sample 10 # a fixed tenth
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/openrecall/openrecall/internal/probe"
)

func main() {
	os.Exit(run())
}

func run() int {
	sample := flag.Int("sample", 1, "keep one probe in `N` of each family (fixed choice)")
	bin := flag.String("bin", "", "openrecall binary to probe (default: go build ./cmd/openrecall)")
	keep := flag.Bool("keep", false, "keep the run's directory (database, config, serve.log)")
	drain := flag.Duration("drain", 5*time.Minute, "longest wait for accepted deliveries to be analysed")
	failures := flag.Int("failures", 20, "kinds of failure printed per family")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir, err := os.MkdirTemp("", "openrecall-probe-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		return 2
	}
	if *keep {
		fmt.Fprintln(os.Stderr, "probe: run directory", dir)
	} else {
		defer func() { _ = os.RemoveAll(dir) }()
	}
	if *bin == "" {
		*bin = filepath.Join(dir, "openrecall")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", *bin, "./cmd/openrecall")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "probe: go build:", err)
			return 2
		}
	}
	start := time.Now()
	rep, err := probe.Run(ctx, probe.Options{Bin: *bin, Dir: dir, Senders: "intake/testdata/senders", Sample: *sample, Drain: *drain, Log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		return 2
	}
	rep.Print(os.Stdout, *failures)
	fmt.Printf("\n%s, sample 1/%d\n", time.Since(start).Round(time.Second), *sample)
	if rep.Failed() > 0 {
		return 1
	}
	return 0
}
