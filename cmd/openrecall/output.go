package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// The -o/--output vocabulary, the same in every command that prints
// results.
const (
	outputTable = "table" // for people: aligned columns or labelled lines
	outputJSON  = "json"  // one JSON document
	outputJSONL = "jsonl" // JSON Lines: one object per line
)

// addOutputFlag adds -o/--output (default table) to cmd.
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", outputTable,
		"output format: table, json (one JSON document) or jsonl (one JSON object per line)")
}

// checkOutput refuses an -o value outside the vocabulary.
func checkOutput(output string) error {
	return oneOf("output", output, outputTable, outputJSON, outputJSONL)
}

// writeJSON writes v as one JSON document: indented for -o json, on one
// line for -o jsonl.
func writeJSON(w io.Writer, output string, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if output == outputJSON {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// writeList writes a list as one JSON array (-o json) or one line per item
// (-o jsonl).
func writeList[T any](a *app, output string, list []T) error {
	if output == outputJSONL {
		for _, x := range list {
			if err := writeJSON(a.out, outputJSONL, x); err != nil {
				return err
			}
		}
		return nil
	}
	return writeJSON(a.out, outputJSON, list)
}

// jsonArray streams a JSON array, one element per line, so that -o json
// is one document without holding every element in memory.
type jsonArray struct {
	w io.Writer
	n int
}

func (j *jsonArray) add(v any) error {
	var b bytes.Buffer
	if err := writeJSON(&b, outputJSONL, v); err != nil {
		return err
	}
	sep := ",\n"
	if j.n == 0 {
		sep = "[\n"
	}
	j.n++
	_, err := io.WriteString(j.w, sep+strings.TrimSuffix(b.String(), "\n"))
	return err
}

// close ends the array; an empty one is [].
func (j *jsonArray) close() error {
	end := "\n]\n"
	if j.n == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(j.w, end)
	return err
}

// stickyWriter remembers the first write error. Standard output goes
// through one, so that commands print without checking every line and a
// failed write (a full disk, a closed file) is still reported, once, with
// exit status 1.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}
