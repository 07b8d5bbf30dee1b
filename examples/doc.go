// Package examples embeds the bundled example: a mixed-format alert queue
// (queue.jsonl) and the analyst decisions that seed its memory (seed.jsonl).
// `make run` seeds a fresh database with Seed and analyses Queue.
package examples

import (
	"bytes"
	_ "embed"
)

//go:embed queue.jsonl
var queue []byte

//go:embed seed.jsonl
var seed []byte

// Queue returns the bundled example alert queue (JSON Lines, mixed formats).
func Queue() []byte { return bytes.Clone(queue) }

// Seed returns the bundled example seed (JSON Lines of analyst decisions).
func Seed() []byte { return bytes.Clone(seed) }
