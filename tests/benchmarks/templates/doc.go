// Package templates is the labelled template benchmark of DESIGN §4: log
// and alert lines with ground-truth event ids, grouped by
// fingerprint.Template and scored as Zhu et al. score log parsers (ICSE-SEIP
// 2019, "Tools and Benchmarks for Automated Log Parsing"): grouping
// accuracy (a line is correctly parsed iff the lines that share its
// template are exactly the lines of its event), pairwise precision and
// recall, and the share of lines whose template mixes two or more events —
// the unsafe error, since memory lets one event's decisions vouch for
// another's.
//
// The bundled data lives in tests/benchmarks/data/templates (see its
// ATTRIBUTION); Loghub's 2k samples, whose licence does not allow bundling
// them, are read from a directory when one is named (LoadLoghub).
package templates
