package slack

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall/notify"
)

// Config is the configuration's chat.slack section: deciding from Slack
// is on when it is present.
type Config struct {
	// SigningSecret verifies Slack's requests (the app's Basic
	// Information page); BotToken calls the Web API (xoxb-…). Both are
	// read as notify's secrets: env:NAME, file:PATH or inline, and never
	// printed.
	SigningSecret notify.Secret
	BotToken      notify.Secret
	// APIURL is the Web API's base (DefaultAPIURL).
	APIURL string
	// Users maps a Slack user id (U…, W…) to an analyst: the name of a
	// token of server.tokens, which needs the retain scope to decide.
	Users map[string]string
}

// Enabled reports whether chat.slack is configured.
func (c Config) Enabled() bool { return !c.SigningSecret.IsZero() }

// ReadConfig reads the chat: mapping at node (the configuration's chat:
// section as written). A nil or empty node gives the zero Config (off).
// Every error names the line and the key ("line 12: chat.slack.users:
// …"), never a secret's value.
func ReadConfig(node *yaml.Node) (Config, error) {
	if node == nil || node.Kind == 0 || node.Tag == "!!null" {
		return Config{}, nil
	}
	if node.Kind != yaml.MappingNode {
		return Config{}, fmt.Errorf("line %d: chat: want a mapping (slack)", node.Line)
	}
	var sl *yaml.Node
	for i := 0; i+1 < len(node.Content); i += 2 {
		k := node.Content[i]
		if k.Value != "slack" {
			return Config{}, fmt.Errorf("line %d: unknown key chat.%s (chat takes slack)", k.Line, k.Value)
		}
		sl = node.Content[i+1]
	}
	if sl == nil || sl.Tag == "!!null" {
		return Config{}, nil
	}
	if sl.Kind != yaml.MappingNode {
		return Config{}, fmt.Errorf("line %d: chat.slack: want a mapping (signing_secret, bot_token, api_url, users)", sl.Line)
	}
	var c Config
	var errs []error
	fail := func(n *yaml.Node, key string, err error) {
		errs = append(errs, fmt.Errorf("line %d: chat.slack.%s: %w", n.Line, key, err))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(sl.Content); i += 2 {
		k, v := sl.Content[i], sl.Content[i+1]
		seen[k.Value] = true
		switch k.Value {
		case "signing_secret", "bot_token":
			if v.Kind != yaml.ScalarNode {
				fail(v, k.Value, errors.New("want a string: env:NAME, file:PATH or the secret itself"))
				continue
			}
			s, err := notify.ParseSecret(strings.TrimSpace(v.Value))
			if err != nil {
				fail(v, k.Value, err)
				continue
			}
			if k.Value == "signing_secret" {
				c.SigningSecret = s
			} else {
				c.BotToken = s
			}
		case "api_url":
			c.APIURL = strings.TrimRight(strings.TrimSpace(v.Value), "/")
			if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				fail(v, k.Value, fmt.Errorf("%q: want an http(s) URL such as %s", c.APIURL, DefaultAPIURL))
			}
		case "users":
			c.Users = readUsers(v, fail)
		default:
			errs = append(errs, fmt.Errorf("line %d: unknown key chat.slack.%s (signing_secret, bot_token, api_url, users)", k.Line, k.Value))
		}
	}
	for _, key := range []string{"signing_secret", "bot_token", "users"} {
		if !seen[key] {
			errs = append(errs, fmt.Errorf("line %d: chat.slack.%s is required", sl.Line, key))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	return c, nil
}

// readUsers reads users: a mapping of Slack user ids to analyst names.
func readUsers(v *yaml.Node, fail func(*yaml.Node, string, error)) map[string]string {
	if v.Kind != yaml.MappingNode || len(v.Content) == 0 {
		fail(v, "users", errors.New("want a mapping of Slack user ids to analysts (U024BE7LH: alice)"))
		return nil
	}
	users := map[string]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		id, name := strings.TrimSpace(v.Content[i].Value), strings.TrimSpace(v.Content[i+1].Value)
		switch {
		case id == "" || strings.ContainsAny(id, " |"):
			fail(v.Content[i], "users", fmt.Errorf("%q is not a Slack user id (U024BE7LH)", id))
		case v.Content[i+1].Kind != yaml.ScalarNode || name == "":
			fail(v.Content[i+1], "users."+id, errors.New("want the analyst's name (a token's name of server.tokens)"))
		case users[id] != "":
			fail(v.Content[i], "users", fmt.Errorf("%s is mapped twice", id))
		default:
			users[id] = name
		}
	}
	return users
}

// Analysts lists the analysts users map to, sorted, once each.
func (c Config) Analysts() []string {
	var out []string
	for _, a := range c.Users {
		out = append(out, a)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
