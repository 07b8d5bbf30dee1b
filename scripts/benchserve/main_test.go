package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall/internal/pgtest"
	"github.com/openrecall/openrecall/internal/testenv"
)

func defaults() options {
	return options{bin: "./bin/openrecall", db: "sqlite", procs: []int{1}, workers: []int{1, 4}, clients: 8, n: 20000, duration: 15 * time.Second,
		phase: 15 * time.Second, rates: []int{50, 80, 100}, warmup: 200, senderEvery: 5, soakRate: 50,
		soakSample: 5 * time.Second, drain: 10 * time.Minute, logLevel: "info"}
}

func TestParseFlags(t *testing.T) {
	with := func(f func(*options)) options {
		o := defaults()
		f(&o)
		return o
	}
	tests := []struct {
		name    string
		args    []string
		want    options
		wantErr bool
	}{
		{name: "defaults", want: defaults()},
		{name: "workers and rates", args: []string{"-workers", "2, 8", "-rates", "25,100", "-clients", "16"},
			want: with(func(o *options) { o.workers, o.rates, o.clients = []int{2, 8}, []int{25, 100}, 16 })},
		{name: "no constant-rate phases", args: []string{"-rates", ""}, want: with(func(o *options) { o.rates = nil })},
		{name: "soak", args: []string{"-soak", "10m", "-soak-rate", "50", "-workers", "1"},
			want: with(func(o *options) { o.soak, o.soakRate, o.workers = 10*time.Minute, 50, []int{1} })},
		{name: "postgres, several processes", args: []string{"-db", "postgres", "-procs", "1,2,4", "-workers", "1"},
			want: with(func(o *options) { o.db, o.procs, o.workers = "postgres", []int{1, 2, 4}, []int{1} })},
		{name: "postgres URL", args: []string{"-db", "postgres://postgres@127.0.0.1:5432/test"},
			want: with(func(o *options) { o.db = "postgres://postgres@127.0.0.1:5432/test" })},
		{name: "unknown database", args: []string{"-db", "mysql"}, wantErr: true},
		{name: "zero processes", args: []string{"-procs", "0"}, wantErr: true},
		{name: "soak of several processes", args: []string{"-soak", "1m", "-procs", "2"}, wantErr: true},
		{name: "inbox limit", args: []string{"-inbox-limit", "500"}, want: with(func(o *options) { o.inboxLimit = 500 })},
		{name: "negative inbox limit", args: []string{"-inbox-limit", "-1"}, wantErr: true},
		{name: "retention", args: []string{"-retention", "5m"}, want: with(func(o *options) { o.retention = 5 * time.Minute })},
		{name: "retention, several processes", args: []string{"-retention", "5m", "-db", "postgres", "-procs", "1,2"},
			want: with(func(o *options) { o.retention, o.db, o.procs = 5*time.Minute, "postgres", []int{1, 2} })},
		{name: "lease", args: []string{"-lease", "3s", "-db", "postgres"}, want: with(func(o *options) { o.lease, o.db = 3*time.Second, "postgres" })},
		{name: "lease shorter than serve's minimum", args: []string{"-lease", "2s"}, wantErr: true},
		{name: "negative retention", args: []string{"-retention", "-1m"}, wantErr: true},
		{name: "archive", args: []string{"-retention", "5m", "-archive"}, want: with(func(o *options) { o.retention, o.archive = 5*time.Minute, true })},
		{name: "archive without a retention", args: []string{"-archive"}, wantErr: true},
		{name: "heap profiles", args: []string{"-soak", "3m", "-heap-profiles"}, want: with(func(o *options) { o.soak, o.heapProfiles = 3*time.Minute, true })},
		{name: "heap profiles with retention, one process", args: []string{"-soak", "3m", "-heap-profiles", "-retention", "1m", "-procs", "1", "-db", "postgres"},
			want: with(func(o *options) {
				o.soak, o.heapProfiles, o.retention, o.db = 3*time.Minute, true, time.Minute, "postgres"
			})},
		{name: "heap profiles without a soak", args: []string{"-heap-profiles"}, wantErr: true},
		{name: "heap profiles of several processes", args: []string{"-soak", "3m", "-heap-profiles", "-procs", "2"}, wantErr: true},
		{name: "webhooks only", args: []string{"-sender-every", "0"}, want: with(func(o *options) { o.senderEvery = 0 })},
		{name: "zero workers", args: []string{"-workers", "0"}, wantErr: true},
		{name: "not a number", args: []string{"-workers", "1,x"}, wantErr: true},
		{name: "empty workers", args: []string{"-workers", ""}, wantErr: true},
		{name: "rate out of range", args: []string{"-rates", "0"}, wantErr: true},
		{name: "zero clients", args: []string{"-clients", "0"}, wantErr: true},
		{name: "zero n", args: []string{"-n", "0"}, wantErr: true},
		{name: "zero duration", args: []string{"-duration", "0s"}, wantErr: true},
		{name: "negative soak", args: []string{"-soak", "-1s"}, wantErr: true},
		{name: "soak rate", args: []string{"-soak-rate", "0"}, wantErr: true},
		{name: "stray argument", args: []string{"extra"}, wantErr: true},
		{name: "unknown flag", args: []string{"-bogus"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseFlags(%q): no error", tt.args)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("parseFlags(%q) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
	if code := run(context.Background(), []string{"-workers", "x"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("bad flags: exit %d, want 2", code)
	}
}

func TestParseStatus(t *testing.T) {
	rss, hwm, err := parseStatus([]byte("Name:\topenrecall\nVmHWM:\t   90112 kB\nVmRSS:\t   81920 kB\nThreads:\t9\n"))
	if err != nil || rss != 81920<<10 || hwm != 90112<<10 {
		t.Errorf("parseStatus: rss %d hwm %d err %v", rss, hwm, err)
	}
	if _, _, err := parseStatus([]byte("Name:\tx\nVmRSS:\t1 kB\n")); err == nil {
		t.Error("parseStatus without VmHWM: no error")
	}
}

func TestByMinute(t *testing.T) {
	ss := []rssSample{{at: 0, rss: 100 << 20, depth: 0, db: 10 << 20}, {at: 30 * time.Second, rss: 200 << 20},
		{at: 65 * time.Second, rss: 110 << 20, depth: 7, db: 12 << 20}, {at: 3 * time.Minute, rss: 120 << 20, depth: -1, db: 12 << 20}}
	if got, want := byMinute(ss), " 0m 100.0/0/10.0 1m 110.0/7/12.0 3m 120.0/-1/12.0"; got != want {
		t.Errorf("byMinute = %q, want %q", got, want)
	}
}

// TestTrackerVerify: the exactly-once check fails on a delivery never
// finished, one finished twice and one finished that nobody accepted.
func TestTrackerVerify(t *testing.T) {
	tests := []struct {
		name       string
		accepted   []string
		seen       []string
		unanswered int
		wantErr    bool
	}{
		{name: "each once", accepted: []string{"a", "b"}, seen: []string{"b", "a"}},
		{name: "never finished", accepted: []string{"a", "b"}, seen: []string{"a"}, wantErr: true},
		{name: "finished twice", accepted: []string{"a", "b"}, seen: []string{"a", "b", "a"}, wantErr: true},
		{name: "accepted twice as new", accepted: []string{"a", "a"}, seen: []string{"a"}, wantErr: true},
		{name: "not accepted", accepted: []string{"a"}, seen: []string{"a", "z"}, wantErr: true},
		{name: "not accepted but a request went unanswered", accepted: []string{"a"}, seen: []string{"a", "z"}, unanswered: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTracker()
			for _, id := range tt.accepted {
				tr.accept([]analysis{{AnalysisID: id}, {AnalysisID: "dup-" + id, Duplicate: true}})
			}
			for _, id := range tt.seen {
				tr.seen[id]++
				tr.finished++
			}
			if err := tr.verify(tt.unanswered); (err != nil) != tt.wantErr {
				t.Errorf("verify: %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

// TestPayloads: the load is real payloads, each delivery a new alert: the
// corpus webhooks and the sender fixtures read without a rejection, and two
// renderings of one fixture carry different alert ids.
func TestPayloads(t *testing.T) {
	rules, err := loadRules("")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := sendersNear(".")
	if err != nil {
		t.Fatal(err)
	}
	fixtures, _, err := loadFixtures(dir)
	if err != nil {
		t.Fatal(err)
	}
	senders := senderNames(fixtures)
	if len(fixtures) < 50 || len(senders) < 15 {
		t.Errorf("%d fixtures of %d senders: want most of intake/testdata/senders", len(fixtures), len(senders))
	}
	pl := &payloads{rules: rules, fixtures: fixtures, senderEvery: 5}
	ids := map[string]bool{}
	paths := map[string]int{}
	for n := range 200 {
		path, body, err := pl.body(n)
		if err != nil {
			t.Fatal(err)
		}
		paths[path]++
		got, err := alertIDs(body)
		if err != nil {
			t.Fatalf("delivery %d (%s): %v", n, path, err)
		}
		for _, id := range got {
			if ids[id] {
				t.Fatalf("delivery %d (%s): alert id %q already sent", n, path, id)
			}
			ids[id] = true
		}
	}
	if diff := cmp.Diff(map[string]int{alertmanagerPath: 160, alertsPath: 40}, paths); diff != "" {
		t.Errorf("endpoints (-want +got):\n%s", diff)
	}
}

// TestShortRun runs the bench against the real binary: a few hundred
// deliveries to one worker, every phase, and the run's own check that each
// accepted delivery was triaged exactly once; the table must agree. A
// short soak with -heap-profiles saves both heap profiles and reports the
// database size.
func TestShortRun(t *testing.T) {
	dir, out := shortRun(t, 1, "-soak", "6s", "-soak-rate", "10", "-soak-sample", "1s", "-heap-profiles", "-retention", "1h")
	for _, name := range []string{"heap-soak-early.pb.gz", "heap-soak-late.pb.gz"} {
		if fi, err := os.Stat(filepath.Join(dir, "procs-1-workers-1", name)); err != nil || fi.Size() == 0 {
			t.Errorf("heap profile %s: %v", name, err)
		}
	}
	if !regexp.MustCompile(`soak by minute \(RSS MiB / inbox depth / database MiB\): 0m [\d.]+/-?\d+/[\d.]+`).MatchString(out) {
		t.Errorf("no soak line with the database size:\n%s", out)
	}
}

// TestShortRunPostgres is TestShortRun with two serve processes sharing a
// fresh PostgreSQL schema: each delivery, whichever process accepted it,
// is triaged exactly once; -retention reaches both processes' config files,
// each with its own instance.
func TestShortRunPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and serves it; skipped with -short")
	}
	dir, _ := shortRun(t, 2, "-db", pgtest.Server(t), "-retention", "1h")
	for i := 1; i <= 2; i++ {
		b, err := os.ReadFile(filepath.Join(dir, "procs-2-workers-1", "serve-"+strconv.Itoa(i), "config.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(b), "server:\n  instance: bench-"+strconv.Itoa(i)+"\n  retention: 1h0m0s\n"; got != want {
			t.Errorf("serve %d config %q, want %q", i, got, want)
		}
	}
}

// shortRun runs the bench with procs processes and args, checks its table
// and returns its work directory and report.
func shortRun(t *testing.T, procs int, args ...string) (dir, report string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and serves it; skipped with -short")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := testenv.Build(t, repo)
	dir = t.TempDir()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"-bin", bin, "-workers", "1", "-procs", strconv.Itoa(procs), "-n", "100", "-duration", "20s", "-phase", "20s",
		"-warmup", "20", "-clients", "4", "-dir", dir, "-log-level", "warn"}, args...), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	t.Logf("\n%s", out.String())
	m := regexp.MustCompile(`exactly once: (\d+) accepted deliveries, (\d+) finished, each once`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no exactly-once line:\n%s", out.String())
	}
	accepted, _ := strconv.Atoi(m[1])
	finished, _ := strconv.Atoi(m[2])
	// Warm-up (20) and four phases of at most 100 posts, some senders'
	// bodies holding more than one alert.
	if accepted != finished || accepted < 300 {
		t.Errorf("%d accepted, %d finished: want equal, at least 300", accepted, finished)
	}
	// The table: a row per phase, all 202s, no error, and its deliveries
	// add up (with the warm-up's) to what the check counted.
	sum := 0
	for _, phase := range []string{"max", "50%", "80%", "100%"} {
		re := regexp.MustCompile(`(?m)^\s+` + strconv.Itoa(procs) + `\s+1\s+` + regexp.QuoteMeta(phase) + `\s+\S+\s+(\d+)\s+(\d+)\s+\d+\s+(\d+)\s+[\d.]+\s+[\d.]+\s+(\d+)\s+(\d+)\s+(\d+)`)
		f := re.FindStringSubmatch(out.String())
		if f == nil {
			t.Fatalf("no %s row:\n%s", phase, out.String())
		}
		sent, _ := strconv.Atoi(f[1])
		ok, _ := strconv.Atoi(f[2])
		deliveries, _ := strconv.Atoi(f[3])
		refused, _ := strconv.Atoi(f[4])
		errs, _ := strconv.Atoi(f[5])
		triaged, _ := strconv.Atoi(f[6])
		if sent == 0 || ok+refused != sent || errs != 0 || deliveries < ok || triaged != deliveries {
			t.Errorf("%s row: sent %d, 202 %d, deliveries %d, 503 %d, errors %d, triaged %d", phase, sent, ok, deliveries, refused, errs, triaged)
		}
		sum += deliveries
	}
	if f := regexp.MustCompile(`(?m)^\s+` + strconv.Itoa(procs) + `\s+1\s+soak \S+ at \d+% of triaged/s\s+\S+\s+\d+\s+\d+\s+\d+\s+(\d+)\s`).FindStringSubmatch(out.String()); f != nil {
		deliveries, _ := strconv.Atoi(f[1])
		sum += deliveries
	}
	if sum > accepted || sum < accepted-40 {
		t.Errorf("phases' deliveries %d, accepted %d (warm-up of 20 posts aside)", sum, accepted)
	}
	if !strings.Contains(out.String(), "peak RSS") {
		t.Errorf("no RSS figure:\n%s", out.String())
	}
	return dir, out.String()
}

// TestPGServerLoopback: the bench creates and drops schemas, so it takes a
// PostgreSQL server on loopback only.
func TestPGServerLoopback(t *testing.T) {
	tests := []struct {
		url     string
		wantErr bool
	}{
		{url: "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"},
		{url: "postgres://u@localhost/db"},
		{url: "postgresql://u@[::1]:5433/db"},
		{url: "postgres:///db?host=/run/postgresql"},
		{url: "postgres://u@db.example.com/db", wantErr: true},
		{url: "postgres://u@10.0.0.5/db", wantErr: true},
		{url: "postgres://u@127.0.0.1/db?host=db.example.com", wantErr: true},
	}
	for _, tt := range tests {
		if _, err := pgServer(tt.url); (err != nil) != tt.wantErr {
			t.Errorf("pgServer(%q): %v, want error %v", tt.url, err, tt.wantErr)
		}
	}
}

// TestServerSettingsYAML: one config file per process names its instance
// and sets the run's server.* keys; profiles are a flag, not a key.
func TestServerSettingsYAML(t *testing.T) {
	tests := []struct {
		ss   serverSettings
		want string
	}{
		{serverSettings{}, ""},
		{serverSettings{profiles: true}, ""},
		{serverSettings{instance: "bench-1"}, "server:\n  instance: bench-1\n"},
		{serverSettings{inboxLimit: 300}, "server:\n  inbox_limit: 300\n"},
		{serverSettings{inboxLimit: 300, retention: 5 * time.Minute}, "server:\n  inbox_limit: 300\n  retention: 5m0s\n"},
		{serverSettings{retention: 5 * time.Minute, archiveDir: "/w/archive"}, "server:\n  retention: 5m0s\n  archive_dir: /w/archive\n"},
		{serverSettings{instance: "bench-2", inboxLimit: 300, retention: time.Hour, profiles: true},
			"server:\n  instance: bench-2\n  inbox_limit: 300\n  retention: 1h0m0s\n"},
	}
	for _, tt := range tests {
		if got := tt.ss.yaml(); got != tt.want {
			t.Errorf("%+v: yaml %q, want %q", tt.ss, got, tt.want)
		}
	}
}
