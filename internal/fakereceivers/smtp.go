package fakereceivers

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"strings"
	"sync"
	"time"
)

// SMTP (RFC 5321) as a mail server speaks it to net/smtp's client, without
// STARTTLS or AUTH (notify's e-mail receiver sends to it with
// require_tls: false and no username): a 220 greeting; EHLO (250-, with
// 8BITMIME and SIZE) or HELO; MAIL FROM:<…> (parameters ignored); RCPT
// TO:<…>, several; DATA, 354, the message ending in a line ".", 250;
// RSET; NOOP; QUIT, 221. Commands out of order are answered 503, unknown
// ones 500, STARTTLS, AUTH and the rest not offered 502. A failure asked
// for (Fail) is the reply to MAIL FROM; a 421 also closes the session.

const (
	smtpDomain  = "fakereceivers.localhost"
	smtpMaxSize = 10 << 20
	// smtpIdle bounds the wait for a client's next line.
	smtpIdle = time.Minute
)

// smtpServer is the SMTP fake's listener and its sessions.
type smtpServer struct {
	f  *Fakes
	ln net.Listener
	wg sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// startSMTP listens on a free loopback port and serves sessions until
// close.
func startSMTP(f *Fakes) (*smtpServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &smtpServer{f: f, ln: ln, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

func (s *smtpServer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.session(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// close stops accepting, ends every session and waits for them.
func (s *smtpServer) close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// smtpSession is one connection's conversation.
type smtpSession struct {
	tp    *textproto.Conn
	hello string
	from  string
	to    []string
	// inMail says MAIL was accepted and the transaction is open.
	inMail bool
	// status is the reply to the last MAIL or end of DATA; failed says it
	// was a failure Fail asked for.
	status   int
	failed   bool
	commands []string
}

// session runs one SMTP conversation on c and records it as a Request.
func (s *smtpServer) session(c net.Conn) {
	defer func() { _ = c.Close() }()
	f := s.f
	f.mu.Lock()
	start := f.now()
	f.mu.Unlock()
	ss := &smtpSession{tp: textproto.NewConn(c)}
	defer func() {
		f.mu.Lock()
		f.record(Request{At: start, Receiver: Email, Method: "SMTP", Status: ss.status, Failed: ss.failed, Commands: ss.commands})
		f.mu.Unlock()
	}()
	if ss.reply(220, smtpDomain+" ESMTP fakereceivers ready") != nil {
		return
	}
	for {
		_ = c.SetDeadline(time.Now().Add(smtpIdle))
		line, err := ss.tp.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		verb = strings.ToUpper(verb)
		if verb == "AUTH" {
			ss.commands = append(ss.commands, "AUTH")
		} else {
			ss.commands = append(ss.commands, line)
		}
		if !s.command(ss, verb, strings.TrimSpace(arg)) {
			return
		}
	}
}

// command answers one command; false ends the session.
func (s *smtpServer) command(ss *smtpSession, verb, arg string) bool {
	ok := func(err error) bool { return err == nil }
	switch verb {
	case "EHLO":
		if arg == "" {
			return ok(ss.reply(501, "5.5.4 EHLO needs a domain"))
		}
		ss.hello, ss.inMail, ss.from, ss.to = arg, false, "", nil
		return ok(ss.lines(250, smtpDomain+" greets "+arg, "8BITMIME", fmt.Sprintf("SIZE %d", smtpMaxSize), "HELP"))
	case "HELO":
		if arg == "" {
			return ok(ss.reply(501, "5.5.4 HELO needs a domain"))
		}
		ss.hello, ss.inMail, ss.from, ss.to = arg, false, "", nil
		return ok(ss.reply(250, smtpDomain))
	case "MAIL":
		switch {
		case ss.hello == "":
			return ok(ss.reply(503, "5.5.1 EHLO or HELO first"))
		case ss.inMail:
			return ok(ss.reply(503, "5.5.1 nested MAIL command"))
		}
		addr, found := pathArg(arg, "FROM:")
		if !found {
			return ok(ss.reply(501, "5.5.4 syntax: MAIL FROM:<address>"))
		}
		f := s.f
		f.mu.Lock()
		fl, failing := f.takeFailure(Email)
		f.mu.Unlock()
		if failing {
			ss.status, ss.failed = fl.Status, true
			text := fl.Error
			if text == "" {
				text = fmt.Sprintf("%d.3.0 failure asked for (fakereceivers)", fl.Status/100)
			}
			if err := ss.reply(fl.Status, text); err != nil || fl.Status == 421 {
				return false
			}
			return true
		}
		ss.inMail, ss.from, ss.to = true, addr, nil
		ss.status, ss.failed = 250, false
		return ok(ss.reply(250, "2.1.0 Ok"))
	case "RCPT":
		if !ss.inMail {
			return ok(ss.reply(503, "5.5.1 MAIL first"))
		}
		addr, found := pathArg(arg, "TO:")
		if !found || addr == "" {
			return ok(ss.reply(501, "5.5.4 syntax: RCPT TO:<address>"))
		}
		ss.to = append(ss.to, addr)
		return ok(ss.reply(250, "2.1.5 Ok"))
	case "DATA":
		if !ss.inMail || len(ss.to) == 0 {
			return ok(ss.reply(503, "5.5.1 RCPT first"))
		}
		if err := ss.reply(354, "End data with <CR><LF>.<CR><LF>"); err != nil {
			return false
		}
		return s.data(ss)
	case "RSET":
		ss.inMail, ss.from, ss.to = false, "", nil
		return ok(ss.reply(250, "2.0.0 Ok"))
	case "NOOP":
		return ok(ss.reply(250, "2.0.0 Ok"))
	case "VRFY":
		return ok(ss.reply(252, "2.1.5 cannot verify the user, but will accept the message"))
	case "QUIT":
		_ = ss.reply(221, "2.0.0 Bye")
		return false
	case "STARTTLS", "AUTH", "EXPN", "TURN", "BDAT":
		return ok(ss.reply(502, "5.5.1 command not implemented"))
	}
	return ok(ss.reply(500, "5.5.2 command not recognized"))
}

// data reads the message after DATA's 354, keeps it and ends the
// transaction; false ends the session.
func (s *smtpServer) data(ss *smtpSession) bool {
	dr := ss.tp.DotReader()
	raw, err := io.ReadAll(io.LimitReader(dr, smtpMaxSize+1))
	if err != nil {
		return false
	}
	from, to := ss.from, ss.to
	ss.inMail, ss.from, ss.to = false, "", nil
	if len(raw) > smtpMaxSize {
		if _, err := io.Copy(io.Discard, dr); err != nil {
			return false
		}
		ss.status = 552
		return ss.reply(552, "5.3.4 message too big") == nil
	}
	f := s.f
	f.mu.Lock()
	m := mailOf(raw)
	m.At, m.Hello, m.From, m.To = f.now(), ss.hello, from, to
	f.st.Email.Messages = append(f.st.Email.Messages, m)
	n := len(f.st.Email.Messages)
	f.mu.Unlock()
	ss.status, ss.failed = 250, false
	return ss.reply(250, fmt.Sprintf("2.0.0 Ok: queued as %06d", n)) == nil
}

// reply writes one reply line.
func (ss *smtpSession) reply(code int, text string) error {
	return ss.tp.PrintfLine("%d %s", code, text)
}

// lines writes a multi-line reply.
func (ss *smtpSession) lines(code int, texts ...string) error {
	for i, t := range texts {
		sep := "-"
		if i == len(texts)-1 {
			sep = " "
		}
		if err := ss.tp.PrintfLine("%d%s%s", code, sep, t); err != nil {
			return err
		}
	}
	return nil
}

// pathArg reads MAIL's "FROM:<a> params" or RCPT's "TO:<a> params" and
// returns a; found is false when arg does not start with prefix or has no
// <…>.
func pathArg(arg, prefix string) (addr string, found bool) {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return "", false
	}
	rest := strings.TrimSpace(arg[len(prefix):])
	if !strings.HasPrefix(rest, "<") {
		return "", false
	}
	end := strings.IndexByte(rest, '>')
	if end < 0 {
		return "", false
	}
	return rest[1:end], true
}

// mailOf reads a received message: its header, its subject decoded, its
// body with its transfer encoding undone. A message that does not parse
// is kept raw.
func mailOf(raw []byte) Mail {
	m := Mail{Raw: string(raw), Header: map[string]string{}}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		m.Body = string(raw)
		return m
	}
	for k, vs := range msg.Header {
		if len(vs) > 0 {
			m.Header[k] = vs[0]
		}
	}
	dec := new(mime.WordDecoder)
	m.Subject = msg.Header.Get("Subject")
	if s, err := dec.DecodeHeader(m.Subject); err == nil {
		m.Subject = s
	}
	m.MessageID, m.InReplyTo, m.References = msg.Header.Get("Message-Id"), msg.Header.Get("In-Reply-To"), msg.Header.Get("References")
	body := io.Reader(msg.Body)
	switch strings.ToLower(strings.TrimSpace(msg.Header.Get("Content-Transfer-Encoding"))) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, newlineDropper{body})
	}
	b, err := io.ReadAll(body)
	if err != nil {
		m.Body = string(raw)
		return m
	}
	m.Body = strings.ReplaceAll(string(b), "\r\n", "\n")
	return m
}

// newlineDropper reads r without its line breaks (base64 bodies are
// wrapped).
type newlineDropper struct{ r io.Reader }

func (d newlineDropper) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	out := p[:0]
	for _, c := range p[:n] {
		if c != '\r' && c != '\n' {
			out = append(out, c)
		}
	}
	return len(out), err
}
