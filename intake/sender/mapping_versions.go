package sender

import (
	"regexp"

	"go.yaml.in/yaml/v3"
)

// This file reads and runs a mapping's versions: the shapes one sender
// has posted at its one endpoint over its releases (DESIGN §3: a sender's
// older payloads are that sender's too), each read as a mapping of its own
// under the sender's one name, table and doc.

// version is one shape of a sender's payload: the mapping that recognises
// and reads it, and when (if said) the conditions that make it the
// version that reads a payload.
type version struct {
	m    *mapping
	when []cond
}

// versionKeys are the keys of a version: those of a mapping file that say
// how a payload is recognised and read, and when.
var versionKeys = []string{"recognise", "when", "reject", "items", "tags", "pairs", "let", "parts"}

// readVersions reads versions: a list of at least two versions, each a
// mapping of versionKeys read with the file's head (its name, table,
// placeholders and blank values), its errors named versions[i].field. The
// file itself then says none of those keys.
func (l *loader) readVersions(top, n *yaml.Node, fields map[string]*yaml.Node) {
	for _, k := range versionKeys {
		if fields[k] != nil {
			l.fail(fields[k], k, "a mapping with versions says it in each version (versions[].%s)", k)
		}
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) < 2 {
		l.fail(n, "versions", "want a list of at least two versions, each {recognise: …, parts: …}")
		return
	}
	for i, e := range n.Content {
		sub := &loader{m: l.m.head(), env: map[string]any{scopeVar: (*scope)(nil)}, letIndex: map[string]int{}, read: map[string]bool{},
			prefix: fieldElem("versions", i)}
		f := sub.members(e, "", versionKeys)
		if e.Kind == yaml.MappingNode {
			sub.readBody(e, f)
		}
		var when []cond
		if w := f["when"]; w != nil {
			// Read of the payload, as recognise is: no let, no tag.
			saved := sub.env
			sub.env = map[string]any{scopeVar: (*scope)(nil)}
			when = sub.conds(w, "when")
			sub.env = saved
			if len(when) == 0 && len(sub.errs) == 0 {
				sub.fail(w, "when", "at least one condition, or no when (its recognise then)")
			}
		}
		l.errs = append(l.errs, sub.errs...)
		l.m.versions = append(l.m.versions, version{m: sub.m, when: when})
	}
}

// head returns a new mapping with m's head: what the file says of the
// sender as a whole, shared by its versions.
func (m *mapping) head() *mapping {
	return &mapping{
		file: m.file, name: m.name, nameLine: m.nameLine, display: m.display, security: m.security, episode: m.episode,
		keep: m.keep, levels: m.levels, scale: m.scale, ranges: m.ranges, doc: m.doc, blanks: m.blanks, blankRes: m.blankRes,
		paths: map[string]fieldPath{}, regexps: map[string]*regexp.Regexp{}, plucks: map[string][]fieldPath{},
	}
}

// matchVersions is the Match of a mapping with versions: some version
// recognises the payload.
func (m *mapping) matchVersions(v Value) bool {
	for _, ver := range m.versions {
		if ver.m.match(v) {
			return true
		}
	}
	return false
}

// readVersions is the Map of a mapping with versions: the first version
// whose when holds (without when: whose recognise holds) reads the
// payload; when none does (a payload sent to the sender's endpoint that no
// version recognises), the last.
func (m *mapping) readVersions(v Value) ([]Event, error) {
	for _, ver := range m.versions {
		if ver.when == nil && ver.m.match(v) || ver.when != nil && ver.m.holdsOf(v, ver.when) {
			return ver.m.read(v)
		}
	}
	return m.versions[len(m.versions)-1].m.read(v)
}

// holdsOf reports whether every condition holds of the payload v.
func (m *mapping) holdsOf(v Value, cs []cond) bool {
	s := m.newScope(v, v)
	defer s.release()
	return s.holdsAll(cs)
}

// field names a field of the version being read.
func (l *loader) field(field string) string {
	switch {
	case l.prefix == "":
		return field
	case field == "":
		return l.prefix
	}
	return l.prefix + "." + field
}
