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
	os.Setenv("XDG_CONFIG_HOME", dir)
	os.Unsetenv(envAuditKey)
	os.Unsetenv(envAuditKeyFile)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
