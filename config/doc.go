// Package config loads openrecall's configuration: the embedded defaults
// (default.yaml, shown by `openrecall config show`) overlaid by an optional
// YAML file. Unknown keys are errors, so a typo never silently falls back to
// a default. Prices are written in dollars per million tokens for people and
// converted once, here, to integer nano-dollars.
package config
