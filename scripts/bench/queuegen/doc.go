// Package queuegen generates large, realistic alert queues and the analyst
// decisions that seed memory for them, deterministically from a seed, for
// throughput benchmarks of openrecall analyze.
//
// A queue mixes every intake format (generic JSON objects, Alertmanager
// webhooks, Prometheus postable alerts, PagerDuty Events v2 and bare JSON
// strings) and the kinds of traffic an on-call shift sees: benign families
// that memory can vouch for (memory bypass), families with thinner memory
// (cheap model), novel real incidents and attacks (strong model), attacks
// dressed as a benign family, re-sent alerts (the same line again) and
// resolved notifications. The family texts follow the bundled example
// (package examples); the high-cardinality parts (pods, IPs, numbers, ids,
// timestamps) vary from alert to alert as they do in production.
package queuegen
