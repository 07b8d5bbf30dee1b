// Package eval is openrecall's labelled replay benchmark: a corpus generator,
// a replay with a simulated analyst, the metrics and their report.
//
// A corpus is two files in one directory (see README.md): alerts.jsonl, one
// JSON value per line in any intake format (JSON objects, Alertmanager
// webhooks that may carry several alerts, PagerDuty events), and truth.jsonl,
// one line per alert in reading order with its ground truth: family, kind and
// the decision an analyst would take. Generate writes a synthetic corpus from
// a seed; ReadDir reads one someone else wrote.
//
// Replay runs a corpus in order through a pipeline (an Analyzer such as
// workflow.Session, which stores each result as a run does) with a
// simulated analyst: after each alert that was not bypassed, the analyst
// retains the ground-truth decision into memory, with a note per family,
// dead ends and the alert's own id, exactly as a person would with
// `openrecall retain`; decides each alert group once, through the use case
// of `openrecall retain --group` (a GroupDecider); and approves the
// exceptions memory proposes for alerts whose truth is benign (an
// Approver). The Report
// counts false closures — bypassed, closed by an exception or through a
// group — (the safety figure), the model calls exceptions saved, bypass recall, decision accuracy, escalations, cost against
// the always-strong baseline and model calls per tier, overall, per kind and
// per family. RunModes repeats the replay under each memory × model mode and
// says why a mode that is not available cannot run.
//
// The package holds no state between calls; a Replay is not safe for
// concurrent use with another Replay on the same memory.
package eval
