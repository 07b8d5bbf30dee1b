package notify_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"math/big"
	"mime"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall/notify"
)

const mailPassword = "pw-Vq7#mailRelay!2026"

// smtpServer is a local SMTP server speaking enough of RFC 5321 (EHLO,
// MAIL, RCPT, DATA with dot-stuffing, RSET, NOOP, QUIT), RFC 3207
// (STARTTLS, with a self-signed certificate) and RFC 4954/4616 (AUTH
// PLAIN with an initial response) for the e-mail receiver's tests. It
// records each session: the commands (with whether TLS was on), the
// credentials, the message.
type smtpServer struct {
	ln   net.Listener
	cert tls.Certificate
	pool *x509.CertPool
	// noTLS hides STARTTLS; stall answers nothing after the greeting.
	noTLS bool
	stall bool
	// reply answers a verb ("GREETING", "EHLO", "AUTH", "MAIL", "RCPT",
	// "DATA", "END" for the end of the message) with this line instead.
	reply map[string]string
	mu    sync.Mutex
	seen  []*smtpSession
	wg    sync.WaitGroup
	done  chan struct{}
}

type smtpSession struct {
	Commands []string
	Auth     string
	Data     string
}

func newSMTPServer(t *testing.T, configure func(s *smtpServer)) *smtpServer {
	t.Helper()
	cert, pool := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpServer{ln: ln, cert: cert, pool: pool, reply: map[string]string{}, done: make(chan struct{})}
	if configure != nil {
		configure(s)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer func() { _ = c.Close() }()
				s.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		close(s.done)
		_ = ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *smtpServer) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *smtpServer) sessions() []smtpSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]smtpSession, len(s.seen))
	for i, x := range s.seen {
		out[i] = *x
	}
	return out
}

func (s *smtpServer) serve(c net.Conn) {
	sess := &smtpSession{}
	s.mu.Lock()
	s.seen = append(s.seen, sess)
	s.mu.Unlock()
	record := func(f func()) {
		s.mu.Lock()
		defer s.mu.Unlock()
		f()
	}
	// A closed server ends its sessions.
	go func() { <-s.done; _ = c.Close() }()
	conn, isTLS := c, false
	r, w := bufio.NewReader(conn), bufio.NewWriter(conn)
	say := func(verb, line string) {
		if alt, ok := s.reply[verb]; ok {
			line = alt
		}
		_, _ = w.WriteString(line + "\r\n")
		_ = w.Flush()
	}
	say("GREETING", "220 mail.test ESMTP")
	if strings.HasPrefix(s.reply["GREETING"], "4") || strings.HasPrefix(s.reply["GREETING"], "5") {
		return
	}
	if s.stall {
		<-s.done
		return
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb, arg, _ := strings.Cut(line, " ")
		verb = strings.ToUpper(verb)
		shown := line
		if verb == "AUTH" {
			shown = "AUTH " + strings.Fields(arg)[0]
		}
		if isTLS {
			shown += " [tls]"
		}
		record(func() { sess.Commands = append(sess.Commands, shown) })
		switch verb {
		case "EHLO":
			ext := []string{"mail.test"}
			if !isTLS && !s.noTLS {
				ext = append(ext, "STARTTLS")
			}
			if isTLS || s.noTLS {
				ext = append(ext, "AUTH PLAIN")
			}
			ext = append(ext, "SIZE 10240000")
			if alt, ok := s.reply["EHLO"]; ok {
				say("EHLO", alt)
				continue
			}
			for i, e := range ext {
				sep := "-"
				if i == len(ext)-1 {
					sep = " "
				}
				_, _ = w.WriteString("250" + sep + e + "\r\n")
			}
			_ = w.Flush()
		case "HELO", "RSET", "NOOP":
			say(verb, "250 2.0.0 Ok")
		case "STARTTLS":
			if isTLS || s.noTLS {
				say(verb, "502 5.5.1 STARTTLS not available")
				continue
			}
			say(verb, "220 2.0.0 Ready to start TLS")
			tc := tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{s.cert}})
			if err := tc.Handshake(); err != nil {
				return
			}
			conn, isTLS = tc, true
			r, w = bufio.NewReader(conn), bufio.NewWriter(conn)
		case "AUTH":
			f := strings.Fields(arg)
			if len(f) != 2 || !strings.EqualFold(f[0], "PLAIN") {
				say(verb, "504 5.5.4 Unrecognized authentication type")
				continue
			}
			b, err := base64.StdEncoding.DecodeString(f[1])
			if err != nil {
				say(verb, "501 5.5.2 Cannot decode response")
				continue
			}
			record(func() { sess.Auth = string(b) })
			if string(b) != "\x00openrecall\x00"+mailPassword {
				say(verb, "535 5.7.8 Authentication credentials invalid")
				continue
			}
			say(verb, "235 2.7.0 Authentication successful")
		case "MAIL":
			say(verb, "250 2.1.0 Ok")
		case "RCPT":
			say(verb, "250 2.1.5 Ok")
		case "DATA":
			if alt, ok := s.reply["DATA"]; ok {
				say(verb, alt)
				continue
			}
			say(verb, "354 End data with <CR><LF>.<CR><LF>")
			var data strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				data.WriteString(strings.TrimPrefix(l, ".")) // undo dot-stuffing (RFC 5321 §4.5.2)
			}
			record(func() { sess.Data = data.String() })
			say("END", "250 2.0.0 Ok: queued as 4F1C")
		case "QUIT":
			say(verb, "221 2.0.0 Bye")
			return
		default:
			say(verb, "502 5.5.2 Error: command not recognized")
		}
	}
}

