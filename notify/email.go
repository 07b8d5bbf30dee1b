package notify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// EmailConfig configures an e-mail receiver: SMTP submission with
// STARTTLS (RFC 5321, RFC 3207) and PLAIN authentication (RFC 4616).
type EmailConfig struct {
	// Name is the receiver's name, which routes name (required).
	Name string
	// Host and Port are the SMTP server's (Host required; Port default
	// 587, the submission port).
	Host string
	Port int
	// From is the sender's address, "alerts@example.com" or
	// "openrecall <alerts@example.com>" (required).
	From string
	// To lists the recipients (at least one).
	To []string
	// Username and Password authenticate (PLAIN, over TLS only); without
	// a username nothing authenticates.
	Username string
	Password Secret
	// RequireTLS refuses to send when the server offers no STARTTLS
	// (nil: true). With it false, a server without STARTTLS gets the mail
	// in clear text — but never the credentials: a configured Username is
	// then an error.
	RequireTLS *bool
	// Hello is the name given in EHLO (default "localhost").
	Hello string
	// RootCAs verifies the server's certificate (nil: the system's).
	RootCAs *x509.CertPool
	// Timeout bounds one Send, the whole SMTP conversation (default 10s).
	Timeout time.Duration
}

// Email sends each notification as a plain-text mail over SMTP with
// STARTTLS. Its subject is "[openrecall] <decision> <title>"; its
// Message-ID derives from Notification.ID (so a retry after a crash sends
// the same message, which a mailbox may recognise); a resolve or update
// answers the trigger's mail (In-Reply-To and References, from
// Delivery.State's "message_id"), so mail clients thread them. SMTP replies
// 4xx are retried and 5xx are not. Safe for concurrent use.
//
// Written to RFC 5321 (SMTP, https://www.rfc-editor.org/rfc/rfc5321),
// RFC 3207 (STARTTLS, https://www.rfc-editor.org/rfc/rfc3207), RFC 4616
// (PLAIN, https://www.rfc-editor.org/rfc/rfc4616), RFC 5322 (the message
// format, https://www.rfc-editor.org/rfc/rfc5322) and RFC 3834
// (Auto-Submitted, https://www.rfc-editor.org/rfc/rfc3834).
type Email struct {
	name       string
	host       string
	addr       string
	from       *mail.Address
	to         []*mail.Address
	domain     string
	username   string
	password   Secret
	requireTLS bool
	hello      string
	rootCAs    *x509.CertPool
	timeout    time.Duration
}

// NewEmail validates cfg and returns its receiver. Its errors name the
// configuration field at fault, never the password.
func NewEmail(cfg EmailConfig) (*Email, error) {
	if cfg.Name == "" {
		return nil, errors.New("email receiver: name is required")
	}
	fail := func(format string, a ...any) (*Email, error) {
		return nil, fmt.Errorf("email receiver %s: "+format, append([]any{cfg.Name}, a...)...)
	}
	if cfg.Host == "" || strings.ContainsAny(cfg.Host, " /:") && net.ParseIP(cfg.Host) == nil {
		return fail("host %q is not a host name or address", cfg.Host)
	}
	port := cfg.Port
	if port == 0 {
		port = 587
	}
	if port < 1 || port > 65535 {
		return fail("port %d is not a TCP port", cfg.Port)
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return fail("from %q is not an address: %v", cfg.From, err)
	}
	if len(cfg.To) == 0 {
		return fail("to is required: at least one recipient")
	}
	var to []*mail.Address
	for i, s := range cfg.To {
		a, err := mail.ParseAddress(s)
		if err != nil {
			return fail("to[%d] %q is not an address: %v", i, s, err)
		}
		to = append(to, a)
	}
	require := cfg.RequireTLS == nil || *cfg.RequireTLS
	switch {
	case cfg.Username != "" && cfg.Password.IsZero():
		return fail("password is required with a username")
	case cfg.Username == "" && !cfg.Password.IsZero():
		return fail("username is required with a password")
	case cfg.Username != "" && !require:
		return fail("require_tls is false with a username: credentials are never sent in clear text")
	case cfg.Timeout < 0:
		return fail("timeout %s is negative", cfg.Timeout)
	}
	hello := cfg.Hello
	if hello == "" {
		hello = "localhost"
	}
	if strings.ContainsAny(hello, " \r\n") {
		return fail("hello %q is not a host name", hello)
	}
	return &Email{name: cfg.Name, host: cfg.Host, addr: net.JoinHostPort(cfg.Host, strconv.Itoa(port)), from: from, to: to,
		domain: from.Address[strings.LastIndexByte(from.Address, '@')+1:], username: cfg.Username, password: cfg.Password,
		requireTLS: require, hello: hello, rootCAs: cfg.RootCAs, timeout: orDefault(cfg.Timeout)}, nil
}

