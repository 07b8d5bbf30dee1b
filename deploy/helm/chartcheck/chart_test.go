// Package chartcheck tests the Helm chart in deploy/helm/openrecall: it
// renders the chart with the Helm SDK for the values people install with,
// decodes every manifest strictly into the Kubernetes API types (a field
// the API does not know fails), checks what makes the pods run the
// product as it is configured, and lints the chart. It is a module of its
// own so that openrecall's go.mod does not take the Kubernetes and Helm
// dependencies; `make test-chart` runs it.
package chartcheck

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"sigs.k8s.io/yaml"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/config"
)

const (
	chartDir  = "../openrecall"
	release   = "triage"
	namespace = "oncall"
	// fullname is the chart's object name for release "triage".
	fullname = "triage-openrecall"
	// image facts the chart must match (the image is built elsewhere).
	binary    = "/usr/local/bin/openrecall"
	uid       = 65532
	servePort = 9555 // serve's default port
)

// rendered is one render of the chart: its objects by kind, and NOTES.txt.
type rendered struct {
	deployments     []*appsv1.Deployment
	services        []*corev1.Service
	secrets         []*corev1.Secret
	configMaps      []*corev1.ConfigMap
	claims          []*corev1.PersistentVolumeClaim
	budgets         []*policyv1.PodDisruptionBudget
	serviceMonitors []*serviceMonitor
	notes           string
	kinds           []string
}

// serviceMonitor is the part of monitoring.coreos.com/v1 ServiceMonitor the
// chart writes; decoding is strict, so a field outside it fails.
type serviceMonitor struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

func loadChart(t *testing.T) *chartv2.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return ch
}

// render renders the chart for values (YAML laid over values.yaml) as an
// install of release in namespace, with Helm's strict engine (a template
// reading a value values.yaml does not have fails). No cluster: lookup
// finds nothing, as in helm template.
func render(t *testing.T, values string) (map[string]string, error) {
	t.Helper()
	vals, err := common.ReadValues([]byte(values))
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	top, err := util.ToRenderValues(loadChart(t), vals, common.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}, nil)
	if err != nil {
		return nil, err
	}
	return engine.Engine{Strict: true}.RenderWithContext(t.Context(), loadChart(t), top)
}