// selfSigned makes a certificate for 127.0.0.1 and localhost, and a pool
// that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mail.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// goldenMail compares a message with its recording, kept with LF line
// ends; on the wire every line ends in CRLF (RFC 5322 §2.1), no line is
// longer than 78 characters, and every byte is 7-bit.
func goldenMail(t *testing.T, name, data string) {
	t.Helper()
	for i, line := range strings.SplitAfter(data, "\n") {
		switch {
		case line != "" && !strings.HasSuffix(line, "\r\n"):
			t.Errorf("%s: line %d does not end in CRLF: %q", name, i+1, line)
		case len(line) > 78+2:
			t.Errorf("%s: line %d is %d characters long", name, i+1, len(line)-2)
		}
	}
	for i := 0; i < len(data); i++ {
		if data[i] >= 0x80 {
			t.Fatalf("%s: byte %d is not 7-bit", name, i)
		}
	}
	golden(t, name, []byte(strings.ReplaceAll(data, "\r\n", "\n")))
}

func mailConfig(t *testing.T, s *smtpServer) notify.EmailConfig {
	return notify.EmailConfig{Name: "oncall-mail", Host: "127.0.0.1", Port: s.port(), From: "openrecall <alerts@example.com>",
		To: []string{"On call <oncall@example.com>", "dba@example.com"}, Username: "openrecall", Password: secret(t, mailPassword),
		RootCAs: s.pool, Timeout: 3 * time.Second}
}