// Name returns the receiver's configured name.
func (e *Email) Name() string { return e.name }

// Type returns "email".
func (e *Email) Type() string { return "email" }

// Send mails n to every recipient. The delivery keeps the mail's
// Message-ID and what a later mail of the episode repeats of the
// trigger (keptFor), carried on through the updates.
func (e *Email) Send(ctx context.Context, n Notification) (Delivery, error) {
	if n.Kind == KindDigest {
		return e.sendDigest(ctx, n)
	}
	if err := checkKind(n); err != nil {
		return Delivery{}, err
	}
	id := e.MessageID(n.ID)
	msg := e.message(n, id)
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	if err := e.deliver(ctx, msg); err != nil {
		return Delivery{}, err
	}
	state := keptFor(n)
	state["message_id"] = id
	return Delivery{State: state}, nil
}

// deliver runs one SMTP conversation under ctx: EHLO, STARTTLS, EHLO,
// AUTH, MAIL, RCPT for each recipient, DATA, QUIT.
func (e *Email) deliver(ctx context.Context, msg []byte) (err error) {
	secrets := []string{e.password.Reveal()}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", e.addr)
	if err != nil {
		return &SendError{Err: masked{fmt.Errorf("smtp: %w", err), secrets}}
	}
	// net/smtp takes no context: ctx's end (its deadline, Send's timeout
	// or a cancel) closes the connection under it, and the failure is
	// then ctx's.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer func() {
		if err != nil && ctx.Err() != nil {
			err = &SendError{Err: fmt.Errorf("smtp: %w", context.Cause(ctx))}
		}
	}()
	c, err := smtp.NewClient(conn, e.host)
	if err != nil {
		_ = conn.Close()
		return smtpFailure("greeting", err, secrets)
	}
	defer func() { _ = c.Close() }() // after QUIT, or on a failure: nothing more to say
	if err := c.Hello(e.hello); err != nil {
		return smtpFailure("EHLO", err, secrets)
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: e.host, RootCAs: e.rootCAs, MinVersion: tls.VersionTLS12}); err != nil {
			var te *textproto.Error
			if errors.As(err, &te) {
				return smtpFailure("STARTTLS", err, secrets)
			}
			// A certificate that does not verify fails the same way
			// until the server or the configuration changes.
			return &SendError{Permanent: true, Err: masked{fmt.Errorf("smtp STARTTLS: %w", err), secrets}}
		}
	} else if e.requireTLS {
		return &SendError{Permanent: true, Err: errors.New("smtp: the server offers no STARTTLS and require_tls is set: nothing sent")}
	}
	if e.username != "" {
		if _, isTLS := c.TLSConnectionState(); !isTLS {
			return &SendError{Permanent: true, Err: errors.New("smtp: refusing to send credentials without TLS")}
		}
		if err := c.Auth(smtp.PlainAuth("", e.username, e.password.Reveal(), e.host)); err != nil {
			return smtpFailure("AUTH", err, secrets)
		}
	}
	if err := c.Mail(e.from.Address); err != nil {
		return smtpFailure("MAIL", err, secrets)
	}
	for _, to := range e.to {
		if err := c.Rcpt(to.Address); err != nil {
			return smtpFailure("RCPT "+to.Address, err, secrets)
		}
	}
	w, err := c.Data()
	if err != nil {
		return smtpFailure("DATA", err, secrets)
	}
	if _, err := w.Write(msg); err != nil {
		return smtpFailure("DATA", err, secrets)
	}
	if err := w.Close(); err != nil {
		return smtpFailure("DATA", err, secrets)
	}
	// The mail is accepted once DATA's 250 came; a failed QUIT loses
	// nothing.
	_ = c.Quit()
	return nil
}

// smtpFailure classifies an SMTP failure at step: a 4xx reply is
// transient and retried, a 5xx reply permanent (RFC 5321 §4.2.1); no reply
// at all (a reset, a timeout) is retried.
func smtpFailure(step string, err error, secrets []string) error {
	var te *textproto.Error
	if errors.As(err, &te) {
		return &SendError{Status: te.Code, Permanent: te.Code >= 500, Body: snippet([]byte(te.Msg), secrets...),
			Err: fmt.Errorf("smtp %s refused", step)}
	}
	return &SendError{Err: masked{fmt.Errorf("smtp %s: %w", step, err), secrets}}
}

