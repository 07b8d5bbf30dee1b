// Package fingerprint extracts the Alert DNA of an alert (DESIGN §4): six
// canonical fields — error class, service role, dependency pattern, signal
// shape, attack pattern and environment — read from the alert's labels,
// service, environment, title and text by rules kept in a readable YAML file.
//
// The default rules are embedded (rules.yaml, see DefaultRules); a user's
// file loaded with LoadRules extends or replaces them through Rules.Merge.
// New compiles rules once into an Extractor, which is safe for concurrent
// use. Extraction is deterministic, independent of label order, and blind to
// high-cardinality noise (pods, addresses, numbers, timestamps): see
// Extractor.Normalize. An attack pattern is set only by explicit security
// signals in the alert. Explain reports which rule set each field.
//
// The extractor is built for queues: a prefilter finds every pattern's
// required literals (derived from its compiled syntax tree, as clauses of
// literals that must occur together) in one Aho–Corasick pass per string and
// runs a pattern's regex only where one of its clauses holds; the
// normalizer is hand-written scans, except for passes a cheap scan proves
// idle, and normalizes each distinct line of an alert once; and Extract
// keeps a bounded cache keyed by the normalized inputs the rules read
// (CacheStats), looked up without building a key string. Its results equal
// a naive interpreter of the same rules, which the property suite keeps
// (P35, P47).
//
// Identify gives the alert's identity (rule and service, DESIGN §4): which
// alert it is, where the DNA says what kind of trouble. Template masks a
// summary or title into a rule; the rules file's identity section adds
// per-rule identity labels; ExplainIdentity says where each part came from.
//
// The package imports only the root package, the standard library and the
// YAML parser.
package fingerprint