// newDecoder decodes YAML strictly into the typed objects of core/v1,
// apps/v1 and policy/v1: an unknown field, a duplicate field, a kind of
// another group or a bad value (a quantity, a port) is an error.
func newDecoder(t *testing.T) runtime.Decoder {
	t.Helper()
	sch := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme} {
		if err := add(sch); err != nil {
			t.Fatal(err)
		}
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, sch, sch, kjson.SerializerOptions{Yaml: true, Strict: true})
}

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// decodeAll decodes every manifest of files (NOTES.txt aside) strictly.
func decodeAll(t *testing.T, files map[string]string) (rendered, error) {
	t.Helper()
	dec := newDecoder(t)
	var r rendered
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if strings.HasSuffix(name, "NOTES.txt") {
			r.notes = files[name]
			continue
		}
		for _, doc := range docSeparator.Split(files[name], -1) {
			if isBlank(doc) {
				continue
			}
			if err := r.add(dec, []byte(doc)); err != nil {
				return r, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return r, nil
}

// isBlank reports whether a YAML document holds only comments and space.
func isBlank(doc string) bool {
	for line := range strings.SplitSeq(doc, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

func (r *rendered) add(dec runtime.Decoder, doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	r.kinds = append(r.kinds, tm.Kind)
	if tm.APIVersion == "monitoring.coreos.com/v1" && tm.Kind == "ServiceMonitor" {
		var sm serviceMonitor
		if err := yaml.UnmarshalStrict(doc, &sm); err != nil {
			return fmt.Errorf("ServiceMonitor: %w", err)
		}
		r.serviceMonitors = append(r.serviceMonitors, &sm)
		return nil
	}
	obj, _, err := dec.Decode(doc, nil, nil)
	if err != nil {
		return fmt.Errorf("%s %s: %w", tm.APIVersion, tm.Kind, err)
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		r.deployments = append(r.deployments, o)
	case *corev1.Service:
		r.services = append(r.services, o)
	case *corev1.Secret:
		r.secrets = append(r.secrets, o)
	case *corev1.ConfigMap:
		r.configMaps = append(r.configMaps, o)
	case *corev1.PersistentVolumeClaim:
		r.claims = append(r.claims, o)
	case *policyv1.PodDisruptionBudget:
		r.budgets = append(r.budgets, o)
	default:
		return fmt.Errorf("%s %s: a kind this test does not check yet: add it", tm.APIVersion, tm.Kind)
	}
	return nil
}

// mustRender renders and decodes values, failing the test on any error.
func mustRender(t *testing.T, values string) rendered {
	t.Helper()
	files, err := render(t, values)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	r, err := decodeAll(t, files)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	for _, o := range r.objects() {
		if o.GetNamespace() != namespace {
			t.Errorf("%s: namespace %q, want the release's %q", o.GetName(), o.GetNamespace(), namespace)
		}
	}
	return r
}

// objects are the decoded Kubernetes objects, the ServiceMonitor aside.
func (r rendered) objects() []metav1.Object {
	var out []metav1.Object
	out = appendObjects(out, r.deployments)
	out = appendObjects(out, r.services)
	out = appendObjects(out, r.secrets)
	out = appendObjects(out, r.configMaps)
	out = appendObjects(out, r.claims)
	return appendObjects(out, r.budgets)
}

func appendObjects[T metav1.Object](out []metav1.Object, objs []T) []metav1.Object {
	for _, o := range objs {
		out = append(out, o)
	}
	return out
}

func (r rendered) deployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	if len(r.deployments) != 1 {
		t.Fatalf("%d Deployments, want 1 (kinds: %v)", len(r.deployments), r.kinds)
	}
	return r.deployments[0]
}

func (r rendered) container(t *testing.T) corev1.Container {
	t.Helper()
	cs := r.deployment(t).Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("%d containers, want 1", len(cs))
	}
	return cs[0]
}

func (r rendered) secret(name string) *corev1.Secret {
	for _, s := range r.secrets {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// env resolves the container's environment: plain values, and each
// secretKeyRef from a rendered Secret or from external (the Secrets the
// values name, which the user creates: name → key → value). A reference to
// a Secret or key that exists in neither fails, unless it is optional.
func (r rendered) env(t *testing.T, external map[string]map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range r.container(t).Env {
		if e.ValueFrom == nil {
			out[e.Name] = e.Value
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		if ref == nil {
			t.Errorf("env %s: only secretKeyRef is expected, got %+v", e.Name, e.ValueFrom)
			continue
		}
		if s := r.secret(ref.Name); s != nil {
			v, ok := s.Data[ref.Key]
			if !ok {
				t.Errorf("env %s: Secret %s (rendered) has no key %q (keys: %v)", e.Name, ref.Name, ref.Key, keys(s.Data))
			}
			out[e.Name] = string(v)
			continue
		}
		ext, ok := external[ref.Name]
		if !ok {
			t.Errorf("env %s: Secret %q is neither rendered nor one the values name", e.Name, ref.Name)
			continue
		}
		v, ok := ext[ref.Key]
		if !ok && (ref.Optional == nil || !*ref.Optional) {
			t.Errorf("env %s: Secret %s has no key %q", e.Name, ref.Name, ref.Key)
		}
		if ok {
			out[e.Name] = v
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// loadConfig loads the rendered config.yaml with openrecall's own config
// package (defaults, unknown keys refused, validation) and resolves its
// tokens from env as serve does.
func (r rendered) loadConfig(t *testing.T, env map[string]string) (config.Config, []config.TokenEntry) {
	t.Helper()
	if len(r.configMaps) != 1 {
		t.Fatalf("%d ConfigMaps, want 1", len(r.configMaps))
	}
	data, ok := r.configMaps[0].Data["config.yaml"]
	if !ok {
		t.Fatalf("ConfigMap %s has no config.yaml (keys: %v)", r.configMaps[0].Name, keys(r.configMaps[0].Data))
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("openrecall refuses the chart's config.yaml: %v\n%s", err, data)
	}
	tokens, err := cfg.Server.ResolvedTokens(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("serve would refuse the tokens: %v", err)
	}
	return cfg, tokens
}

// checkPod checks what every mode shares: the image's binary run as serve
// on the port the probes and the Service use, the probes' paths, the
// security context, and the volumes' sources.
func checkPod(t *testing.T, r rendered, wantImage string) {
	t.Helper()
	d := r.deployment(t)
	pod := d.Spec.Template.Spec
	c := r.container(t)
	if c.Image != wantImage {
		t.Errorf("image %q, want %q", c.Image, wantImage)
	}
	if !slices.Equal(c.Command, []string{binary}) {
		t.Errorf("command %q, want [%s]", c.Command, binary)
	}
	i := slices.Index(c.Args, "serve")
	if i < 0 || !slices.Contains(c.Args[:i], "--config") {
		t.Fatalf("args %q: want --config FILE then serve", c.Args)
	}
	cfgPath := c.Args[slices.Index(c.Args, "--config")+1]
	j := slices.Index(c.Args, "--listen")
	if j < 0 || j+1 >= len(c.Args) {
		t.Fatalf("args %q: no --listen", c.Args)
	}
	host, port, err := net.SplitHostPort(c.Args[j+1])
	if err != nil {
		t.Fatalf("--listen %q: %v", c.Args[j+1], err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		t.Errorf("--listen %q is loopback: nothing outside the pod reaches it", c.Args[j+1])
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || strconv.Itoa(int(c.Ports[0].ContainerPort)) != port {
		t.Errorf("container ports %+v, want one named http on the --listen port %s", c.Ports, port)
	}
	if port != strconv.Itoa(servePort) {
		t.Errorf("port %s, want serve's default %d", port, servePort)
	}
	for _, p := range []struct {
		name, path string
		probe      *corev1.Probe
	}{{"liveness", "/healthz", c.LivenessProbe}, {"readiness", "/readyz", c.ReadinessProbe}, {"startup", "/healthz", c.StartupProbe}} {
		switch {
		case p.probe == nil || p.probe.HTTPGet == nil:
			t.Errorf("%s probe: want an HTTP GET of %s, got %+v", p.name, p.path, p.probe)
		case p.probe.HTTPGet.Path != p.path:
			t.Errorf("%s probe path %q, want %q", p.name, p.probe.HTTPGet.Path, p.path)
		case p.probe.HTTPGet.Port.String() != "http" && p.probe.HTTPGet.Port.String() != port:
			t.Errorf("%s probe port %s, want http (%s)", p.name, p.probe.HTTPGet.Port.String(), port)
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v: want CPU and memory requests and a memory limit", c.Resources)
	}

	// Security: non-root with the image's uid, read-only root, no
	// capabilities, no escalation, the runtime's seccomp profile.
	psc, sc := pod.SecurityContext, c.SecurityContext
	switch {
	case psc == nil || sc == nil:
		t.Fatalf("security contexts: pod %+v, container %+v", psc, sc)
	case psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
		t.Error("runAsNonRoot is not true for the pod and the container")
	case sc.RunAsUser == nil || *sc.RunAsUser != uid:
		t.Errorf("runAsUser %v, want the image's %d", sc.RunAsUser, uid)
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("readOnlyRootFilesystem is not true")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("allowPrivilegeEscalation is not false")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("capabilities %+v, want drop [ALL] and nothing added", sc.Capabilities)
	case psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Error("seccomp profile is not RuntimeDefault for the pod and the container")
	case psc.FSGroup == nil || *psc.FSGroup != uid:
		t.Errorf("fsGroup %v, want %d (the volume must be writable by the uid)", psc.FSGroup, uid)
	}

	// The Deployment selects its pods, the Service selects them on the
	// container's port.
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("Deployment selector %v does not match its pod labels %v (%v)", d.Spec.Selector, d.Spec.Template.Labels, err)
	}
	if len(r.services) != 1 {
		t.Fatalf("%d Services, want 1", len(r.services))
	}
	svc := r.services[0]
	if svc.Spec.Selector == nil || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("Service selector %v does not match the pod labels %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "http" || svc.Spec.Ports[0].Name != "http" {
		t.Errorf("Service ports %+v, want one named http to target port http", svc.Spec.Ports)
	}

	// Every volume comes from a rendered object or the values; every mount
	// names a volume; the config file is where --config says.
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
		switch {
		case v.ConfigMap != nil:
			if len(r.configMaps) != 1 || r.configMaps[0].Name != v.ConfigMap.Name {
				t.Errorf("volume %s: ConfigMap %s is not rendered", v.Name, v.ConfigMap.Name)
			}
		case v.PersistentVolumeClaim != nil, v.EmptyDir != nil:
		default:
			t.Errorf("volume %s: unexpected source %+v", v.Name, v.VolumeSource)
		}
	}
	configMounted := false
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			t.Errorf("mount %s at %s: no such volume", m.Name, m.MountPath)
		}
		if v.ConfigMap != nil && filepath.Join(m.MountPath, "config.yaml") == cfgPath {
			configMounted = true
		}
	}
	if !configMounted {
		t.Errorf("--config %s is not the ConfigMap's config.yaml mounted", cfgPath)
	}
	if pod.TerminationGracePeriodSeconds == nil || *pod.TerminationGracePeriodSeconds < 30 {
		t.Errorf("terminationGracePeriodSeconds %v: serve needs server.shutdown_timeout (20s) and 10s for Slack", pod.TerminationGracePeriodSeconds)
	}
}

// checkAuditKey checks that serve gets an audit key of 64 hex digits.
func checkAuditKey(t *testing.T, env map[string]string) {
	t.Helper()
	k := env["OPENRECALL_AUDIT_KEY"]
	if b, err := hex.DecodeString(k); err != nil || len(b) != 32 {
		t.Errorf("OPENRECALL_AUDIT_KEY %q is not 64 hex digits", k)
	}
}

func hasScope(tokens []config.TokenEntry, scope string) bool {
	for _, tk := range tokens {
		if slices.Contains(tk.Scopes, scope) {
			return true
		}
	}
	return false
}

// TestDefaultValues: SQLite, one replica replaced with Recreate, the memory
// on the chart's claim, the tokens and the audit key generated into the
// chart's Secret, no PodDisruptionBudget and no ServiceMonitor.
func TestDefaultValues(t *testing.T) {
	r := mustRender(t, "")
	if want := []string{"ConfigMap", "Deployment", "PersistentVolumeClaim", "Secret", "Service"}; !slices.Equal(sorted(r.kinds), want) {
		t.Errorf("kinds %v, want %v", sorted(r.kinds), want)
	}
	checkPod(t, r, "ghcr.io/openrecall/openrecall:"+loadChart(t).Metadata.AppVersion)
	d := r.deployment(t)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("replicas %v, want 1", d.Spec.Replicas)
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("strategy %q, want Recreate (never two SQLite writers)", d.Spec.Strategy.Type)
	}
	if len(r.claims) != 1 {
		t.Fatalf("%d PersistentVolumeClaims, want 1", len(r.claims))
	}
	pvc := r.claims[0]
	if pvc.Spec.Resources.Requests.Storage().IsZero() || !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteOnce) {
		t.Errorf("claim %s: %+v, want a size and ReadWriteOnce", pvc.Name, pvc.Spec)
	}
	if pvc.Annotations["helm.sh/resource-policy"] != "keep" {
		t.Errorf("claim %s is deleted by helm uninstall: the memory goes with it", pvc.Name)
	}
	env := r.env(t, nil)
	db := env["OPENRECALL_DB"]
	mounted := false
	for _, m := range r.container(t).VolumeMounts {
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name && strings.HasPrefix(db, m.MountPath+"/") && !m.ReadOnly {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("OPENRECALL_DB %q is not on claim %s mounted writable", db, pvc.Name)
	}
	checkAuditKey(t, env)
	cfg, tokens := r.loadConfig(t, env)
	if !hasScope(tokens, openrecall.ScopeIngest) {
		t.Errorf("tokens %v: no ingest token, and serve refuses a non-loopback listen without a token", tokens)
	}
	if cfg.Server.Instance != fullname {
		t.Errorf("server.instance %q, want %q (one process: a restart takes its claims back at once)", cfg.Server.Instance, fullname)
	}
	if s := r.secret(fullname); s == nil || s.Annotations["helm.sh/resource-policy"] != "keep" {
		t.Errorf("the chart's Secret %s is missing or not kept on uninstall (its generated tokens and audit key)", fullname)
	}
	if len(r.budgets) != 0 || len(r.serviceMonitors) != 0 {
		t.Errorf("default values render %d PodDisruptionBudgets and %d ServiceMonitors, want none", len(r.budgets), len(r.serviceMonitors))
	}
	checkNotes(t, r.notes, fullname, "ingest-token")
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestPostgreSQLValues: three replicas rolled one at a time, a
// PodDisruptionBudget over them, no volume, the DSN, tokens (an analyst's
// among them) and the audit key from the user's Secrets.
func TestPostgreSQLValues(t *testing.T) {
	values := `
database: postgresql
replicaCount: 3
image: {tag: "1.2.3"}
postgresql: {existingSecret: openrecall-db}
auditKey: {existingSecret: openrecall-audit}
tokens:
  existingSecret: openrecall-tokens
  analysts:
    - {name: alice, scopes: [read, retain], key: alice-token}
secretEnv:
  - {name: PD_ROUTING_KEY, secretName: openrecall-receivers, key: pagerduty}
config:
  notify:
    receivers:
      - {name: pager, type: pagerduty, routing_key: "env:PD_ROUTING_KEY"}
`
	external := map[string]map[string]string{
		"openrecall-db":        {"dsn": "postgres://openrecall@db:5432/openrecall?sslmode=require"},
		"openrecall-audit":     {"audit-key": strings.Repeat("ab", 32)},
		"openrecall-tokens":    {"ingest-token": "0123456789abcdef0123", "alice-token": "fedcba9876543210fedc"},
		"openrecall-receivers": {"pagerduty": "R0UTINGKEY"},
	}
	r := mustRender(t, values)
	if want := []string{"ConfigMap", "Deployment", "PodDisruptionBudget", "Service"}; !slices.Equal(sorted(r.kinds), want) {
		t.Errorf("kinds %v, want %v (every secret is the user's: no chart Secret, no claim)", sorted(r.kinds), want)
	}
	checkPod(t, r, "ghcr.io/openrecall/openrecall:1.2.3")
	d := r.deployment(t)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("replicas %v, want 3", d.Spec.Replicas)
	}
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		t.Errorf("strategy %q, want RollingUpdate", d.Spec.Strategy.Type)
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			t.Errorf("volume %s: a claim in postgresql mode", v.Name)
		}
	}
	if len(r.budgets) != 1 {
		t.Fatalf("%d PodDisruptionBudgets, want 1", len(r.budgets))
	}
	pdb := r.budgets[0]
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("PodDisruptionBudget selector %v does not match the pods %v", pdb.Spec.Selector, d.Spec.Template.Labels)
	}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget maxUnavailable %v, want 1", pdb.Spec.MaxUnavailable)
	}
	env := r.env(t, external)
	if env["OPENRECALL_DB"] != external["openrecall-db"]["dsn"] {
		t.Errorf("OPENRECALL_DB %q, want the DSN of Secret openrecall-db", env["OPENRECALL_DB"])
	}
	if env["PD_ROUTING_KEY"] != "R0UTINGKEY" {
		t.Errorf("PD_ROUTING_KEY %q, want the receiver Secret's value", env["PD_ROUTING_KEY"])
	}
	checkAuditKey(t, env)
	cfg, tokens := r.loadConfig(t, env)
	if !hasScope(tokens, openrecall.ScopeIngest) {
		t.Errorf("tokens %v: no ingest token", tokens)
	}
	alice := slices.IndexFunc(tokens, func(tk config.TokenEntry) bool { return tk.Name == "alice" })
	if alice < 0 || tokens[alice].Token != "fedcba9876543210fedc" || !slices.Contains(tokens[alice].Scopes, openrecall.ScopeRetain) {
		t.Errorf("tokens %v: want alice with her Secret's token and the retain scope", tokens)
	}
	if cfg.Server.Instance != "" {
		t.Errorf("server.instance %q: replicas must not share one (the default is each pod's host name)", cfg.Server.Instance)
	}
	var notify struct {
		Receivers []struct {
			Name       string `yaml:"name"`
			RoutingKey string `yaml:"routing_key"`
		} `yaml:"receivers"`
	}
	if err := cfg.Notify.Decode(&notify); err != nil || len(notify.Receivers) != 1 || notify.Receivers[0].RoutingKey != "env:PD_ROUTING_KEY" {
		t.Errorf("notify %+v (%v): the config value did not reach config.yaml", notify, err)
	}
	checkNotes(t, r.notes, "openrecall-tokens", "ingest-token")
}

// TestExistingClaim: with persistence.existingClaim the chart makes no
// claim and mounts the given one where OPENRECALL_DB points.
func TestExistingClaim(t *testing.T) {
	r := mustRender(t, "persistence: {existingClaim: openrecall-memory}")
	if len(r.claims) != 0 {
		t.Errorf("%d claims rendered, want none", len(r.claims))
	}
	var claim string
	for _, v := range r.deployment(t).Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	if claim != "openrecall-memory" {
		t.Errorf("claim %q mounted, want openrecall-memory", claim)
	}
}

// TestServiceMonitor: on request, a ServiceMonitor scrapes /metrics on the
// Service's port; an inline DSN lands in the chart's Secret.
func TestServiceMonitor(t *testing.T) {
	r := mustRender(t, `
database: postgresql
replicaCount: 2
postgresql: {dsn: "postgres://openrecall@db/openrecall"}
tokens: {ingest: "0123456789abcdef0123", read: "abcdef0123456789abcd"}
serviceMonitor: {enabled: true, labels: {release: prometheus}}
`)
	if len(r.serviceMonitors) != 1 {
		t.Fatalf("%d ServiceMonitors, want 1 (kinds %v)", len(r.serviceMonitors), r.kinds)
	}
	sm := r.serviceMonitors[0]
	svc := r.services[0]
	if sm.Metadata.Labels["release"] != "prometheus" || sm.Metadata.Namespace != namespace {
		t.Errorf("ServiceMonitor metadata %+v, want the release label and namespace %s", sm.Metadata, namespace)
	}
	sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(svc.Labels)) || !slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{namespace}) {
		t.Errorf("ServiceMonitor selects %v in %v, not Service %s %v", sm.Spec.Selector, sm.Spec.NamespaceSelector.MatchNames, svc.Name, svc.Labels)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("ServiceMonitor endpoints %+v, want port %s path /metrics", sm.Spec.Endpoints, svc.Spec.Ports[0].Name)
	}
	env := r.env(t, nil)
	if env["OPENRECALL_DB"] != "postgres://openrecall@db/openrecall" || env["OPENRECALL_READ_TOKEN"] != "abcdef0123456789abcd" {
		t.Errorf("env %v: want the inline DSN and read token from the chart's Secret", keys(env))
	}
	checkAuditKey(t, env)
	_, tokens := r.loadConfig(t, env)
	if !hasScope(tokens, openrecall.ScopeIngest) || !hasScope(tokens, openrecall.ScopeRead) {
		t.Errorf("tokens %v: want an ingest and a read token", tokens)
	}
}

