// Package detectcorpus reads the corpus of real security detection rules in
// testdata/security (Falco rules, Apache-2.0; Sigma rules, Detection Rule
// License 1.1; see its ATTRIBUTION) and renders their firings as the JSON
// payloads real senders deliver, so that tests see security alerts that
// nobody on this project wrote.
//
// Load reads the rules. Render gives, for each rule, a number of firings
// that differ in host, user, process, pid, container, addresses and time, in
// one of three delivery forms:
//
//   - Falcosidekick: the JSON falcosidekick's webhook output posts (its
//     FalcoPayload: uuid, output, priority, rule, time, output_fields,
//     source, tags, hostname), the output template's %field placeholders
//     filled as Falco fills them ("<NA>" and null for a field without value).
//     Syscall events in a container carry the container and Kubernetes
//     fields that Falco's append_output adds.
//   - Elastic: the body of a Kibana webhook connector on a detection rule's
//     action, {"rule": …, "alerts": [alert document]}, the alert document as
//     Elastic Security's alert schema documents it (kibana.alert.rule.name,
//     rule_id, severity, risk_score, threat[] with tactic and technique,
//     tags, author; kibana.alert.reason; ECS host, user, process, source,
//     destination).
//   - Alertmanager: the webhook (version 4) Alertmanager sends for the alert
//     falcosidekick's Alertmanager output posts: labels source=falco, rule,
//     alertname, eventsource, hostname, priority, severity, tags (sorted,
//     comma-joined) and one label per output field, annotations info,
//     description and summary.
//
// A Sigma rule has no Falco output template; in the Falcosidekick and
// Alertmanager forms its firing is the event a rule engine forwarding
// through falcosidekick would send: the title with the event's fields as
// output, the rule's tags, its level as priority and its author as the
// rule.author field (the DRL asks that messages based on matches keep the
// rule's author; the Elastic form keeps it in kibana.alert.rule.author).
//
// The corpus also holds Panther's rules (panther-labs/panther-analysis,
// Apache-2.0), which declare ATT&CK in their own way ("TA0006:T1110"
// reports): LoadPanther reads them, and RenderSIEM delivers them and the
// Sigma rules the ways a SIEM's detections reach openrecall (SIEMForms):
// Panther's Custom Webhook JSON, a SIEM's own JSON alert (tags, a rule
// object with a level, a logsource, source "siem"), Alertmanager with a
// forwarder's ATT&CK labels, and Alertmanager with only a source label
// naming the product. DeclaredPattern and Severity give the ground truth
// those firings are measured against.
//
// Every firing carries its ground truth: the rule's key and whether the
// rule has ATT&CK tags. Rendering is deterministic for a seed, and a firing's
// event (host, user, process, addresses, time) is the same in every form.
// The package imports only the standard library.
package detectcorpus