// MessageID returns the Message-ID of the mail for the notification id:
// "<id@domain>" with the From address's domain, the id kept as it is when
// it is a dot-atom (RFC 5322 §3.6.4), else replaced by a hash of it. The
// same id gives the same Message-ID on every retry.
func (e *Email) MessageID(id string) string {
	left := id
	if !dotAtom.MatchString(left) || len(left) > 128 {
		sum := sha256.Sum256([]byte(id))
		left = "n" + hex.EncodeToString(sum[:16])
	}
	return "<" + left + "@" + e.domain + ">"
}

var dotAtom = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+/=?^_{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_{|}~-]+)*$`)

// message returns n as an RFC 5322 message with the Message-ID id: CRLF
// line ends, a UTF-8 plain-text body in quoted-printable.
func (e *Email) message(n Notification, id string) []byte {
	v := viewOf(n)
	// Long headers are folded (RFC 5322 §2.2.3): between the encoded
	// words of a subject that is not ASCII.
	subject := mime.QEncoding.Encode("utf-8", headerText("[openrecall] "+v.Verb+" "+clip(v.Title, 160)))
	replyTo := ""
	if p := n.Prior["message_id"]; p != "" && n.Kind != KindTrigger && msgIDRef.MatchString(p) {
		replyTo = p
	}
	return e.compose(n, id, strings.ReplaceAll(subject, "?= =?", "?=\r\n =?"), replyTo, mailText(v))
}

// compose returns a message for n with the Message-ID id: the subject as
// written (encoded and folded), In-Reply-To and References replyTo when
// set, and body (LF line ends) as UTF-8 plain text in quoted-printable,
// with CRLF line ends. Recipients are folded between addresses.
func (e *Email) compose(n Notification, id, subject, replyTo, body string) []byte {
	var b bytes.Buffer
	header := func(name, value string) { b.WriteString(name + ": " + value + "\r\n") }
	header("From", e.from.String())
	to := make([]string, len(e.to))
	for i, a := range e.to {
		to[i] = a.String()
	}
	header("To", strings.Join(to, ",\r\n "))
	header("Subject", subject)
	header("Date", n.At.UTC().Format(time.RFC1123Z))
	header("Message-ID", id)
	if replyTo != "" {
		header("In-Reply-To", replyTo)
		header("References", replyTo)
	}
	header("Auto-Submitted", "auto-generated")
	header("X-Openrecall-Kind", n.Kind)
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(strings.ReplaceAll(body, "\n", "\r\n")))
	_ = qp.Close()
	return b.Bytes()
}

// msgIDRef is a Message-ID as the receiver wrote it, the only kind it
// references (a Prior from elsewhere never reaches a header unchecked).
var msgIDRef = regexp.MustCompile(`^<[!-;=?-~]+@[!-;=?-~]+>$`)

// headerText makes s safe in a header: no control characters (no line
// breaks: no header injection).
func headerText(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// mailText is v as a plain-text mail body (LF line ends).
func mailText(v view) string {
	var b strings.Builder
	line := func(label, value string) {
		if value != "" {
			fmt.Fprintf(&b, "%s: %s\n", label, value)
		}
	}
	list := func(label string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s:\n", label)
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	b.WriteString(v.Title + "\n")
	b.WriteString(v.Headline + "\n\n")
	line("Decision", decisionText(v.Decision, v.Route))
	line("Severity", string(v.Severity))
	line("Service", v.Service)
	line("Environment", v.Environment)
	line("Why", v.Reason)
	line("Note", v.Note)
	if v.AnalysisSummary != "" {
		b.WriteString("\nAnalysis: " + v.AnalysisSummary + "\n")
	}
	list("Hypotheses", v.Hypotheses)
	list("Next steps", v.NextSteps)
	list("Dead ends (already ruled out)", v.DeadEnds)
	if len(v.Memories) > 0 {
		b.WriteString("\nMemories that voted: " + strings.Join(v.memoryIDs(), ", ") + "\n")
	}
	if c := v.costText(); c != "" {
		b.WriteString("Cost: " + c + "\n")
	}
	if v.ReviewURL != "" {
		b.WriteString("\nReview: " + v.ReviewURL + "\n")
	}
	return b.String()
}