// TestRefusedValues: values that cannot run fail to render, with a message
// that says what to set: values.schema.json refuses a key the chart does
// not know (a typo would keep a default silently) and a value of the wrong
// kind, the templates refuse combinations.
func TestRefusedValues(t *testing.T) {
	tests := []struct {
		name, values, want string
	}{
		{"sqlite with 2 replicas", "replicaCount: 2", "replicaCount is 2 but database is sqlite: SQLite allows one serve process"},
		{"unknown database", "database: mysql", `at '/database': value must be one of 'sqlite', 'postgresql'`},
		{"misspelt key", "replicas: 3", `additional properties 'replicas' not allowed`},
		{"misspelt nested key", "tokens: {ingestToken: x}", `at '/tokens': additional properties 'ingestToken' not allowed`},
		{"receiver secret without its key", "secretEnv: [{name: PD_KEY, secretName: receivers}]", `at '/secretEnv/0': missing property 'key'`},
		{"postgresql without a DSN", "database: postgresql", "no DSN is given: set postgresql.existingSecret"},
		{"short token", "tokens: {ingest: short}", "tokens.ingest is 5 bytes: a token needs 16 at least"},
		{"bad audit key", "auditKey: {value: nothex}", "auditKey.value must be 64 hex digits"},
		{"analyst without a Secret", "tokens: {analysts: [{name: bob, key: bob-token, scopes: [read, retain]}]}", "tokens.analysts[0] (bob): give its secretName"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(t, tt.values)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("render error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestStrictDecoding: the decoder this test relies on refuses a field the
// API does not know and a malformed value, so a typo in a template cannot
// pass as a manifest.
func TestStrictDecoding(t *testing.T) {
	files, err := render(t, "")
	if err != nil {
		t.Fatal(err)
	}
	var dep string
	for name, body := range files {
		if strings.HasSuffix(name, "/deployment.yaml") {
			dep = body
		}
	}
	if _, err := decodeAll(t, map[string]string{"d.yaml": dep}); err != nil {
		t.Fatalf("the rendered Deployment does not decode: %v", err)
	}
	for _, bad := range []struct{ name, from, to string }{
		{"unknown field", "  strategy:\n", "  stratgey:\n"},
		{"unknown container field", "          imagePullPolicy:", "          pullPolicy:"},
		{"bad quantity", "memory: 512Mi", "memory: 512 megabytes"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			if !strings.Contains(dep, bad.from) {
				t.Fatalf("the Deployment has no %q to break", bad.from)
			}
			_, err := decodeAll(t, map[string]string{"d.yaml": strings.Replace(dep, bad.from, bad.to, 1)})
			if err == nil {
				t.Fatal("decoded without error")
			}
		})
	}
}

// checkNotes: NOTES.txt's Alertmanager receiver is a webhook to the
// Service's alertmanager endpoint with a bearer token read from the Secret
// and key it names.
func checkNotes(t *testing.T, notes, secret, key string) {
	t.Helper()
	i := strings.Index(notes, "  route:\n")
	if i < 0 {
		t.Fatalf("NOTES.txt has no Alertmanager route:\n%s", notes)
	}
	block, _, _ := strings.Cut(notes[i:], "\n\n")
	var am struct {
		Route struct {
			Receiver string `json:"receiver"`
		} `json:"route"`
		Receivers []struct {
			Name           string `json:"name"`
			WebhookConfigs []struct {
				URL          string `json:"url"`
				SendResolved bool   `json:"send_resolved"`
				HTTPConfig   struct {
					Authorization struct {
						Type            string `json:"type"`
						CredentialsFile string `json:"credentials_file"`
					} `json:"authorization"`
				} `json:"http_config"`
			} `json:"webhook_configs"`
		} `json:"receivers"`
	}
	if err := yaml.UnmarshalStrict([]byte(dedent(block)), &am); err != nil {
		t.Fatalf("NOTES.txt's Alertmanager snippet: %v\n%s", err, block)
	}
	wantURL := fmt.Sprintf("http://%s.%s.svc:%d/api/v1/alerts/alertmanager", fullname, namespace, servePort)
	switch {
	case len(am.Receivers) != 1 || am.Route.Receiver != am.Receivers[0].Name || len(am.Receivers[0].WebhookConfigs) != 1:
		t.Errorf("NOTES.txt's snippet %+v: want one receiver, routed to, with one webhook", am)
	case am.Receivers[0].WebhookConfigs[0].URL != wantURL:
		t.Errorf("snippet URL %q, want %q", am.Receivers[0].WebhookConfigs[0].URL, wantURL)
	case am.Receivers[0].WebhookConfigs[0].HTTPConfig.Authorization.Type != "Bearer" ||
		!strings.HasSuffix(am.Receivers[0].WebhookConfigs[0].HTTPConfig.Authorization.CredentialsFile, "/"+secret+"/"+key):
		t.Errorf("snippet authorization %+v, want Bearer from Secret %s key %s", am.Receivers[0].WebhookConfigs[0].HTTPConfig.Authorization, secret, key)
	}
	if !strings.Contains(notes, "get secret "+secret+" -o jsonpath='{.data."+key+"}'") {
		t.Errorf("NOTES.txt does not say how to read the token of Secret %s key %s:\n%s", secret, key, notes)
	}
}

// dedent removes the indentation of block's first line from every line.
func dedent(block string) string {
	lines := strings.Split(block, "\n")
	n := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
	var b bytes.Buffer
	for _, l := range lines {
		if len(l) >= n {
			l = l[n:]
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// lintValues are the values sets linted: the defaults, and PostgreSQL with
// three replicas and the ServiceMonitor.
var lintValues = map[string]string{
	"default":    "",
	"postgresql": "database: postgresql\nreplicaCount: 3\npostgresql: {existingSecret: db}\nserviceMonitor: {enabled: true}\n",
}

// TestLint runs Helm's chart linter (what helm lint runs) through the SDK
// on both values sets, a warning failing like an error.
func TestLint(t *testing.T) {
	for name, values := range lintValues {
		t.Run("sdk/"+name, func(t *testing.T) {
			vals, err := common.ReadValues([]byte(values))
			if err != nil {
				t.Fatal(err)
			}
			res := lint.RunAll(chartDir, vals, namespace)
			for _, m := range res.Messages {
				if m.Severity >= support.WarningSev {
					t.Error(m)
				} else {
					t.Log(m)
				}
			}
		})
	}
}

// TestHelmLint runs the helm binary's lint --strict on both values sets
// when helm is on PATH (Debian does not package it; TestLint runs the same
// linter through the SDK).
func TestHelmLint(t *testing.T) {
	helm, err := exec.LookPath("helm")
	if err != nil {
		t.Skip("SKIPPED: helm is not on PATH, so helm lint --strict did not run (TestLint ran Helm's linter through the SDK)")
	}
	for name, values := range lintValues {
		t.Run("helm/"+name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "values.yaml")
			if err := os.WriteFile(f, []byte(values), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.CommandContext(t.Context(), helm, "lint", "--strict", chartDir, "-f", f).CombinedOutput()
			if err != nil {
				t.Fatalf("helm lint --strict: %v\n%s", err, out)
			}
		})
	}
}
