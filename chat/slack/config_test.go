package slack

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func readYAML(t *testing.T, src string) (Config, error) {
	t.Helper()
	var doc struct {
		Chat yaml.Node `yaml:"chat"`
	}
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return ReadConfig(&doc.Chat)
}

func TestReadConfig(t *testing.T) {
	t.Setenv("TEST_SLACK_SIGNING", "sign-me")
	c, err := readYAML(t, "chat:\n  slack:\n    signing_secret: env:TEST_SLACK_SIGNING\n    bot_token: xoxb-inline\n    users: {U024BE7LH: alice, W0123: bob}\n")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Enabled() || c.SigningSecret.Reveal() != "sign-me" || c.BotToken.Reveal() != "xoxb-inline" || c.APIURL != DefaultAPIURL ||
		c.Users["U024BE7LH"] != "alice" || strings.Join(c.Analysts(), ",") != "alice,bob" {
		t.Errorf("read %+v", c)
	}
	if off, err := readYAML(t, "db: x\n"); err != nil || off.Enabled() {
		t.Errorf("no chat section: %+v, %v", off, err)
	}
}

// TestReadConfigErrors: each error names its line and key, never a
// secret.
func TestReadConfigErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"chat:\n  teams: {}\n", "line 2: unknown key chat.teams"},
		{"chat:\n  slack:\n    signing_secret: env:TEST_SLACK_UNSET_XYZ\n    bot_token: x\n    users: {U1: a}\n", "line 3: chat.slack.signing_secret: secret: environment variable TEST_SLACK_UNSET_XYZ"},
		{"chat:\n  slack:\n    signing_secret: s\n    users: {U1: a}\n", "chat.slack.bot_token is required"},
		{"chat:\n  slack:\n    signing_secret: s\n    bot_token: t\n    users: {U1: a}\n    api_url: ftp://x\n", "line 6: chat.slack.api_url"},
		{"chat:\n  slack:\n    signing_secret: s\n    bot_token: t\n    users: []\n", "line 5: chat.slack.users"},
		{"chat:\n  slack:\n    signing_secret: s\n    bot_token: t\n    users: {U1: \"\"}\n", "line 5: chat.slack.users.U1"},
		{"chat:\n  slack:\n    signing_secret: topsecretvalue\n    bot_token: t\n    users: {U1: a}\n    channel: x\n", "line 6: unknown key chat.slack.channel"},
	}
	for _, tt := range tests {
		_, err := readYAML(t, tt.src)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "topsecretvalue") {
			t.Errorf("%q: %v, want %q", tt.src, err, tt.want)
		}
	}
}
