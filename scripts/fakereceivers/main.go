// Command fakereceivers plays every destination of openrecall's
// notifications on loopback, for the end-to-end test of `openrecall serve`:
// PagerDuty Events API v2, Opsgenie Alert API v2, the Slack Web API
// (chat.postMessage, chat.update), a Teams Workflows webhook, openrecall's
// signed webhook and an SMTP server without TLS (internal/fakereceivers
// says what each speaks and models).
//
//	go run ./scripts/fakereceivers -addr-file fakes.json -state state.json -webhook-secret env:HOOK_SECRET
//
// Each fake listens on a free port of 127.0.0.1. Once they all listen it
// writes their addresses as one JSON object (fakereceivers.Addrs) to
// -addr-file (atomically: a script may wait for the file to appear) and
// to stdout, one line:
//
//	{"pagerduty": "http://127.0.0.1:P/v2/enqueue",        a pagerduty receiver's url
//	 "opsgenie":  "http://127.0.0.1:P",                   an opsgenie receiver's api_url
//	 "slack":     "http://127.0.0.1:P/api/",              a slack receiver's api_url
//	 "teams":     "http://127.0.0.1:P/workflows/…?…&sig=…", a teams receiver's webhook_url
//	 "webhook":   "http://127.0.0.1:P/hook",              a webhook receiver's url
//	 "smtp": "127.0.0.1:P", "smtp_host": "127.0.0.1", "smtp_port": P,
//	                                                      an email receiver's host and port (require_tls: false)
//	 "base_urls": {"pagerduty": "http://127.0.0.1:P", …}, each HTTP fake's origin
//	 "control":   "http://127.0.0.1:P"}                   the control API
//
// The control API:
//
//	GET  /_state   the recorded state and requests (fakereceivers.State), as JSON;
//	               also written to -state when set
//	POST /_fail?receiver=pagerduty&status=500&count=5&retry_after=2[&error=TEXT]
//	               the receiver answers its next count deliveries so
//	               (count=0 clears; for email, status is the SMTP reply to
//	               MAIL FROM, e.g. 451 or 554; for slack, status=200&error=CODE
//	               is the API's {"ok":false,"error":CODE})
//	GET  /_addrs   the addresses above
//
// On SIGTERM or SIGINT it writes the state to -state, closes every fake and
// exits 0. The credentials it accepts (-webhook-secret, -routing-key,
// -opsgenie-key, -slack-token) are read as openrecall reads a receiver's
// secrets: env:NAME, file:PATH or the value itself; a credential left
// unset accepts any. No state or request it records shows one.
//
// Exit codes: 0 after a signal, 1 when it cannot run (a port, a file),
// 2 for a bad flag.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/openrecall/openrecall/internal/fakereceivers"
	"github.com/openrecall/openrecall/notify"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command's flags.
type options struct {
	addrFile, statePath, control string
	// The credentials' specs (env:NAME, file:PATH or the value).
	webhookSecret, routingKey, opsgenieKey, slackToken, teamsSig string
}

// run serves the fakes until ctx ends, and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("fakereceivers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addrFile, "addr-file", "", "write the fakes' addresses here as JSON once they listen")
	fs.StringVar(&o.statePath, "state", "", "write the recorded state here as JSON on SIGTERM and on GET /_state")
	fs.StringVar(&o.control, "control", "127.0.0.1:0", "the control API's address")
	fs.StringVar(&o.webhookSecret, "webhook-secret", "", "the webhook's signing secret (env:NAME, file:PATH or the value; empty: signatures not verified)")
	fs.StringVar(&o.routingKey, "routing-key", "", "the only PagerDuty routing key accepted (empty: any of 32 characters)")
	fs.StringVar(&o.opsgenieKey, "opsgenie-key", "", "the only Opsgenie API key accepted (empty: any)")
	fs.StringVar(&o.slackToken, "slack-token", "", "the only Slack bot token accepted (empty: any)")
	fs.StringVar(&o.teamsSig, "teams-sig", "", "the sig of the Teams webhook's URL (default "+fakereceivers.DefaultTeamsSig+")")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fakereceivers: unexpected arguments %q\n", fs.Args())
		return 2
	}
	cfg, err := o.config()
	if err != nil {
		fmt.Fprintln(stderr, "fakereceivers:", err)
		return 2
	}
	if err := serve(ctx, o, cfg, stdout); err != nil {
		fmt.Fprintln(stderr, "fakereceivers:", err)
		return 1
	}
	return 0
}

// config reads the credentials' specs.
func (o options) config() (fakereceivers.Config, error) {
	var cfg fakereceivers.Config
	for _, c := range []struct {
		flag, spec string
		dst        *string
	}{
		{"webhook-secret", o.webhookSecret, &cfg.WebhookSecret},
		{"routing-key", o.routingKey, &cfg.PagerDutyRoutingKey},
		{"opsgenie-key", o.opsgenieKey, &cfg.OpsgenieAPIKey},
		{"slack-token", o.slackToken, &cfg.SlackToken},
		{"teams-sig", o.teamsSig, &cfg.TeamsSig},
	} {
		if c.spec == "" {
			continue
		}
		s, err := notify.ParseSecret(c.spec)
		if err != nil {
			return cfg, fmt.Errorf("-%s: %w", c.flag, err)
		}
		*c.dst = s.Reveal()
	}
	return cfg, nil
}

// serve starts the fakes and the control API, says where they listen, and
// serves until ctx ends; then it writes the state and closes them.
func serve(ctx context.Context, o options, cfg fakereceivers.Config, stdout io.Writer) (err error) {
	f, err := fakereceivers.Start(cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	ln, err := net.Listen("tcp", o.control)
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", f.Control())
	mux.HandleFunc("GET /_state", func(w http.ResponseWriter, r *http.Request) {
		st := f.State()
		if o.statePath != "" {
			if err := writeJSON(o.statePath, st); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		b, err := marshal(st, "  ")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b) // the client may have gone
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		_ = srv.Close()
		if e := <-served; !errors.Is(e, http.ErrServerClosed) {
			err = errors.Join(err, fmt.Errorf("control: %w", e))
		}
	}()

	addrs := f.Addrs()
	addrs.Control = "http://" + ln.Addr().String()
	if o.addrFile != "" {
		if err := writeJSON(o.addrFile, addrs); err != nil {
			return err
		}
	}
	line, err := marshal(addrs, "")
	if err != nil {
		return err
	}
	if _, err := stdout.Write(line); err != nil {
		return err
	}

	select {
	case <-ctx.Done():
	case e := <-served:
		served <- e // the deferred close reports it
		return nil
	}
	if o.statePath != "" {
		return writeJSON(o.statePath, f.State())
	}
	return nil
}

// writeJSON writes v to path as indented JSON, atomically: a reader sees
// the old file or the whole new one.
func writeJSON(path string, v any) error {
	b, err := marshal(v, "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// marshal returns v as JSON ending in a newline, indented by indent
// (none when empty), without escaping &, < and > (URLs stay readable).
func marshal(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
