package fakereceivers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// openrecall's webhook, as docs/webhook.schema.json and notify/webhook.go
// document it: POST of a JSON body {version, kind, key, id, …}; the
// notification's id in X-Openrecall-Notification-Id (the same on every
// retry); with a shared secret, X-Openrecall-Timestamp (Unix seconds of
// the sending) and X-Openrecall-Signature "v1=" and the hex HMAC-SHA256,
// keyed with the secret, of the timestamp, ".", and the raw body. The fake
// verifies it as a receiving server should (written here from that
// description, not with notify's code, so a signature that departs from
// it is refused): in constant time, the timestamp within
// webhookTolerance of its clock. It answers 200 to a delivery, 401 to a
// signature missing, stale or wrong, 400 to a body that is not JSON.

const (
	webhookPath         = "/hook"
	webhookTimestampHdr = "X-Openrecall-Timestamp"
	webhookSignatureHdr = "X-Openrecall-Signature"
	webhookIDHdr        = "X-Openrecall-Notification-Id"
	// webhookTolerance is how far a signature's timestamp may be from the
	// fake's clock (a replayed request is refused past it).
	webhookTolerance = 5 * time.Minute
)

func (f *Fakes) webhookAPI() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST "+webhookPath, f.route(Webhook, true, f.webhookDeliver))
	mux.Handle("/", f.route(Webhook, false, func(*http.Request, []byte) answer {
		return plain(http.StatusNotFound, "not found")
	}))
	return mux
}

// plain is a text answer.
func plain(status int, text string) answer {
	return answer{status: status, header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, body: []byte(text + "\n")}
}

func (f *Fakes) webhookDeliver(r *http.Request, body []byte) answer {
	ts, sig := r.Header.Get(webhookTimestampHdr), r.Header.Get(webhookSignatureHdr)
	signed := ts != "" || sig != ""
	if f.cfg.WebhookSecret != "" {
		if problem := verifyWebhook(f.cfg.WebhookSecret, ts, sig, body, f.now()); problem != "" {
			return plain(http.StatusUnauthorized, problem)
		}
	}
	var b struct {
		Kind string `json:"kind"`
		Key  string `json:"key"`
		ID   string `json:"id"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return plain(http.StatusBadRequest, "the body is not JSON")
	}
	id := r.Header.Get(webhookIDHdr)
	if id == "" {
		id = b.ID
	}
	d := WebhookDelivery{At: f.now(), ID: id, Kind: b.Kind, Key: b.Key, Signed: signed,
		Verified: f.cfg.WebhookSecret != "", Duplicate: id != "" && f.seenHooks[id], Body: json.RawMessage(body)}
	if id != "" {
		f.seenHooks[id] = true
	}
	f.st.Webhook.Deliveries = append(f.st.Webhook.Deliveries, d)
	return plain(http.StatusOK, "ok")
}

// verifyWebhook returns why the signature sig of timestamp ts over body
// does not hold for secret at now, "" when it holds.
func verifyWebhook(secret, ts, sig string, body []byte, now time.Time) string {
	if ts == "" || sig == "" {
		return "signature missing: " + webhookTimestampHdr + " and " + webhookSignatureHdr + " are required"
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return "timestamp is not Unix seconds"
	}
	if d := now.Sub(time.Unix(sec, 0)); d > webhookTolerance || d < -webhookTolerance {
		return "timestamp is stale: more than " + webhookTolerance.String() + " from now"
	}
	hexSig, ok := strings.CutPrefix(sig, "v1=")
	got, err := hex.DecodeString(hexSig)
	if !ok || err != nil {
		return "signature is not v1=<hex>"
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return "signature does not match"
	}
	return ""
}
