// Command openrecall triages alert queues with memory of past analyst
// decisions. See README.md for usage and exit codes.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], newStreams(os.Stdin, os.Stdout, os.Stderr))
	stop()
	os.Exit(code)
}
