package dist_test

import (
	"bytes"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall/internal/testenv"
)

// composeDir holds compose.yaml, the Alertmanager configuration it mounts
// and the README that tells how to start it.
const composeDir = "../../deploy/compose"

// composeFile is the part of the Compose specification deploy/compose
// uses; decoding is strict, so a key outside it (or misspelt) fails.
type composeFile struct {
	Name     string                    `yaml:"name"`
	Services map[string]composeService `yaml:"services"`
	Secrets  map[string]struct {
		File        string `yaml:"file"`
		Environment string `yaml:"environment"`
	} `yaml:"secrets"`
	Volumes map[string]struct{} `yaml:"volumes"`
}

// composeService is one service of compose.yaml.
type composeService struct {
	Image       string            `yaml:"image"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	Secrets     []string          `yaml:"secrets"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test     []string `yaml:"test"`
		Interval string   `yaml:"interval"`
		Timeout  string   `yaml:"timeout"`
		Retries  int      `yaml:"retries"`
	} `yaml:"healthcheck"`
	Restart string `yaml:"restart"`
}

// amConfig is the part of Alertmanager's configuration alertmanager.yml
// uses, decoded strictly.
type amConfig struct {
	Route struct {
		Receiver       string   `yaml:"receiver"`
		GroupBy        []string `yaml:"group_by"`
		GroupWait      string   `yaml:"group_wait"`
		GroupInterval  string   `yaml:"group_interval"`
		RepeatInterval string   `yaml:"repeat_interval"`
	} `yaml:"route"`
	Receivers []struct {
		Name           string `yaml:"name"`
		WebhookConfigs []struct {
			URL          string `yaml:"url"`
			SendResolved bool   `yaml:"send_resolved"`
			HTTPConfig   struct {
				Authorization struct {
					Type            string `yaml:"type"`
					CredentialsFile string `yaml:"credentials_file"`
				} `yaml:"authorization"`
			} `yaml:"http_config"`
		} `yaml:"webhook_configs"`
	} `yaml:"receivers"`
}

// imageCmd is the image's command (scripts/image); compose runs the same.
var imageCmd = []string{"serve", "--listen", "0.0.0.0:9555"}

// required matches a required variable, ${NAME:?message}.
var required = regexp.MustCompile(`\$\{([A-Z_]+):\?[^}]*\}`)

