package openrecall_test

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docFiles are the documents whose relative links TestDocLinks checks: the
// README (the user's guide) and everything under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, files...)
}

var (
	// mdLink is an inline Markdown link or image: [text](target) or
	// ![alt](target "title"); the target is the first group.
	mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// codeSpan is inline code, whose brackets are not links.
	codeSpan = regexp.MustCompile("`[^`]*`")
	// mdHeading is an ATX heading: its text is the second group.
	mdHeading = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
)

// docLink is one relative link found in a document.
type docLink struct {
	line   int
	target string
}

// docLinks returns the relative links of a Markdown document, outside
// fenced code blocks and code spans.
func docLinks(text string) []docLink {
	var out []docLink
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			out = append(out, docLink{line: i + 1, target: target})
		}
	}
	return out
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown document: the heading's text lowercased, everything but
// letters, digits, spaces, hyphens and underscores dropped, spaces turned
// into hyphens, and -1, -2, … added to repeats.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		m := mdHeading.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[2]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			anchors[slug+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// TestDocLinks: every relative link and image of README.md and docs/*.md
// names a file or folder of the repository, and a link to a heading
// (#anchor, in the same document or another Markdown file) names one
// that exists, so moving a section or a file cannot leave a dead link.
func TestDocLinks(t *testing.T) {
	anchorsOf := map[string]map[string]bool{}
	anchors := func(file string) map[string]bool {
		if a, ok := anchorsOf[file]; ok {
			return a
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		anchorsOf[file] = headingAnchors(string(b))
		return anchorsOf[file]
	}
	checked := 0
	for _, doc := range docFiles(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range docLinks(string(b)) {
			checked++
			file, anchor, _ := strings.Cut(l.target, "#")
			resolved := doc
			if file != "" {
				resolved = path.Join(path.Dir(doc), file)
				if _, err := os.Stat(filepath.FromSlash(resolved)); err != nil {
					t.Errorf("%s:%d links to %s, which does not exist (%s)", doc, l.line, l.target, resolved)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(resolved, ".md") && !anchors(filepath.FromSlash(resolved))[anchor] {
				t.Errorf("%s:%d links to %s: %s has no heading with the anchor #%s", doc, l.line, l.target, resolved, anchor)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d links: the scan missed the documents' links", checked)
	}
	t.Logf("%d relative links checked in %d documents", checked, len(docFiles(t)))
}

// TestDocLinksCatchesDeadLinks: the checker's own parts see a dead file,
// a dead anchor, a link in code (not a link) and GitHub's anchor rules.
func TestDocLinksCatchesDeadLinks(t *testing.T) {
	doc := "# Title\n\n## serve — receive alerts over HTTP\n\n## The replay (`make eval`)\n\n## Title\n\n" +
		"[a](missing.md) `[b](not-a-link.md)` ![c](img.png#x)\n```\n[d](fenced.md)\n```\n[e](https://example.com/x)\n"
	var got []string
	for _, l := range docLinks(doc) {
		got = append(got, l.target)
	}
	if want := []string{"missing.md", "img.png#x"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("docLinks = %v, want %v", got, want)
	}
	a := headingAnchors(doc)
	for _, want := range []string{"title", "title-1", "serve--receive-alerts-over-http", "the-replay-make-eval"} {
		if !a[want] {
			t.Errorf("headingAnchors lacks %q: %v", want, a)
		}
	}
	if a["serve-receive-alerts-over-http"] {
		t.Errorf("headingAnchors collapsed a double hyphen: %v", a)
	}
}

// readmeMaxLines is the README's budget (issue 34): a user's guide, with
// the figures in docs/performance.md and the whole reference in
// docs/reference.md.
const readmeMaxLines = 500

// TestREADMEIsAGuide: README.md stays under its budget and keeps the
// sections a user looks for first.
func TestREADMEIsAGuide(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if n := strings.Count(text, "\n"); n >= readmeMaxLines {
		t.Errorf("README.md has %d lines, want fewer than %d: move figures to docs/performance.md and detail to docs/reference.md", n, readmeMaxLines)
	}
	anchors := headingAnchors(text)
	for _, want := range []string{"two-commands", "install", "usage", "senders-point-your-tools-at-openrecall", "serve--receive-alerts-over-http", "the-cockpit--a-web-ui-for-the-shift", "exit-codes", "layout"} {
		if !anchors[want] {
			t.Errorf("README.md has no section #%s", want)
		}
	}
	for _, cmd := range []string{"make run", "make test"} {
		if !strings.Contains(text, cmd) {
			t.Errorf("README.md does not show %q", cmd)
		}
	}
}
