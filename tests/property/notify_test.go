package property

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall/notify"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// notifyProperties are the laws of the outbound path (DESIGN §12b).
func notifyProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P147_routes_route_as_alertmanager_does",
			"The route tree chooses receivers as Alertmanager's does (DESIGN §12b): for any tree up to three levels deep — matchers =, !=, =~, !~ on fields and labels, receivers named or inherited, continue or not — and any labels of a result, the receivers openrecall's tree reaches are, in order, the distinct receivers a real Alertmanager's amtool config routes test resolves the same tree and labels to.",
			"RouteCaseGen", gen.RouteCaseGen(), checkRoutesAsAlertmanager,
			pbt.Needs(".ci/run installs prometheus-alertmanager (amtool)", "amtool"),
			pbt.Expensive(2),
			pbt.Classify(func(c gen.RouteCase) []string {
				var labels []string
				var walk func(rs []gen.RouteNode, depth int)
				deep, cont := false, false
				walk = func(rs []gen.RouteNode, depth int) {
					for _, r := range rs {
						deep = deep || depth >= 2
						cont = cont || r.Continue
						walk(r.Routes, depth+1)
					}
				}
				walk(c.Routes, 1)
				if deep {
					labels = append(labels, "nested routes")
				}
				if cont {
					labels = append(labels, "continue")
				}
				return labels
			}),
			pbt.Cover("nested routes", 30), pbt.Cover("continue", 40),
		),
	}
}

// checkRoutesAsAlertmanager parses the tree with notify and with amtool and
// compares the receivers of the case's labels.
func checkRoutesAsAlertmanager(c gen.RouteCase) error {
	conf := c.YAML(0) + "receivers:\n  - name: r0\n  - name: r1\n  - name: r2\n  - name: r3\n"
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(conf), &doc); err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	root, err := notify.ParseRoute(doc.Content[0].Content[1], map[string]bool{"r0": true, "r1": true, "r2": true, "r3": true})
	if err != nil {
		return fmt.Errorf("notify refused a tree Alertmanager takes: %v\n%s", err, conf)
	}
	labels := c.RouteLabels()
	s := notify.Subject{Labels: map[string]string{}}
	for k, v := range labels {
		if k == "team" || !s.Fields.Set(k, v) {
			s.Labels[k] = v
		}
	}
	var got []string
	for _, m := range root.Receivers(s) {
		got = append(got, m.Receiver)
	}
	want, err := amtoolReceivers(conf, labels)
	if err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("labels %v: openrecall routes to %v, Alertmanager to %v\n%s", labels, got, want, conf)
	}
	return nil
}

// amtoolReceivers runs amtool config routes test on conf and returns the
// distinct receivers it prints, in order.
func amtoolReceivers(conf string, labels map[string]string) ([]string, error) {
	dir, err := os.MkdirTemp("", "openrecall-pbt-routes-")
	if err != nil {
		return nil, fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return nil, fmt.Errorf("setup: %v", err)
	}
	args := []string{"config", "routes", "test", "--config.file=" + path}
	for k, v := range labels {
		args = append(args, k+"="+v)
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command("amtool", args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("setup: amtool: %v: %s\n%s", err, errOut.String(), conf)
	}
	var distinct []string
	for _, r := range strings.Split(strings.TrimSpace(out.String()), ",") {
		if r != "" && !slices.Contains(distinct, r) {
			distinct = append(distinct, r)
		}
	}
	return distinct, nil
}