func newEmail(t *testing.T, cfg notify.EmailConfig) *notify.Email {
	t.Helper()
	e, err := notify.NewEmail(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestEmailSendsOverSTARTTLS: the conversation is EHLO, STARTTLS, EHLO
// again, AUTH PLAIN, MAIL, RCPT per recipient, DATA, QUIT — everything
// after STARTTLS encrypted — and the message is the recorded one.
func TestEmailSendsOverSTARTTLS(t *testing.T) {
	srv := newSMTPServer(t, nil)
	d, err := newEmail(t, mailConfig(t, srv)).Send(context.Background(), trigger())
	if err != nil {
		t.Fatal(err)
	}
	sess := srv.sessions()
	if len(sess) != 1 {
		t.Fatalf("%d sessions, want 1", len(sess))
	}
	want := []string{"EHLO localhost", "STARTTLS", "EHLO localhost [tls]", "AUTH PLAIN [tls]",
		"MAIL FROM:<alerts@example.com> [tls]", "RCPT TO:<oncall@example.com> [tls]", "RCPT TO:<dba@example.com> [tls]",
		"DATA [tls]", "QUIT [tls]"}
	if diff := cmp.Diff(want, sess[0].Commands); diff != "" {
		t.Errorf("SMTP conversation (-want +got):\n%s", diff)
	}
	if sess[0].Auth != "\x00openrecall\x00"+mailPassword {
		t.Errorf("PLAIN credentials %q", sess[0].Auth)
	}
	goldenMail(t, "email_trigger.eml", sess[0].Data)
	wantState := map[string]string{"message_id": "<ntf-0001@example.com>", "decision": "escalated", "route": "strong",
		"reason": "severity critical above the memories' medium: a person decides"}
	if diff := cmp.Diff(wantState, d.State); diff != "" {
		t.Errorf("delivery state (-want +got):\n%s", diff)
	}
}

// TestEmailThreadsTheEpisode: a resolve and an update answer the
// trigger's mail (In-Reply-To, References), so mail clients thread them.
func TestEmailThreadsTheEpisode(t *testing.T) {
	srv := newSMTPServer(t, nil)
	e := newEmail(t, mailConfig(t, srv))
	first, err := e.Send(context.Background(), trigger())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []notify.Notification{resolve(first.State), decided(first.State)} {
		if _, err := e.Send(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	sess := srv.sessions()
	goldenMail(t, "email_resolve.eml", sess[1].Data)
	goldenMail(t, "email_update.eml", sess[2].Data)
	for i, want := range []string{"Subject: [openrecall] resolved Disk almost full on db-1\r\n", "Subject: [openrecall] known_benign Disk almost full on db-1\r\n"} {
		data := sess[i+1].Data
		if !strings.Contains(data, "In-Reply-To: <ntf-0001@example.com>\r\nReferences: <ntf-0001@example.com>\r\n") {
			t.Errorf("mail %d does not answer the trigger's:\n%s", i+1, data)
		}
		if !strings.Contains(data, want) {
			t.Errorf("mail %d lacks %q", i+1, want)
		}
	}
	if strings.Contains(sess[0].Data, "In-Reply-To") {
		t.Error("the trigger's mail answers another")
	}
}

// TestEmailReplies: an SMTP reply 4xx is transient and retried, 5xx is
// permanent (RFC 5321 §4.2.1); the password shows in no error, even when
// the server's reply echoes it.
func TestEmailReplies(t *testing.T) {
	tests := []struct {
		verb, reply string
		status      int
		permanent   bool
	}{
		{"GREETING", "421 4.3.2 Service not available, try later", 421, false},
		{"AUTH", "535 5.7.8 Authentication credentials invalid: " + mailPassword, 535, true},
		{"AUTH", "454 4.7.0 Temporary authentication failure", 454, false},
		{"MAIL", "451 4.3.0 Mail server temporarily rejected message", 451, false},
		{"MAIL", "553 5.7.1 Sender address rejected: not owned by user", 553, true},
		{"RCPT", "550 5.1.1 Recipient address rejected: User unknown", 550, true},
		{"RCPT", "452 4.5.3 Too many recipients", 452, false},
		{"DATA", "554 5.5.1 No valid recipients", 554, true},
		{"END", "552 5.3.4 Message size exceeds fixed limit", 552, true},
		{"END", "451 4.7.1 Greylisted, try again in 5 minutes", 451, false},
	}
	for _, tt := range tests {
		t.Run(tt.verb+" "+tt.reply[:3], func(t *testing.T) {
			srv := newSMTPServer(t, func(s *smtpServer) { s.reply[tt.verb] = tt.reply })
			_, err := newEmail(t, mailConfig(t, srv)).Send(context.Background(), trigger())
			var se *notify.SendError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want a *SendError", err, err)
			}
			if se.Status != tt.status || se.Permanent != tt.permanent {
				t.Errorf("status %d permanent %v, want %d %v (%v)", se.Status, se.Permanent, tt.status, tt.permanent, err)
			}
			noSecret(t, err, mailPassword)
		})
	}
}

// TestEmailRefusesPlaintext: without STARTTLS nothing is sent when TLS
// is required (the default), and credentials never are.
func TestEmailRefusesPlaintext(t *testing.T) {
	srv := newSMTPServer(t, func(s *smtpServer) { s.noTLS = true })
	_, err := newEmail(t, mailConfig(t, srv)).Send(context.Background(), trigger())
	var se *notify.SendError
	if !errors.As(err, &se) || !se.Permanent {
		t.Fatalf("error %v, want a permanent refusal", err)
	}
	if diff := cmp.Diff([]string{"EHLO localhost"}, srv.sessions()[0].Commands); diff != "" {
		t.Errorf("conversation without STARTTLS (-want +got):\n%s", diff)
	}

	// Allowed in clear text, without credentials, the mail goes.
	cfg := mailConfig(t, srv)
	off := false
	cfg.RequireTLS, cfg.Username, cfg.Password = &off, "", notify.Secret{}
	if _, err := newEmail(t, cfg).Send(context.Background(), trigger()); err != nil {
		t.Fatal(err)
	}
	want := []string{"EHLO localhost", "MAIL FROM:<alerts@example.com>", "RCPT TO:<oncall@example.com>", "RCPT TO:<dba@example.com>", "DATA", "QUIT"}
	if diff := cmp.Diff(want, srv.sessions()[1].Commands); diff != "" {
		t.Errorf("clear-text conversation (-want +got):\n%s", diff)
	}
}

// TestEmailVerifiesTheCertificate: a server whose certificate the
// configured roots do not trust gets nothing, not even the credentials.
func TestEmailVerifiesTheCertificate(t *testing.T) {
	srv := newSMTPServer(t, nil)
	cfg := mailConfig(t, srv)
	_, other := selfSigned(t)
	cfg.RootCAs = other
	_, err := newEmail(t, cfg).Send(context.Background(), trigger())
	var se *notify.SendError
	if !errors.As(err, &se) || !se.Permanent {
		t.Fatalf("error %v, want a permanent refusal", err)
	}
	if diff := cmp.Diff([]string{"EHLO localhost", "STARTTLS"}, srv.sessions()[0].Commands); diff != "" {
		t.Errorf("conversation (-want +got):\n%s", diff)
	}
	noSecret(t, err, mailPassword)
}

// TestEmailTimesOut: a server that stops answering holds Send no longer
// than its context allows, and the failure is retried.
func TestEmailTimesOut(t *testing.T) {
	srv := newSMTPServer(t, func(s *smtpServer) { s.stall = true })
	_ = notify.CheckNoAnswerInTime(t, newEmail(t, mailConfig(t, srv)), trigger(), 300*time.Millisecond)
	// Nothing listens: the connection is refused, and retried.
	cfg := mailConfig(t, srv)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	cfg.Port = ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	var se *notify.SendError
	if _, err := newEmail(t, cfg).Send(context.Background(), trigger()); err == nil || errors.As(err, &se) && se.Permanent {
		t.Errorf("error %v, want a retried failure", err)
	}
}

// TestEmailHeadersHoldNoInjection: an alert's title reaches the Subject
// on one line, encoded when it is not ASCII; a line break cannot add a
// header.
func TestEmailHeadersHoldNoInjection(t *testing.T) {
	srv := newSMTPServer(t, nil)
	e := newEmail(t, mailConfig(t, srv))
	n := trigger()
	n.Result.Alert.Title = "Disk full\r\nBcc: victim@example.com"
	if _, err := e.Send(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	n.Result.Alert.Title = "Disque plein sur db-1 — 93 %"
	if _, err := e.Send(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	sess := srv.sessions()
	head, _, _ := strings.Cut(sess[0].Data, "\r\n\r\n")
	if regexp.MustCompile(`(?im)^bcc:`).MatchString(head) {
		t.Errorf("the title added a header:\n%s", head)
	}
	if !strings.Contains(head, "Subject: [openrecall] escalated Disk full  Bcc: victim@example.com\r\n") {
		t.Errorf("subject not on one line:\n%s", head)
	}
	head, _, _ = strings.Cut(sess[1].Data, "\r\n\r\n")
	if !strings.Contains(head, "Subject: =?utf-8?q?[openrecall]_escalated_Disque_plein_sur_db-1_=E2=80=94_93_%?=\r\n") {
		t.Errorf("non-ASCII subject not encoded:\n%s", head)
	}
}

// TestEmailFoldsLongSubjects: a long title that is not ASCII becomes
// encoded words, one a line, that decode back to it.
func TestEmailFoldsLongSubjects(t *testing.T) {
	srv := newSMTPServer(t, nil)
	n := trigger()
	n.Result.Alert.Title = strings.Repeat("Disque presque plein — réplica ", 5)
	if _, err := newEmail(t, mailConfig(t, srv)).Send(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(srv.sessions()[0].Data, "\r\n\r\n")
	// RFC 5322 §2.1.1: no line past 998 characters; RFC 2047 §2: no
	// encoded word past 75.
	for _, line := range strings.Split(head, "\r\n") {
		if len(line) > 998 {
			t.Errorf("header line of %d characters: %q", len(line), line)
		}
	}
	for _, w := range regexp.MustCompile(`=\?[^ ]*\?=`).FindAllString(head, -1) {
		if len(w) > 75 {
			t.Errorf("encoded word of %d characters: %s", len(w), w)
		}
	}
	m := regexp.MustCompile(`(?m)^Subject: ((?:[^\r\n]*\r\n )*[^\r\n]*)`).FindStringSubmatch(head)
	if m == nil {
		t.Fatalf("no subject:\n%s", head)
	}
	got, err := new(mime.WordDecoder).DecodeHeader(strings.ReplaceAll(m[1], "\r\n ", " "))
	if err != nil {
		t.Fatal(err)
	}
	if want := "[openrecall] escalated " + strings.TrimSpace(n.Result.Alert.Title); got != want {
		t.Errorf("the subject decodes to %q, want %q", got, want)
	}
}

func TestEmailMessageID(t *testing.T) {
	e := newEmail(t, notify.EmailConfig{Name: "m", Host: "smtp.example.com", From: "alerts@example.com", To: []string{"a@example.com"}})
	if got := e.MessageID("ntf-0001"); got != "<ntf-0001@example.com>" {
		t.Errorf("MessageID(ntf-0001) = %s", got)
	}
	odd := e.MessageID("run 1/<7>@x")
	if !regexp.MustCompile(`^<n[0-9a-f]{32}@example\.com>$`).MatchString(odd) || odd != e.MessageID("run 1/<7>@x") || odd == e.MessageID("run 1/<8>@x") {
		t.Errorf("MessageID of an id that is no dot-atom: %s", odd)
	}
}

func TestEmailConfig(t *testing.T) {
	pw := secret(t, mailPassword)
	off := false
	ok := notify.EmailConfig{Name: "m", Host: "smtp.example.com", From: "alerts@example.com", To: []string{"a@example.com"}}
	tests := []struct {
		name   string
		change func(c *notify.EmailConfig)
		want   string
	}{
		{"no name", func(c *notify.EmailConfig) { c.Name = "" }, "name is required"},
		{"no host", func(c *notify.EmailConfig) { c.Host = "" }, "host"},
		{"bad port", func(c *notify.EmailConfig) { c.Port = 70000 }, "port 70000"},
		{"bad from", func(c *notify.EmailConfig) { c.From = "alerts" }, "from"},
		{"no to", func(c *notify.EmailConfig) { c.To = nil }, "to is required"},
		{"bad to", func(c *notify.EmailConfig) { c.To = []string{"a@example.com", "nobody"} }, "to[1]"},
		{"username without password", func(c *notify.EmailConfig) { c.Username = "u" }, "password is required"},
		{"password without username", func(c *notify.EmailConfig) { c.Password = pw }, "username is required"},
		{"credentials in clear text", func(c *notify.EmailConfig) { c.Username, c.Password, c.RequireTLS = "u", pw, &off }, "require_tls"},
		{"negative timeout", func(c *notify.EmailConfig) { c.Timeout = -1 }, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.change(&cfg)
			_, err := notify.NewEmail(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
			noSecret(t, err, mailPassword)
		})
	}
	if _, err := notify.NewEmail(ok); err != nil {
		t.Errorf("a valid configuration: %v", err)
	}
}
