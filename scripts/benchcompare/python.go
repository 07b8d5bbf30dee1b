package main

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// loadsScript reads the file once to warm up, then again timing the CPU of
// reading every non-empty line and decoding it with json.loads; it prints
// the line count and the CPU nanoseconds (interpreter start-up excluded).
const loadsScript = `import json, sys, time
def once(path):
    n = 0
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                json.loads(line)
                n += 1
    return n
once(sys.argv[1])
t0 = time.process_time_ns()
n = once(sys.argv[1])
print(n, time.process_time_ns() - t0)
`

// jsonLoads returns Python's CPU µs per line for json.loads of the file,
// which must have want lines.
func jsonLoads(ctx context.Context, python, path string, want int) (float64, error) {
	out, err := exec.CommandContext(ctx, python, "-c", loadsScript, path).Output()
	if err != nil {
		return 0, fmt.Errorf("%s json.loads: %w", python, err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return 0, fmt.Errorf("%s json.loads printed %q, want a count and nanoseconds", python, out)
	}
	n, err1 := strconv.Atoi(f[0])
	ns, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || n != want {
		return 0, fmt.Errorf("%s json.loads printed %q, want %d lines and nanoseconds", python, out, want)
	}
	return float64(ns) / 1e3 / float64(n), nil
}
