package notify

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The notify: section's defaults.
const (
	defaultMaxAge      = time.Hour
	defaultConcurrency = 4
	defaultBackoffBase = time.Second
	defaultBackoffMax  = 5 * time.Minute
)

// receiverTypes lists the receiver types, for the errors that name them.
const receiverTypes = "pagerduty, opsgenie, slack, teams, alertmanager, webhook, email"

// Settings is the configuration's notify: section, read and checked.
type Settings struct {
	// ExternalURL is where the cockpit is reached from outside, without a
	// trailing slash: review links are <ExternalURL>/results/<id> ("" =
	// no links).
	ExternalURL string
	// MaxAge is how long after its tries began an undelivered intent
	// becomes a dead letter (default 1h).
	MaxAge time.Duration
	// Concurrency is how many sends each receiver has in flight at once
	// (default 4).
	Concurrency int
	// BackoffBase and BackoffMax bound the wait between tries: the base
	// doubles per attempt up to the max, with full jitter (default 1s and
	// 5m).
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// Receivers are the configured receivers, built, in configuration
	// order; their names are unique.
	Receivers []Receiver
	// Route chooses the receivers of each result; nil when there are no
	// receivers (and so no route).
	Route *Route
	// Digests are the receivers that take a digest of what openrecall
	// closed without a person (a receiver's digest: key), each with its
	// window: every Digests[name], windows aligned to the Unix epoch.
	// Only slack, teams, email and webhook receivers may say one.
	Digests map[string]time.Duration
}

// Bounds of a receiver's digest: key.
const (
	MinDigestEvery = time.Minute
	MaxDigestEvery = 24 * time.Hour
)

