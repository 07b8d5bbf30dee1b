package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigCheckReadsWhatServeReads: config check refuses what serve
// would refuse at start — a route to a receiver that does not exist, a
// receiver whose secret's variable is unset, a rules file that is not
// there — naming it, and accepts a good file given as its argument. It
// used to answer "configuration ok" for the first three (it read neither
// notify: nor the rules).
func TestConfigCheckReadsWhatServeReads(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	receiver := `notify:
  receivers:
    - name: oncall
      type: slack
      token: env:CONFIGCHECK_SLACK_TOKEN
      channel: "#oncall"
  route:
    receiver: %s
`
	for name, tc := range map[string]struct{ body, want string }{
		"unknown receiver": {strings.NewReplacer("%s", "pager", "env:CONFIGCHECK_SLACK_TOKEN", "xoxb-inline").Replace(receiver), "pager"},
		"unset secret":     {strings.Replace(receiver, "%s", "oncall", 1), "CONFIGCHECK_SLACK_TOKEN"},
		"missing rules":    {"rules: " + filepath.Join(dir, "no-such-rules.yaml") + "\n", "no-such-rules.yaml"},
	} {
		path := write(strings.ReplaceAll(name, " ", "-")+".yaml", tc.body)
		r := runCLI(t, "", "--db", filepath.Join(dir, "m.db"), "config", "check", path)
		if r.code == exitOK || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want a refusal naming %q", name, r.code, r.stderr, tc.want)
		}
	}
	t.Setenv("CONFIGCHECK_SLACK_TOKEN", "xoxb-configcheck")
	good := write("good.yaml", strings.Replace(receiver, "%s", "oncall", 1))
	if r := runCLI(t, "", "--db", filepath.Join(dir, "m.db"), "config", "check", good); r.code != exitOK || !strings.Contains(r.stdout, "configuration ok") {
		t.Errorf("a good file: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "config", "check", good, "extra"); r.code != exitUsage {
		t.Errorf("two arguments: exit %d, want a usage error", r.code)
	}
}
