package fingerprint

import "testing"

func TestMaskHostMasksWholeWordsOnly(t *testing.T) {
	for _, c := range []struct{ s, host, want string }{
		{"disk full on db-2.", "db-2", "disk full on  ."},
		{"disk full on DB-2 and db-2", "db-2", "disk full on   and  "},
		{"disk full on db-20", "db-2", "disk full on db-20"},
		{"mongodb is down", "db", "mongodb is down"},
		{"db_2 is down", "db", "db_2 is down"},
		{"https://checkout.example.com/health", "checkout.example.com", "https:// /health"},
		{"no host here", "", "no host here"},
		{"db", "db-2", "db"},
		{"ünïcode db-2", "db-2", "ünïcode  "},
		{"xdb-2", "db-2", "xdb-2"},
	} {
		if got := maskHost(c.s, c.host); got != c.want {
			t.Errorf("maskHost(%q, %q) = %q, want %q", c.s, c.host, got, c.want)
		}
	}
}
