package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Options says what to run.
type Options struct {
	// Bin is the openrecall binary to start.
	Bin string
	// Dir is a directory for the database, config and serve.log.
	Dir string
	// Senders is the folder of sender fixtures (intake/testdata/senders).
	Senders string
	// Sample keeps one probe in Sample of each family (1: all); which ones
	// is fixed, so two runs send the same probes.
	Sample int
	// Drain bounds the wait for accepted deliveries to be analysed.
	Drain time.Duration
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Family is one family's totals.
type Family struct {
	Name     string
	Probes   int
	Expected string
	Failures []string // one line a failure
	// Counts are the family's answer classes ("accepted", "rejected 4xx"...).
	Counts map[string]int
}

// Report is a run's families.
type Report struct {
	Families []*Family
}

// Failed is the number of failures over every family.
func (r Report) Failed() int {
	n := 0
	for _, f := range r.Families {
		n += len(f.Failures)
	}
	return n
}

// Print writes the table, the answer classes and up to max failures of
// each family.
func (r Report) Print(w io.Writer, max int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "family\tprobes\texpected outcome\tfailures")
	total, failed := 0, 0
	for _, f := range r.Families {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\n", f.Name, f.Probes, f.Expected, len(f.Failures))
		total += f.Probes
		failed += len(f.Failures)
	}
	fmt.Fprintf(tw, "total\t%d\t\t%d\n", total, failed)
	_ = tw.Flush()
	for _, f := range r.Families {
		var keys []string
		for k := range f.Counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %d", k, f.Counts[k]))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "\n%s answers: %s\n", f.Name, strings.Join(parts, ", "))
		}
		if len(f.Failures) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s failures (%d):\n", f.Name, len(f.Failures))
		for i, l := range groupFailures(f.Failures) {
			if i == max {
				fmt.Fprintf(w, "  … and more kinds\n")
				break
			}
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
}

// groupFailures folds failures of the same kind (the text before " | ")
// into one line with a count and a first example.
func groupFailures(fs []string) []string {
	type g struct {
		n       int
		example string
	}
	var order []string
	by := map[string]*g{}
	for _, f := range fs {
		kind, ex, _ := strings.Cut(f, " | ")
		if by[kind] == nil {
			by[kind] = &g{example: ex}
			order = append(order, kind)
		}
		by[kind].n++
	}
	out := make([]string, len(order))
	for i, k := range order {
		out[i] = fmt.Sprintf("%5d × %s (e.g. %s)", by[k].n, k, by[k].example)
	}
	return out
}

// prober holds what the families share.
type prober struct {
	opts Options
	srv  *server
	c    *http.Client
	log  io.Writer
	// ledger of accepted deliveries, checked after the drain.
	ids      map[string]string // analysis id -> which probe
	pdKeys   map[string]string // accepted PagerDuty events (their answer names no analysis id) by alert id
	fixtures []fixture
}

func (p *prober) logf(format string, a ...any) {
	fmt.Fprintf(p.log, format+"\n", a...)
}

// keep says whether the next probe of a family is sampled.
func (p *prober) keep(i int) bool { return p.opts.Sample <= 1 || i%p.opts.Sample == 0 }

// answer is one HTTP answer.
type answer struct {
	code int
	hdr  http.Header
	body []byte
	err  error
}

func (a answer) String() string {
	if a.err != nil {
		return "transport error: " + a.err.Error()
	}
	b := a.body
	if len(b) > 160 {
		b = b[:160]
	}
	return fmt.Sprintf("%d %s", a.code, bytes.TrimSpace(b))
}

// do sends one request.
func (p *prober) do(method, path string, body []byte, hdr map[string]string, cookies ...*http.Cookie) answer {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, p.srv.base+path, rd)
	if err != nil {
		return answer{err: err}
	}
	if body != nil && hdr["Content-Type"] == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := p.c.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return answer{code: resp.StatusCode, hdr: resp.Header, body: b, err: err}
}

func bearerHdr(tok string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + tok}
}

