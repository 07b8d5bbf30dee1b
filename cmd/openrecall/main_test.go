package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain keeps the audit key away from the real home: the key file is
// created under a temporary XDG_CONFIG_HOME, for in-process commands and
// for the built binary alike.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "openrecall-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Without these the tests would create or read a key in the real home.
	for _, err := range []error{
		os.Setenv("XDG_CONFIG_HOME", dir),
		os.Unsetenv(envAuditKey),
		os.Unsetenv(envAuditKeyFile),
	} {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	// A leftover temporary directory does not change the tests' verdict;
	// say so rather than fail the run.
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, "remove temporary config home:", err)
	}
	os.Exit(code)
}