// TestCompose reads deploy/compose/compose.yaml and the Alertmanager
// configuration it mounts strictly and checks that they fit together:
// every image pinned, every port on loopback and the right container port,
// volumes declared, secrets declared and mounted where Alertmanager reads
// the token, openrecall's database the postgres service, dependencies on
// services that exist and whose condition they can meet, healthchecks
// whose times parse, the webhook URL the openrecall service's Alertmanager
// endpoint, and every secret variable named in the README's recipe for
// .env. Then compose-go, the loader docker compose runs, loads it
// (scripts/image/composecheck: schema, interpolation, references) with
// the required variables set, and must refuse it without each. With
// Docker's compose plugin it runs `docker compose config -q`, and with
// amtool `amtool check-config`; without them those parts skip loudly
// (amtool fails under CI=true: .ci/run installs it).
func TestCompose(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(composeDir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	decodeYAML(t, "compose.yaml", raw, &c)
	if got := slices.Sorted(maps.Keys(c.Services)); !slices.Equal(got, []string{"alertmanager", "openrecall", "postgres"}) {
		t.Fatalf("services %q, want alertmanager, openrecall and postgres", got)
	}
	for name, s := range c.Services {
		checkService(t, c, name, s)
	}

	or := c.Services["openrecall"]
	if or.Image != "${OPENRECALL_IMAGE:-openrecall:latest}" {
		t.Errorf("openrecall image %q: want make image's name, openrecall:latest, overridable by OPENRECALL_IMAGE", or.Image)
	}
	if !slices.Equal(or.Command, imageCmd) {
		t.Errorf("openrecall command %q, want the image's %q", or.Command, imageCmd)
	}
	if want := []string{"127.0.0.1:9555:9555"}; !slices.Equal(or.Ports, want) {
		t.Errorf("openrecall ports %q, want %q (the --listen port, on the host's loopback)", or.Ports, want)
	}
	if !slices.ContainsFunc(or.Volumes, func(v string) bool { return strings.HasSuffix(v, ":/"+imageState) }) {
		t.Errorf("openrecall volumes %q: want a volume on the image's state directory /%s (the audit key file)", or.Volumes, imageState)
	}
	// The database is the postgres service, with its user, password and
	// database.
	pg := c.Services["postgres"]
	env := map[string]string{} // a value for every required variable
	for _, m := range required.FindAllStringSubmatch(string(raw), -1) {
		env[m[1]] = "0123456789abcdef0123456789abcdef"
	}
	env["POSTGRES_PASSWORD"] = "pg-password-value"
	dsn, err := url.Parse(interpolate(or.Environment["OPENRECALL_DB"], env))
	if err != nil {
		t.Fatalf("openrecall's OPENRECALL_DB: %v", err)
	}
	pass, _ := dsn.User.Password()
	if dsn.Scheme != "postgres" || dsn.Host != "postgres:5432" || dsn.User.Username() != pg.Environment["POSTGRES_USER"] ||
		pass != interpolate(pg.Environment["POSTGRES_PASSWORD"], env) || pass == "" || dsn.Path != "/"+pg.Environment["POSTGRES_DB"] {
		t.Errorf("openrecall's OPENRECALL_DB %q does not name the postgres service's database (user %q, password %q, database %q)",
			dsn.Redacted(), pg.Environment["POSTGRES_USER"], pg.Environment["POSTGRES_PASSWORD"], pg.Environment["POSTGRES_DB"])
	}
	if or.DependsOn["postgres"].Condition != "service_healthy" {
		t.Errorf("openrecall must wait for a healthy postgres (depends_on condition service_healthy)")
	}
	for _, v := range []string{"OPENRECALL_INGEST_TOKEN", "OPENRECALL_READ_TOKEN"} {
		if m := required.FindStringSubmatch(or.Environment[v]); m == nil || m[1] != v {
			t.Errorf("openrecall's %s is %q: want the required variable ${%s:?…}", v, or.Environment[v], v)
		}
	}

	// Alertmanager posts to openrecall with the ingest token.
	am := c.Services["alertmanager"]
	secret, ok := c.Secrets["openrecall_ingest_token"]
	if !ok || secret.Environment != "OPENRECALL_INGEST_TOKEN" || !slices.Equal(am.Secrets, []string{"openrecall_ingest_token"}) {
		t.Errorf("the secret openrecall_ingest_token must be $OPENRECALL_INGEST_TOKEN (the token openrecall accepts), mounted in alertmanager: %+v, %q", secret, am.Secrets)
	}
	amFile := ""
	for _, v := range am.Volumes {
		if src, dst, ok := strings.Cut(strings.TrimSuffix(v, ":ro"), ":"); ok && slices.Contains(am.Command, "--config.file="+dst) {
			amFile = src
		}
	}
	if amFile == "" {
		t.Fatalf("alertmanager mounts no file where its --config.file points: volumes %q, command %q", am.Volumes, am.Command)
	}
	amRaw, err := os.ReadFile(filepath.Join(composeDir, amFile))
	if err != nil {
		t.Fatal(err)
	}
	var amc amConfig
	decodeYAML(t, amFile, amRaw, &amc)
	var hooks []string
	for _, r := range amc.Receivers {
		if r.Name != amc.Route.Receiver {
			continue
		}
		for _, w := range r.WebhookConfigs {
			hooks = append(hooks, w.URL)
			u, err := url.Parse(w.URL)
			if err != nil || u.Scheme != "http" || u.Host != "openrecall:9555" || u.Path != "/api/v1/alerts/alertmanager" {
				t.Errorf("%s: webhook url %q, want openrecall's Alertmanager endpoint in the compose network, http://openrecall:9555/api/v1/alerts/alertmanager", amFile, w.URL)
			}
			a := w.HTTPConfig.Authorization
			if a.Type != "Bearer" || a.CredentialsFile != "/run/secrets/openrecall_ingest_token" {
				t.Errorf("%s: authorization %+v, want Bearer with the secret's file /run/secrets/openrecall_ingest_token", amFile, a)
			}
			if !w.SendResolved {
				t.Errorf("%s: send_resolved is off: openrecall records resolutions", amFile)
			}
		}
	}
	if len(hooks) != 1 {
		t.Errorf("%s: the route's receiver %q has webhooks %q, want one", amFile, amc.Route.Receiver, hooks)
	}
	for _, d := range []string{amc.Route.GroupWait, amc.Route.GroupInterval, amc.Route.RepeatInterval} {
		if _, err := time.ParseDuration(d); err != nil {
			t.Errorf("%s: route duration %q: %v", amFile, d, err)
		}
	}

	// Every required variable is in the README's recipe for .env.
	readme, err := os.ReadFile(filepath.Join(composeDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range env {
		if !bytes.Contains(readme, []byte(name+"=")) {
			t.Errorf("compose.yaml requires $%s; deploy/compose/README.md's .env recipe does not set it", name)
		}
	}

	// compose-go, the Compose specification's loader (what docker
	// compose runs), through scripts/image/composecheck: the schema,
	// interpolation and references; and without the secrets it refuses.
	t.Run("compose-go", func(t *testing.T) {
		goBin, err := exec.LookPath("go")
		if err != nil {
			t.Fatalf("no go on PATH to run scripts/image/composecheck: %v", err)
		}
		file, err := filepath.Abs(filepath.Join(composeDir, "compose.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		requiredVars := slices.Sorted(maps.Keys(env))
		check := func(env map[string]string) (string, error) {
			cmd := exec.Command(goBin, "-C", "../../scripts/image", "run", "./composecheck", file)
			for _, kv := range os.Environ() { // less every required variable
				if name, _, _ := strings.Cut(kv, "="); !slices.Contains(requiredVars, name) {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		if out, err := check(env); err != nil || !strings.Contains(out, "services alertmanager, openrecall, postgres") {
			t.Errorf("composecheck %s: %v\n%s", file, err, out)
		}
		for _, name := range requiredVars {
			without := maps.Clone(env)
			delete(without, name)
			if out, err := check(without); err == nil || !strings.Contains(out, "required variable "+name+" is missing") {
				t.Errorf("composecheck without $%s: %v, want it refused as a missing required variable\n%s", name, err, out)
			}
		}
	})
	t.Run("amtool", func(t *testing.T) {
		amtool, err := exec.LookPath("amtool")
		if err != nil {
			if testenv.CI() {
				t.Fatal("CI=true and no amtool: apt-get install prometheus-alertmanager")
			}
			t.Skip("SKIPPED: amtool check-config: no amtool on PATH (apt-get install prometheus-alertmanager)")
		}
		out, err := exec.Command(amtool, "check-config", filepath.Join(composeDir, amFile)).CombinedOutput()
		if err != nil {
			t.Errorf("amtool check-config %s: %v\n%s", amFile, err, out)
		}
	})
	t.Run("docker compose", func(t *testing.T) {
		docker, err := exec.LookPath("docker")
		if err == nil {
			err = exec.Command(docker, "compose", "version").Run()
		}
		if err != nil {
			t.Skipf("SKIPPED: docker compose config -q: no docker CLI with the compose plugin (%v)", err)
		}
		cmd := exec.Command(docker, "compose", "config", "-q")
		cmd.Dir = composeDir
		cmd.Env = os.Environ()
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("docker compose config -q: %v\n%s", err, out)
		}
	})
}

// checkService checks what every service must have.
func checkService(t *testing.T, c composeFile, name string, s composeService) {
	t.Helper()
	if s.Image == "" || strings.HasSuffix(s.Image, ":latest") || !strings.Contains(s.Image, ":") {
		if name != "openrecall" {
			t.Errorf("%s: image %q: want a pinned tag", name, s.Image)
		}
	}
	if s.Restart != "unless-stopped" {
		t.Errorf("%s: restart %q, want unless-stopped", name, s.Restart)
	}
	for _, p := range s.Ports {
		if parts := strings.Split(p, ":"); len(parts) != 3 || parts[0] != "127.0.0.1" {
			t.Errorf("%s: port %q: want 127.0.0.1:HOST:CONTAINER (the host's loopback; a proxy or firewall opens it)", name, p)
		}
	}
	for _, v := range s.Volumes {
		src, rest, ok := strings.Cut(v, ":")
		dst, mode, _ := strings.Cut(rest, ":")
		switch {
		case !ok || !strings.HasPrefix(dst, "/") || (mode != "" && mode != "ro"):
			t.Errorf("%s: volume %q: want SOURCE:/TARGET[:ro]", name, v)
		case strings.HasPrefix(src, "./"):
			if _, err := os.Stat(filepath.Join(composeDir, src)); err != nil {
				t.Errorf("%s: bind mount %q: %v", name, v, err)
			}
		default:
			if _, ok := c.Volumes[src]; !ok {
				t.Errorf("%s: volume %q: %s is not declared under volumes", name, v, src)
			}
		}
	}
	for _, sec := range s.Secrets {
		if _, ok := c.Secrets[sec]; !ok {
			t.Errorf("%s: secret %q is not declared under secrets", name, sec)
		}
	}
	for dep, d := range s.DependsOn {
		target, ok := c.Services[dep]
		switch {
		case !ok:
			t.Errorf("%s depends on %q, which is no service", name, dep)
		case d.Condition == "service_healthy" && target.Healthcheck == nil:
			t.Errorf("%s waits for %s to be healthy, which has no healthcheck", name, dep)
		case d.Condition != "service_healthy" && d.Condition != "service_started":
			t.Errorf("%s: depends_on %s condition %q", name, dep, d.Condition)
		}
		if _, back := target.DependsOn[name]; back {
			t.Errorf("%s and %s depend on each other", name, dep)
		}
	}
	if h := s.Healthcheck; h != nil {
		if len(h.Test) < 2 || h.Test[0] != "CMD" || h.Retries < 1 {
			t.Errorf("%s: healthcheck test %q retries %d: want [CMD, program, args…] and retries", name, h.Test, h.Retries)
		}
		for _, d := range []string{h.Interval, h.Timeout} {
			if _, err := time.ParseDuration(d); err != nil {
				t.Errorf("%s: healthcheck duration %q: %v", name, d, err)
			}
		}
	}
}

// decodeYAML decodes one YAML document strictly: a key the type lacks is
// an error, and so is a second document.
func decodeYAML(t *testing.T, what string, data []byte, v any) {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var extra any
	if err := dec.Decode(&extra); err == nil {
		t.Fatalf("%s: a second YAML document", what)
	}
}

// variable matches ${NAME}, ${NAME:-default} and ${NAME:?message}.
var variable = regexp.MustCompile(`\$\{([A-Z_]+)(?::([-?])([^}]*))?\}`)

// interpolate substitutes variables as compose does: the value from env,
// else the default of ${NAME:-default}, else "".
func interpolate(s string, env map[string]string) string {
	return variable.ReplaceAllStringFunc(s, func(v string) string {
		m := variable.FindStringSubmatch(v)
		if val := env[m[1]]; val != "" {
			return val
		}
		if m[2] == "-" {
			return m[3]
		}
		return ""
	})
}
