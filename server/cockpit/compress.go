package cockpit

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// CompressMin is the smallest body Compress gzips: below it the gzip
// header and trailer (18 bytes) and the deflate overhead eat the gain.
const CompressMin = 1024

// gzipWriters holds gzip writers between responses: each keeps about
// 256 KiB of deflate state, too much to allocate per page.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return zw
}}

// Compress answers with a gzip-compressed body when the request accepts
// gzip (Accept-Encoding, q-values honoured) and the body is text (HTML,
// CSS, JavaScript, JSON, SVG) of at least CompressMin bytes; every answer
// says Vary: Accept-Encoding. Headers next sets (the security headers
// among them) are kept; a body next already encoded, an event stream and
// an answer to HEAD or with a Range pass through untouched. A flush before
// CompressMin bytes were written sends what there is uncompressed, so a
// stream is never held back.
func Compress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		if r.Method == http.MethodHead || r.Header.Get("Range") != "" || !acceptsGzip(r.Header.Values("Accept-Encoding")) {
			next.ServeHTTP(w, r)
			return
		}
		cw := &compressWriter{ResponseWriter: w}
		defer cw.close()
		next.ServeHTTP(cw, r)
	})
}

// acceptsGzip reports whether Accept-Encoding values accept gzip: named
// (or "*") with a q-value above 0.
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "gzip" && name != "x-gzip" && name != "*" {
				continue
			}
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
			if q > 0 {
				return true
			}
		}
	}
	return false
}

// compressible reports whether a body of content type ct is worth
// compressing: text, not a stream.
func compressible(ct string) bool {
	ct, _, _ = strings.Cut(strings.ToLower(ct), ";")
	ct = strings.TrimSpace(ct)
	switch {
	case ct == "text/event-stream":
		return false
	case strings.HasPrefix(ct, "text/"), ct == "application/json", ct == "application/javascript", ct == "image/svg+xml":
		return true
	}
	return false
}

// compressWriter holds the start of a body until it knows whether to
// compress it: CompressMin bytes written, a flush, or the handler's end.
type compressWriter struct {
	http.ResponseWriter
	code    int // the status next asked for, 0 until it did
	buf     []byte
	decided bool
	zw      *gzip.Writer // nil: the body goes out as it is
}

func (w *compressWriter) WriteHeader(code int) {
	if w.code != 0 || w.decided {
		return
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		w.ResponseWriter.WriteHeader(code) // 1xx informational: pass on
		return
	}
	w.code = code
	if code == http.StatusNoContent || code == http.StatusNotModified || code == http.StatusSwitchingProtocols {
		_ = w.decide(false) // no body may follow: nothing held, nothing written, no error
	}
}

func (w *compressWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if !w.decided {
		w.buf = append(w.buf, b...)
		if len(w.buf) < CompressMin {
			return len(b), nil
		}
		if err := w.decide(true); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	if w.zw != nil {
		return w.zw.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// decide sends the headers, gzipped when big is true and the answer
// qualifies, and the body held so far.
func (w *compressWriter) decide(big bool) error {
	w.decided = true
	h := w.Header()
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if big && h.Get("Content-Encoding") == "" && compressible(h.Get("Content-Type")) {
		h.Set("Content-Encoding", "gzip")
		h.Del("Content-Length")
		if et := h.Get("ETag"); et != "" && !strings.HasPrefix(et, "W/") {
			// The gzipped bytes are another representation of the same
			// content: the validator stays, weak (as nginx does).
			h.Set("ETag", "W/"+et)
		}
		w.zw = gzipWriters.Get().(*gzip.Writer)
		w.zw.Reset(w.ResponseWriter)
	}
	w.ResponseWriter.WriteHeader(w.code)
	buf := w.buf
	w.buf = nil
	if len(buf) == 0 {
		return nil
	}
	var err error
	if w.zw != nil {
		_, err = w.zw.Write(buf)
	} else {
		_, err = w.ResponseWriter.Write(buf)
	}
	return err
}

// Flush sends what is held (uncompressed when less than CompressMin was
// written) and flushes the connection.
func (w *compressWriter) Flush() {
	if !w.decided {
		_ = w.decide(false)
	}
	if w.zw != nil {
		_ = w.zw.Flush()
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// close ends the body: a small one goes out as it is.
func (w *compressWriter) close() {
	if !w.decided {
		if w.code == 0 && len(w.buf) == 0 {
			return // next wrote nothing: net/http answers 200 with no body
		}
		_ = w.decide(false)
	}
	if w.zw != nil {
		_ = w.zw.Close()
		w.zw.Reset(nil)
		gzipWriters.Put(w.zw)
		w.zw = nil
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *compressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
