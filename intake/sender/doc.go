// Package sender holds one adapter per alert sender that teams point at
// openrecall (DESIGN §3): Datadog, CloudWatch through SNS, Azure Monitor,
// Sentry, Zabbix, Falco through falcosidekick, Wazuh, and the others All
// lists. Each adapter is one small file: a shape test (Match) that
// recognises the sender's payload — in a file, a JSON Lines line or an HTTP
// body — and a mapping (Map) to events: the human title, the text with the
// evidence, the sender's own severity (its scale documented in the adapter,
// no documented value left unknown), service, environment, labels, the
// sender's stable id, the rule (the sender's check, exactly as sent),
// status, and the entity fields that name what acted.
//
// Payloads are read through Value, which reads leniently: an optional field
// of an unexpected type reads as absent, never as an error, so a sender's
// new or odd field never rejects an alert. Envelopes (an SNS notification)
// are opened and what they carry is recognised again. An object no adapter
// recognises is read by Generic (generic.go), as a person would read it;
// its fixtures, payloads of senders openrecall does not map, are under
// intake/testdata/generic/<sender>/.
//
// The built-in senders (Alertmanager, Grafana, Prometheus, PagerDuty Events
// v2, the product's own alert object) are recognised by intake itself;
// they are listed here for the registry and the documentation. All but the
// product's own object are mappings too: intake hands Prometheus's postable
// alerts, PagerDuty's events and Grafana's legacy notifications to theirs,
// and holds its webhook fast path equal to Alertmanager's (P165).
//
// The fixtures of every sender, with their origin and licence, are under
// intake/testdata/senders/<sender>/.
//
// A sender may also be a mapping, data rather than code (mapping.go): a
// YAML file of candidate fields and small expressions, compiled into a
// Sender; the built-in ones are embedded (mappings/*.yaml), a team's are
// read by LoadMappings.
//
// The package imports only the root package, the standard library, and for
// mappings go.yaml.in/yaml/v3 and github.com/expr-lang/expr.
package sender
