// Package attack recognizes MITRE ATT&CK® references in an alert's strings
// and maps them to openrecall's attack_pattern value (DESIGN §4,
// "Security detections are attacks").
//
// The technique → tactic table is data: enterprise.tsv, derived from the
// ATT&CK Enterprise v18.1 STIX objects (see ATTRIBUTION), is embedded and
// parsed once by Enterprise. Parse reads a table of the same format.
//
// A Scan collects references from any number of strings: technique ids
// (T1611, T1059.001, a sub-technique also after '_' or '/'), tactic ids
// (TA0004), Sigma tags (attack.t1059.001, attack.t1059_001,
// attack.privilege_escalation, attack.privilege-escalation), Falco tags
// (mitre_privilege_escalation) and ATT&CK URLs
// (attack.mitre.org/techniques/T1098/001/, /tactics/TA0003/) anywhere in a
// text, and, through Value, the value of a field that says it holds ATT&CK
// (Wazuh's rule.mitre.tactic, Elastic's threat.tactic.name, Sentinel's
// tactics, a tags array's element): a list of tactic names in any case and
// spelling ("Defense Evasion, Persistence", "CredentialAccess"), technique
// names ("Valid Accounts") and ids. A reference in text counts only as a
// whole token: never inside another word, id, hex string, file name or a
// URL path other than ATT&CK's, and a technique id only when the table
// knows it.
//
// What a detection declares — a Value, a tag, an ATT&CK URL — outranks a bare
// id its text merely mentions. Pattern is the first declared tactic (else
// the first found) in the order of DESIGN §4's list
// (initial_access … resource_development; ATT&CK's exfiltration is
// data_exfiltration; ATT&CK v19's stealth and defense-impairment, which
// replaced Defense Evasion, are defense_evasion), so the result does not
// depend on the order of labels
// or of a technique's tactics. Techniques lists the technique ids found,
// sorted and without duplicates, as evidence.
//
// Recognition is deterministic, allocation-light and safe for concurrent use
// on one Table; a Scan belongs to one goroutine. The package imports only
// the standard library.
package attack
