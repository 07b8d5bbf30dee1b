package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGeneratedFileIsCurrent regenerates the encoders in memory and fails
// while the checked-in domain_gen.go differs: a struct tag changed and the
// encoders were not regenerated.
func TestGeneratedFileIsCurrent(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../domain_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("internal/jsonfast/domain_gen.go is not what the struct tags generate: run go generate ./internal/jsonfast")
	}
}
