package openrecall

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLinkOK(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", MaxLinkBytes)
	tests := []struct {
		url  string
		want bool
	}{
		{"https://grafana.example.com/d/abc?orgId=1&var-host=web-1", true},
		{"http://127.0.0.1:9093", true},
		{"HTTPS://Example.com/x", true},
		{"https://example.com/" + strings.Repeat("a", MaxLinkBytes-len("https://example.com/")), true},
		{long, false},
		{"javascript:alert(1)", false},
		{"JavaScript://example.com/%0Aalert(1)", false},
		{"data:text/html,<script>alert(1)</script>", false},
		{"vbscript:msgbox", false},
		{"ftp://example.com/x", false},
		{"/graph?g0.expr=up", false},
		{"//evil.example.com/x", false},
		{"https://", false},
		{"https:///path", false},
		{"https://grafana.example.com@evil.example.com/", false},
		{"https://example.com/a b", false},
		{" https://example.com/", false},
		{"https://example.com/\x00", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := LinkOK(tt.url); got != tt.want {
			t.Errorf("LinkOK(%q) = %v, want %v", tt.url, got, tt.want)
		}
	}
}

func TestCleanLinks(t *testing.T) {
	clean := map[string]string{LinkSource: "https://a.example.com/"}
	if got := CleanLinks(clean); len(got) != 1 || got[LinkSource] != clean[LinkSource] {
		t.Errorf("CleanLinks of clean links = %v", got)
	}
	got := CleanLinks(map[string]string{
		LinkSource: " https://a.example.com/x ", LinkRunbook: "javascript:alert(1)", "": "https://b.example.com/",
		LinkDashboard: "/d/abc", " " + LinkSilence: "https://c.example.com/s",
	})
	want := map[string]string{LinkSource: "https://a.example.com/x", LinkSilence: "https://c.example.com/s"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CleanLinks (-want +got):\n%s", diff)
	}
	if got := CleanLinks(map[string]string{LinkRunbook: "data:text/html,x"}); got != nil {
		t.Errorf("CleanLinks with no link = %v, want nil", got)
	}
}
