package main

import (
	"encoding/json"
	"io"

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
