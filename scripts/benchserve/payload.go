package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/rulecorpus"
)

// Endpoints the load posts to.
const (
	alertmanagerPath = "/api/v1/alerts/alertmanager"
	alertsPath       = "/api/v1/alerts" // any sender, recognised
)

// fixture is one captured sender payload that the load can make new: every
// string value under an id-like key (ids) gets a suffix of its own per
// delivery, which changes the alert id intake reads, so each post is a new
// alert, not a redelivery.
type fixture struct {
	name string // sender/file.json
	body []byte
	ids  []string // quoted JSON strings to suffix, longest first
}

// render returns the fixture made distinct for delivery n.
func (f fixture) render(n int) []byte {
	b := f.body
	suffix := "-b" + strconv.Itoa(n)
	for _, q := range f.ids {
		b = bytes.ReplaceAll(b, []byte(q), []byte(q[:len(q)-1]+suffix+`"`))
	}
	return b
}

// payloads hands out the bodies of the load: delivery n is a sender
// fixture when senderEvery > 0 and n mod senderEvery is senderEvery-1,
// else an Alertmanager webhook of one alert rendered from the rule corpus,
// firing n of rule n mod the rule count (rulecorpus.WriteQueue's queue).
// Safe for concurrent use: it only reads.
type payloads struct {
	rules       []rulecorpus.Rule
	fixtures    []fixture
	senderEvery int
}

// body returns delivery n's path and body.
func (p *payloads) body(n int) (string, []byte, error) {
	if p.senderEvery > 0 && len(p.fixtures) > 0 && n%p.senderEvery == p.senderEvery-1 {
		f := p.fixtures[(n/p.senderEvery)%len(p.fixtures)]
		return alertsPath, f.render(n), nil
	}
	b, err := rulecorpus.Webhook(rulecorpus.Alert(p.rules[n%len(p.rules)], rulecorpus.Firing{N: n}))
	return alertmanagerPath, b, err
}

// loadRules reads the rule corpus: corpus, or the repository's, found above
// the working directory.
func loadRules(corpus string) ([]rulecorpus.Rule, error) {
	if corpus == "" {
		return rulecorpus.LoadNear(".")
	}
	return rulecorpus.Load(corpus)
}

// sendersNear finds intake/testdata/senders in dir or above it.
func sendersNear(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(d, "intake", "testdata", "senders")
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", fmt.Errorf("no intake/testdata/senders above %s", dir)
		}
		d = up
	}
}

// loadFixtures reads the captured sender payloads under dir (one directory
// per sender; golden.json and identity.json are expectations, not
// payloads) and keeps those intake reads without a rejection and that the
// id suffix makes new: the alert ids of two renderings differ. It returns
// the kept fixtures and the names of those left out.
func loadFixtures(dir string) ([]fixture, []string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(files)
	var kept []fixture
	var left []string
	for _, path := range files {
		base := filepath.Base(path)
		if base == "golden.json" || base == "identity.json" {
			continue
		}
		name := filepath.Base(filepath.Dir(path)) + "/" + base
		body, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		f := fixture{name: name, body: body, ids: idValues(body)}
		if len(f.ids) == 0 || !distinct(f) {
			left = append(left, name)
			continue
		}
		kept = append(kept, f)
	}
	if len(kept) == 0 {
		return nil, left, fmt.Errorf("no usable sender fixture under %s", dir)
	}
	return kept, left, nil
}

// distinct says whether intake reads renderings 1 and 2 of f without a
// rejection, as the same number of alerts, each with a different id.
func distinct(f fixture) bool {
	a, errA := alertIDs(f.render(1))
	b, errB := alertIDs(f.render(2))
	if errA != nil || errB != nil || len(a) == 0 || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] == "" || a[i] == b[i] {
			return false
		}
	}
	return true
}

// alertIDs returns the alert ids intake reads from body, or an error when
// it rejects a record.
func alertIDs(body []byte) ([]string, error) {
	rd := intake.NewReader(bytes.NewReader(body), intake.Options{})
	var ids []string
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return ids, nil
		}
		if err != nil {
			return nil, err
		}
		if rec.Err != nil {
			return nil, fmt.Errorf("rejected: %s", rec.Err.Reason)
		}
		ids = append(ids, rec.Alert.ID)
	}
}

// idValues returns the string values (as quoted JSON) under id-like keys
// anywhere in the document: id, …id, …_id, uuid, fingerprint, dedup_key,
// incident_key. Longest first, so a value that contains another is
// suffixed whole.
func idValues(body []byte) []string {
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil
	}
	seen := map[string]bool{}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(k, x)
			}
		case []any:
			for _, x := range v {
				walk(key, x)
			}
		case string:
			if v != "" && idKey(key) {
				q, err := json.Marshal(v)
				if err == nil && bytes.Count(body, q) > 0 {
					seen[string(q)] = true
				}
			}
		}
	}
	walk("", doc)
	out := make([]string, 0, len(seen))
	for q := range seen {
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return out
}

func idKey(key string) bool {
	k := strings.ToLower(key)
	switch k {
	case "fingerprint", "dedup_key", "dedupkey", "incident_key", "uuid", "guid":
		return true
	}
	return k == "id" || strings.HasSuffix(k, "_id") || strings.HasSuffix(k, "id") && len(k) > 2 && !strings.HasSuffix(k, "valid")
}

// senderNames returns the senders of fixtures, sorted, each once.
func senderNames(fs []fixture) []string {
	var out []string
	for _, f := range fs {
		name, _, _ := strings.Cut(f.name, "/")
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// leftFixtures wraps fixture names for senderNames.
func leftFixtures(names []string) []fixture {
	out := make([]fixture, len(names))
	for i, n := range names {
		out[i].name = n
	}
	return out
}
