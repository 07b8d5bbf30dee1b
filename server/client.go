package server

import (
	"net/http"
	"net/netip"
	"strings"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall/server/cockpit"
)

// client tells who sent r and whether over TLS: the peer's address and its
// TLS connection, unless the peer is a trusted proxy (Config.TrustedProxies).
// From a trusted proxy, X-Forwarded-Proto says whether the client's own
// request was https (its last value: the nearest proxy's), and the client
// is the rightmost address of X-Forwarded-For that is not itself a trusted
// proxy. From any other peer both headers are ignored: a client cannot
// choose the address it is throttled by, nor make a cookie Secure.
func (s *Server) client(r *http.Request) cockpit.Client {
	c := cockpit.PeerClient(r)
	peer, err := netip.ParseAddr(c.Addr)
	if err != nil || !s.trusted(peer) {
		return c
	}
	if p := lastValue(r.Header.Values("X-Forwarded-Proto")); p != "" {
		c.Secure = strings.EqualFold(p, "https")
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a hop nobody trusted wrote: the address before it stands
		}
		c.Addr = a.Unmap().String()
		if !s.trusted(a) {
			break
		}
	}
	return c
}

// trusted reports whether a is one of the trusted proxies.
func (s *Server) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// lastValue returns the last comma-separated value of a header's values.
func lastValue(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	v := vs[len(vs)-1]
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return strings.TrimSpace(v)
}

// login logs a login attempt and counts it: a failure at Warn with the
// client's address (never the token), a success at Info.
func (s *Server) login(r *http.Request, l cockpit.Login) {
	s.obs.Login(l.Outcome)
	fields := []zap.Field{zap.String("request_id", requestID(r)), zap.String("client", l.Addr), zap.String("outcome", l.Outcome)}
	if l.Analyst != "" {
		fields = append(fields, zap.String("analyst", l.Analyst))
	}
	switch l.Outcome {
	case cockpit.LoginOK:
		s.log.Info("login", fields...)
	case cockpit.LoginThrottled:
		s.log.Warn("login refused: throttled after failed logins", append(fields, zap.Duration("retry_after", l.RetryAfter))...)
	default:
		s.log.Warn("login failed", fields...)
	}
}