// Run starts serve, runs the three families and stops it.
func Run(ctx context.Context, opts Options) (Report, error) {
	if opts.Sample < 1 {
		opts.Sample = 1
	}
	if opts.Drain <= 0 {
		opts.Drain = 5 * time.Minute
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	fx, err := loadFixtures(opts.Senders)
	if err != nil {
		return Report{}, err
	}
	srv, err := start(ctx, opts.Bin, opts.Dir)
	if err != nil {
		return Report{}, err
	}
	defer srv.stop()
	p := &prober{opts: opts, srv: srv, log: log, ids: map[string]string{}, pdKeys: map[string]string{}, fixtures: fx,
		c: &http.Client{Timeout: 2 * time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	var rep Report
	for _, fam := range []func() *Family{p.auth, p.hostile, p.mutations} {
		f := fam()
		if err := srv.alive(p.c); err != nil {
			f.Failures = append(f.Failures, "server not alive after the family | "+err.Error())
		}
		p.logf("%s: %d probes, %d failures", f.Name, f.Probes, len(f.Failures))
		rep.Families = append(rep.Families, f)
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	rep.Families = append(rep.Families, p.drain())
	return rep, nil
}

// drain waits until every accepted delivery has a result and checks each
// has exactly one.
func (p *prober) drain() *Family {
	f := &Family{Name: "drain", Expected: "every accepted delivery analysed exactly once", Counts: map[string]int{}}
	f.Probes = len(p.ids) + len(p.pdKeys)
	deadline := time.Now().Add(p.opts.Drain)
	seen := map[string]int{}
	pdSeen := map[string]bool{}
	var since int64
	for {
		a := p.do("GET", fmt.Sprintf("/api/v1/results?since=%d&limit=200", since), nil, bearerHdr(p.srv.tok.read))
		if a.err != nil || a.code != 200 {
			f.Failures = append(f.Failures, "results API failed | "+a.String())
			return f
		}
		var page struct {
			Results []struct {
				AnalysisID string `json:"analysis_id"`
				Endpoint   string `json:"endpoint"`
				Alert      struct {
					ID string `json:"id"`
				} `json:"alert"`
				Done bool `json:"done"`
			} `json:"results"`
			Next int64 `json:"next"`
		}
		if err := json.Unmarshal(a.body, &page); err != nil {
			f.Failures = append(f.Failures, "results API unreadable | "+err.Error())
			return f
		}
		for _, r := range page.Results {
			if !r.Done {
				continue
			}
			if _, ok := p.ids[r.AnalysisID]; ok {
				seen[r.AnalysisID]++
			}
			if r.Endpoint == "pagerduty" {
				pdSeen[r.Alert.ID] = true
			}
		}
		since = page.Next
		if len(page.Results) > 0 {
			continue
		}
		missing := 0
		for id := range p.ids {
			if seen[id] == 0 {
				missing++
			}
		}
		for k := range p.pdKeys {
			if !pdSeen[k] {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	for id, from := range p.ids {
		switch n := seen[id]; {
		case n == 0:
			f.Failures = append(f.Failures, "accepted, never analysed (lost) | "+id+" from "+from)
		case n > 1:
			f.Failures = append(f.Failures, "analysed more than once | "+fmt.Sprintf("%s %d times, from %s", id, n, from))
		}
	}
	pdFound := 0
	for k, from := range p.pdKeys {
		if pdSeen[k] {
			pdFound++
		} else {
			f.Failures = append(f.Failures, "accepted PagerDuty event never analysed (lost) | "+k+" from "+from)
		}
	}
	f.Counts["analysed"] = len(seen) + pdFound
	if v := p.do("GET", "/api/v1/audit/verify", nil, bearerHdr(p.srv.tok.read)); v.code != 200 {
		f.Failures = append(f.Failures, "audit verify not 200 after the probes | "+v.String())
	}
	return f
}

// record notes the analyses a 2xx ingest answer accepted; it returns the
// answer's analyses for the caller's id checks.
func (p *prober) record(from string, a answer) []ackAnalysis {
	var ack struct {
		Status   string        `json:"status"`
		Analyses []ackAnalysis `json:"analyses"`
	}
	_ = json.Unmarshal(a.body, &ack)
	var pd struct {
		DedupKey string `json:"dedup_key"`
	}
	_ = json.Unmarshal(a.body, &pd)
	if ack.Status == "success" && ack.Analyses == nil { // PagerDuty's answer names no analysis
		p.pdKeys["pd-"+pd.DedupKey] = from
		return nil
	}
	for _, an := range ack.Analyses {
		if !an.Duplicate && an.AnalysisID != "" {
			p.ids[an.AnalysisID] = from
		}
	}
	return ack.Analyses
}

type ackAnalysis struct {
	AnalysisID string `json:"analysis_id"`
	AlertID    string `json:"alert_id"`
	Duplicate  bool   `json:"duplicate"`
	Rejection  string `json:"rejection"`
}

// classify names an ingest answer's class and, for a failure, why.
func classify(a answer) (class, fail string) {
	switch {
	case a.err != nil:
		return "transport error", "no answer (crash or hang?)"
	case a.code >= 200 && a.code < 300:
		return "accepted 2xx", ""
	case a.code == 503 && a.hdr.Get("Retry-After") != "":
		return "503 backpressure", ""
	case a.code >= 500:
		return fmt.Sprintf("%d", a.code), "5xx"
	case a.code >= 400:
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(a.body, &e)
		if strings.TrimSpace(e.Error+e.Message) == "" {
			return fmt.Sprintf("%d", a.code), "4xx without a message"
		}
		return fmt.Sprintf("rejected %d", a.code), ""
	}
	return fmt.Sprintf("%d", a.code), "unexpected status"
}

// fixture is one sender payload from intake/testdata/senders.
type fixture struct {
	sender, file, path string // path: the endpoint
	doc                any
	raw                []byte
}

func loadFixtures(dir string) ([]fixture, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("sender fixtures: %w", err)
	}
	var out []fixture
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		files, err := os.ReadDir(dir + "/" + e.Name())
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			n := f.Name()
			if !strings.HasSuffix(n, ".json") || n == "golden.json" || n == "identity.json" || strings.HasSuffix(n, ".golden.json") {
				continue
			}
			raw, err := os.ReadFile(dir + "/" + e.Name() + "/" + n)
			if err != nil {
				return nil, err
			}
			var doc any
			if json.Unmarshal(raw, &doc) != nil {
				continue // a deliberately broken fixture (truncated): not a base for mutations
			}
			path := "/api/v1/alerts/" + e.Name()
			if e.Name() == "pagerduty" {
				path = "/v2/enqueue"
			}
			out = append(out, fixture{sender: e.Name(), file: n, path: path, doc: doc, raw: raw})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no sender fixtures in %s", dir)
	}
	return out, nil
}
