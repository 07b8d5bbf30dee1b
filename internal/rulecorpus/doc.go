// Package rulecorpus reads the community Prometheus alert-rule corpus
// (testdata/prometheus-rules/rules.jsonl at the repository's root: 645
// rules of awesome-prometheus-alerts, CC BY 4.0, attributed in the
// ATTRIBUTION.md beside it) and renders its rules as the Alertmanager
// webhook alerts a real Prometheus would send, so that tests and benchmarks
// exercise the product on alerting vocabulary that nobody on this project
// wrote.
//
// Rendering follows Prometheus's template conventions: {{ $value }} (with or
// without a formatting pipe) becomes the firing's value, {{ $labels.NAME }}
// the label's value or "<no value>" when absent, and {{ $labels }} the Go map
// text of all labels. Every firing gets its own instance and value, so caches
// and memory see what a real queue holds.
package rulecorpus
