package fakereceivers_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall/internal/fakereceivers"
)

func TestControl(t *testing.T) {
	f, clk := startFakes(t)
	srv := httptest.NewServer(f.Control())
	t.Cleanup(srv.Close)

	tests := []struct {
		name   string
		query  string
		status int
		want   fakereceivers.Pending
	}{
		{"outage", "receiver=pagerduty&status=500&count=5&retry_after=2", http.StatusOK, fakereceivers.Pending{Status: 500, Left: 5, RetryAfter: 2}},
		{"count defaults to one", "receiver=smtp&status=451", http.StatusOK, fakereceivers.Pending{Status: 451, Left: 1}},
		{"slack refusal", "receiver=slack&status=200&error=is_archived", http.StatusOK, fakereceivers.Pending{Status: 200, Left: 1, Error: "is_archived"}},
		{"unknown receiver", "receiver=jira&status=500", http.StatusBadRequest, fakereceivers.Pending{}},
		{"not a number", "receiver=teams&status=five", http.StatusBadRequest, fakereceivers.Pending{}},
		{"not a failure", "receiver=teams&status=204", http.StatusBadRequest, fakereceivers.Pending{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(srv.URL+"/_fail?"+tt.query, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Receiver string                `json:"receiver"`
				Failing  fakereceivers.Pending `json:"failing"`
			}
			if tt.status == http.StatusOK {
				if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
					t.Fatal(err)
				}
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if diff := cmp.Diff(tt.want, got.Failing); diff != "" {
				t.Errorf("failing (-want +got):\n%s", diff)
			}
		})
	}

	send(t, receivers(t, f, clk)[fakereceivers.Teams], trigger())
	status, body := get(t, srv.URL+"/_state")
	if status != http.StatusOK {
		t.Fatalf("GET /_state: %d %s", status, body)
	}
	var st fakereceivers.State
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	// The same state, once both are compact JSON (GET /_state indents).
	want, err := json.Marshal(f.State())
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("GET /_state is not State (-State +GET):\n%s", diff)
	}
	if len(st.Teams.Cards) != 1 || st.Failing[fakereceivers.PagerDuty].Left != 5 || st.Failing[fakereceivers.Email].Left != 1 {
		t.Errorf("state: cards %d, failing %v", len(st.Teams.Cards), st.Failing)
	}

	status, body = get(t, srv.URL+"/_addrs")
	var a fakereceivers.Addrs
	if err := json.Unmarshal(body, &a); status != http.StatusOK || err != nil {
		t.Fatalf("GET /_addrs: %d %v", status, err)
	}
	if diff := cmp.Diff(f.Addrs(), a); diff != "" {
		t.Errorf("GET /_addrs (-Addrs +GET):\n%s", diff)
	}
}