// ReadSettings reads the notify: mapping at node. A nil or empty node
// (no notify: section) gives the defaults and no receivers. Every error
// names the line and the field at fault ("line 14:
// notify.receivers[2] (pager): routing_key: secret: environment variable
// PD_KEY is empty or unset"), never a secret's value.
func ReadSettings(node *yaml.Node) (Settings, error) {
	s := Settings{MaxAge: defaultMaxAge, Concurrency: defaultConcurrency, BackoffBase: defaultBackoffBase, BackoffMax: defaultBackoffMax}
	if node == nil || node.Kind == 0 || isNull(node) {
		return s, nil
	}
	if node.Kind != yaml.MappingNode {
		return Settings{}, fmt.Errorf("line %d: notify: want a mapping (external_url, max_age, concurrency, backoff, receivers, route)", node.Line)
	}
	if err := knownKeys(node, "notify", "external_url", "max_age", "concurrency", "backoff", "receivers", "route"); err != nil {
		return Settings{}, err
	}
	sec := newSection(node, "notify.")
	s.ExternalURL = strings.TrimRight(strings.TrimSpace(sec.str("external_url")), "/")
	if err := checkExternalURL(s.ExternalURL); s.ExternalURL != "" && err != nil {
		sec.fail(lineOf(node, "external_url"), "external_url", err)
	}
	s.MaxAge = sec.positive("max_age", s.MaxAge)
	if n, ok := sec.integer("concurrency"); ok {
		if n < 1 {
			sec.fail(lineOf(node, "concurrency"), "concurrency", fmt.Errorf("%d: want at least 1", n))
		}
		s.Concurrency = n
	}
	if b := sec.mapping("backoff", "base", "max"); b != nil {
		s.BackoffBase = b.positive("base", s.BackoffBase)
		s.BackoffMax = b.positive("max", s.BackoffMax)
		if s.BackoffBase > s.BackoffMax {
			bline, _ := sec.value("backoff")
			sec.fail(bline, "backoff", fmt.Errorf("base %s is more than max %s", s.BackoffBase, s.BackoffMax))
		}
	}
	if *sec.err != nil {
		return Settings{}, *sec.err
	}

	names := map[string]bool{}
	rline, rs := sec.value("receivers")
	if rs != nil {
		var err error
		if s.Receivers, s.Digests, err = readReceivers(rs); err != nil {
			return Settings{}, err
		}
		for _, r := range s.Receivers {
			names[r.Name()] = true
		}
	}
	line, route := sec.value("route")
	switch {
	case route == nil && len(names) == 0:
		return s, nil
	case route == nil:
		return Settings{}, fmt.Errorf("line %d: notify.route: missing: say which receiver hears what", rline)
	case len(names) == 0:
		return Settings{}, fmt.Errorf("line %d: notify.route: no receivers are configured for it to name (notify.receivers)", line)
	}
	var err error
	if s.Route, err = ParseRoute(route, names); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// ReceiverNames returns the configured receivers' names, in configuration
// order.
func (s Settings) ReceiverNames() []string {
	names := make([]string, len(s.Receivers))
	for i, r := range s.Receivers {
		names[i] = r.Name()
	}
	return names
}

// Receiver returns the receiver named name, and whether there is one.
func (s Settings) Receiver(name string) (Receiver, bool) {
	for _, r := range s.Receivers {
		if r.Name() == name {
			return r, true
		}
	}
	return nil, false
}

// checkExternalURL refuses what cannot prefix a review link. The URL is
// not repeated: it might carry credentials.
func checkExternalURL(u string) error {
	p, err := url.Parse(u)
	switch {
	case err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "":
		return errors.New("want an absolute http or https URL")
	case p.User != nil:
		return errors.New("takes no user or password: review links are shown to people")
	case p.RawQuery != "" || p.Fragment != "":
		return errors.New("takes no query or fragment: review links are <external_url>/results/<id>")
	}
	return nil
}

// readReceivers builds the receivers of the sequence seq, in order, and
// reads the digest of those that say one.
func readReceivers(seq *yaml.Node) ([]Receiver, map[string]time.Duration, error) {
	if seq.Kind != yaml.SequenceNode {
		return nil, nil, fmt.Errorf("line %d: notify.receivers: want a list of receivers", seq.Line)
	}
	var out []Receiver
	var digests map[string]time.Duration
	taken := map[string]int{}
	for i, n := range seq.Content {
		r, every, err := readReceiver(n, fmt.Sprintf("notify.receivers[%d]", i), taken)
		if err != nil {
			return nil, nil, err
		}
		taken[r.Name()] = i
		out = append(out, r)
		if every > 0 {
			if digests == nil {
				digests = map[string]time.Duration{}
			}
			digests[r.Name()] = every
		}
	}
	return out, digests, nil
}

// readDigest reads a receiver's digest: key (0 when absent): a duration
// from MinDigestEvery to MaxDigestEvery, for a receiver type that takes a
// digest.
func readDigest(s *section, typ string) time.Duration {
	d, ok := s.duration("digest")
	switch {
	case !ok || *s.err != nil || !TakesDigest(typ): // a paging type's digest is refused before it is built
		return 0
	case d < MinDigestEvery || d > MaxDigestEvery:
		s.fail(lineOf(s.node, "digest"), "digest", fmt.Errorf("%s: want from %s to %s (the window of what openrecall closed without a person)", d, MinDigestEvery, "24h"))
	}
	return d
}

// readReceiver builds the receiver at n (path is "notify.receivers[i]"),
// whose name must not be one of taken's (the index that has it), and
// returns its digest's window (0: none).
func readReceiver(n *yaml.Node, path string, taken map[string]int) (Receiver, time.Duration, error) {
	r, err := readReceiverOnly(n, path, taken)
	if err != nil {
		return nil, 0, err
	}
	s := newSection(n, fmt.Sprintf("%s (%s): ", path, r.Name()))
	every := readDigest(s, r.Type())
	if *s.err != nil {
		return nil, 0, *s.err
	}
	return r, every, nil
}

// readReceiverOnly builds the receiver at n, as readReceiver says, its
// digest: key aside.
func readReceiverOnly(n *yaml.Node, path string, taken map[string]int) (Receiver, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: %s: want a mapping (name, type and the type's keys)", n.Line, path)
	}
	s := newSection(n, path+": ")
	name := strings.TrimSpace(s.str("name"))
	switch {
	case *s.err != nil:
		return nil, *s.err
	case name == "":
		return nil, fmt.Errorf("line %d: %s: name: missing", n.Line, path)
	case !validReceiverName(name):
		return nil, fmt.Errorf("line %d: %s: name: %q is not [A-Za-z0-9_.-]+", lineOf(n, "name"), path, name)
	}
	if i, ok := taken[name]; ok {
		return nil, fmt.Errorf("line %d: %s: name: %q is notify.receivers[%d]'s already", lineOf(n, "name"), path, name, i)
	}
	where := fmt.Sprintf("%s (%s)", path, name)
	s.prefix = where + ": "
	typ := strings.TrimSpace(s.str("type"))
	kind, ok := receiverKinds()[typ]
	switch {
	case *s.err != nil:
		return nil, *s.err
	case typ == "":
		return nil, fmt.Errorf("line %d: %s: type: missing (want %s)", n.Line, where, receiverTypes)
	case !ok:
		return nil, fmt.Errorf("line %d: %s: type: unknown %q (want %s)", lineOf(n, "type"), where, typ, receiverTypes)
	}
	keys := append([]string{"name", "type"}, kind.keys...)
	if TakesDigest(typ) {
		keys = append(keys, "digest")
	} else if hasKey(n, "digest") {
		return nil, fmt.Errorf("line %d: %s: digest: a %s receiver pages, and a digest never does: say it on a slack, teams, email or webhook receiver",
			lineOf(n, "digest"), where, typ)
	}
	if err := knownKeys(n, where, keys...); err != nil {
		return nil, err
	}
	r, err := kind.build(name, s)
	switch {
	case *s.err != nil:
		return nil, *s.err
	case err != nil:
		// The constructor's error names the type, the receiver and the field.
		return nil, fmt.Errorf("line %d: %s: %w", n.Line, path, err)
	}
	return r, nil
}

// receiverKind is a receiver type as the configuration writes it: the keys
// it takes besides name and type, and how it is built from them.
type receiverKind struct {
	keys  []string
	build func(name string, s *section) (Receiver, error)
}

// receiverKinds returns the receiver types by name. Every key a type lists
// is read by its build.
func receiverKinds() map[string]receiverKind {
	return map[string]receiverKind{
		"pagerduty": {[]string{"routing_key", "url", "client", "acknowledge"}, func(name string, s *section) (Receiver, error) {
			return built(NewPagerDuty(PagerDutyConfig{Name: name, RoutingKey: s.secret("routing_key"), URL: s.str("url"),
				Client: s.str("client"), Acknowledge: s.flag("acknowledge")}))
		}},
		"opsgenie": {[]string{"api_key", "api_url", "tags"}, func(name string, s *section) (Receiver, error) {
			return built(NewOpsgenie(OpsgenieConfig{Name: name, APIKey: s.secret("api_key"), APIURL: s.str("api_url"), Tags: s.strs("tags")}))
		}},
		"slack": {[]string{"token", "webhook_url", "channel", "api_url", "interactive", "timeout"}, func(name string, s *section) (Receiver, error) {
			return built(NewSlack(SlackConfig{Name: name, Token: s.secret("token"), WebhookURL: s.secret("webhook_url"),
				Channel: s.str("channel"), APIURL: s.str("api_url"), Interactive: s.flag("interactive"), Timeout: s.timeout("timeout")}))
		}},
		"teams": {[]string{"webhook_url", "timeout"}, func(name string, s *section) (Receiver, error) {
			return built(NewTeams(TeamsConfig{Name: name, WebhookURL: s.secret("webhook_url"), Timeout: s.timeout("timeout")}))
		}},
		"alertmanager": {[]string{"urls", "bearer_token", "resolve_timeout"}, func(name string, s *section) (Receiver, error) {
			return built(NewAlertmanager(AlertmanagerConfig{Name: name, URLs: s.strs("urls"), BearerToken: s.secret("bearer_token"),
				ResolveTimeout: s.timeout("resolve_timeout")}))
		}},
		"webhook": {[]string{"url", "secret", "timeout"}, func(name string, s *section) (Receiver, error) {
			return built(NewWebhook(WebhookConfig{Name: name, URL: s.secret("url"), Secret: s.secret("secret"), Timeout: s.timeout("timeout")}))
		}},
		"email": {[]string{"host", "port", "from", "to", "username", "password", "require_tls", "hello", "timeout"}, func(name string, s *section) (Receiver, error) {
			port, _ := s.integer("port")
			return built(NewEmail(EmailConfig{Name: name, Host: s.str("host"), Port: port, From: s.str("from"), To: s.strs("to"),
				Username: s.str("username"), Password: s.secret("password"), RequireTLS: s.optFlag("require_tls"),
				Hello: s.str("hello"), Timeout: s.timeout("timeout")}))
		}},
	}
}

// built returns a constructor's receiver as a Receiver: nil (not a typed
// nil) when it failed.
func built[R Receiver](r R, err error) (Receiver, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}

// validReceiverName reports whether name is made of [A-Za-z0-9_.-] only.
func validReceiverName(name string) bool {
	for _, c := range name {
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (c < '0' || c > '9') && !strings.ContainsRune("_.-", c) {
			return false
		}
	}
	return name != ""
}

// isNull reports whether n is YAML's null (an empty value, ~ or null).
func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// section reads the values of one mapping of the configuration by key.
// Its readers return the zero value for an absent or null key and keep the
// first error of the section and those under it, which names the key's
// line and prefix+key.
type section struct {
	node *yaml.Node
	// prefix comes before a key in errors: "notify." or
	// "notify.receivers[2] (pager): ".
	prefix string
	err    *error
}

func newSection(node *yaml.Node, prefix string) *section {
	return &section{node: node, prefix: prefix, err: new(error)}
}

// fail keeps err as key's error, at line, unless there is one already.
func (s *section) fail(line int, key string, err error) {
	if *s.err == nil {
		*s.err = fmt.Errorf("line %d: %s%s: %w", line, s.prefix, key, err)
	}
}

// value returns the line of key and its value (an alias resolved), nil
// when key is absent or null.
func (s *section) value(key string) (int, *yaml.Node) {
	for i := 0; i+1 < len(s.node.Content); i += 2 {
		if k := s.node.Content[i]; k.Value == key {
			v := s.node.Content[i+1]
			if v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			if isNull(v) {
				return k.Line, nil
			}
			return k.Line, v
		}
	}
	return s.node.Line, nil
}

func (s *section) str(key string) string {
	line, v := s.value(key)
	if v != nil && v.Kind != yaml.ScalarNode {
		s.fail(line, key, errors.New("want a string"))
		return ""
	}
	if v == nil {
		return ""
	}
	return v.Value
}

func (s *section) strs(key string) []string {
	line, v := s.value(key)
	if v == nil {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		s.fail(line, key, errors.New("want a list of strings"))
		return nil
	}
	out := make([]string, 0, len(v.Content))
	for i, item := range v.Content {
		if item.Kind != yaml.ScalarNode {
			s.fail(item.Line, fmt.Sprintf("%s[%d]", key, i), errors.New("want a string"))
			return nil
		}
		out = append(out, item.Value)
	}
	return out
}

// secret reads key through ParseSecret: env:NAME, file:PATH or inline. Its
// errors never hold the value.
func (s *section) secret(key string) Secret {
	line, v := s.value(key)
	if v == nil {
		return Secret{}
	}
	if v.Kind != yaml.ScalarNode {
		s.fail(line, key, errors.New("want a string: env:NAME, file:PATH or the secret itself"))
		return Secret{}
	}
	sec, err := ParseSecret(v.Value)
	if err != nil {
		s.fail(line, key, err)
	}
	return sec
}

// duration reads a duration (30s, 5m, 1h) that is not negative, and
// whether key was given.
func (s *section) duration(key string) (time.Duration, bool) {
	line, v := s.value(key)
	if v == nil {
		return 0, false
	}
	d, err := time.ParseDuration(v.Value)
	switch {
	case v.Kind != yaml.ScalarNode || err != nil:
		s.fail(line, key, fmt.Errorf("%q is not a duration (want e.g. 30s, 5m, 1h)", v.Value))
	case d < 0:
		s.fail(line, key, fmt.Errorf("%s is negative", v.Value))
	}
	return d, true
}

// positive reads a duration that must be more than zero (a max_age of
// zero makes every intent a dead letter, a back-off of zero retries at once,
// forever), def when key is absent.
func (s *section) positive(key string, def time.Duration) time.Duration {
	d, ok := s.duration(key)
	switch {
	case !ok:
		return def
	case d == 0:
		s.fail(lineOf(s.node, key), key, errors.New("must be more than zero"))
	}
	return d
}

// timeout reads a duration whose absence means the receiver's default.
func (s *section) timeout(key string) time.Duration {
	d, _ := s.duration(key)
	return d
}

// integer reads a whole number, and whether key was given.
func (s *section) integer(key string) (int, bool) {
	line, v := s.value(key)
	if v == nil {
		return 0, false
	}
	var n int
	if v.Kind != yaml.ScalarNode || v.Decode(&n) != nil {
		s.fail(line, key, fmt.Errorf("%q is not a whole number", v.Value))
	}
	return n, true
}

// optFlag reads true or false, nil when key is absent.
func (s *section) optFlag(key string) *bool {
	line, v := s.value(key)
	if v == nil {
		return nil
	}
	var b bool
	if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
		s.fail(line, key, fmt.Errorf("%q is not true or false", v.Value))
	}
	return &b
}

// flag reads true or false, false when key is absent.
func (s *section) flag(key string) bool {
	b := s.optFlag(key)
	return b != nil && *b
}

// mapping returns the section of the mapping at key, whose keys are keys,
// sharing s's error; nil when key is absent or not such a mapping (the
// error kept).
func (s *section) mapping(key string, keys ...string) *section {
	line, v := s.value(key)
	switch {
	case v == nil:
		return nil
	case v.Kind != yaml.MappingNode:
		s.fail(line, key, fmt.Errorf("want a mapping (%s)", strings.Join(keys, ", ")))
		return nil
	}
	if err := knownKeys(v, s.prefix+key, keys...); err != nil {
		if *s.err == nil {
			*s.err = err
		}
		return nil
	}
	return &section{node: v, prefix: s.prefix + key + ".", err: s.err}
}
