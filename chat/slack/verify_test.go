package slack

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestSlackDocumentedSignature: the worked example of
// https://docs.slack.dev/authentication/verifying-requests-from-slack
// (its signing secret, timestamp, body and signature) verifies.
func TestSlackDocumentedSignature(t *testing.T) {
	const (
		secret = "8f742231b10e8888abcd99yyyzzz85a5"
		ts     = 1531420618
		body   = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
		want   = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
	)
	if got := Sign(secret, ts, []byte(body)); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	h := http.Header{HeaderTimestamp: {strconv.Itoa(ts)}, HeaderSignature: {want}}
	if _, err := Verify(secret, h, []byte(body), time.Unix(ts+60, 0)); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func TestVerifyRefusals(t *testing.T) {
	const secret = "s3cret"
	now := time.Unix(1_800_000_000, 0)
	body := []byte("payload=%7B%7D")
	sign := func(ts int64) http.Header {
		return http.Header{HeaderTimestamp: {strconv.FormatInt(ts, 10)}, HeaderSignature: {Sign(secret, ts, body)}}
	}
	tests := []struct {
		name   string
		h      http.Header
		body   []byte
		secret string
		want   string
	}{
		{"fresh", sign(now.Unix()), body, secret, ""},
		{"five minutes old", sign(now.Add(-Window).Unix()), body, secret, ""},
		{"five minutes ahead", sign(now.Add(Window).Unix()), body, secret, ""},
		{"too old", sign(now.Add(-Window - time.Second).Unix()), body, secret, ReasonStale},
		{"too far ahead", sign(now.Add(Window + time.Second).Unix()), body, secret, ReasonStale},
		{"another secret", sign(now.Unix()), body, "other", ReasonBadSignature},
		{"another body", sign(now.Unix()), []byte("payload=x"), secret, ReasonBadSignature},
		{"no signature", http.Header{HeaderTimestamp: {strconv.FormatInt(now.Unix(), 10)}}, body, secret, ReasonBadSignature},
		{"no timestamp", http.Header{HeaderSignature: {Sign(secret, now.Unix(), body)}}, body, secret, ReasonBadSignature},
		{"not hex", http.Header{HeaderTimestamp: {strconv.FormatInt(now.Unix(), 10)}, HeaderSignature: {"v0=zz"}}, body, secret, ReasonBadSignature},
		{"v1", http.Header{HeaderTimestamp: {strconv.FormatInt(now.Unix(), 10)}, HeaderSignature: {"v1=" + Sign(secret, now.Unix(), body)[3:]}}, body, secret, ReasonBadSignature},
		{"no secret configured", sign(now.Unix()), body, "", ReasonBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Verify(tt.secret, tt.h, tt.body, now)
			var rf *Refusal
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (!errors.As(err, &rf) || rf.Reason != tt.want):
				t.Errorf("got %v, want a refusal %s", err, tt.want)
			}
		})
	}
}

// TestReplays: a signature is taken once while it could still verify,
// again after; a full set refuses rather than forgets.
func TestReplays(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	r := NewReplays(2)
	if !r.Take("a", now, now) || r.Take("a", now, now.Add(Window)) {
		t.Fatal("the same signature within the window was taken twice")
	}
	if !r.Take("a", now, now.Add(Window+time.Second)) {
		t.Error("a signature past its window (stale anyway) was refused")
	}
	if !r.Take("b", now, now) || r.Take("c", now, now) {
		t.Error("a full set of unexpired signatures took one more")
	}
	if !r.Take("c", now, now.Add(Window+time.Second)) {
		t.Error("a full set did not make room from its expired signatures")
	}
}
