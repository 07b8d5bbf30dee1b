package notify_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/notify"
)

func TestSecretNeverPrints(t *testing.T) {
	t.Setenv("OPENRECALL_TEST_ROUTING_KEY", "R0UT1NG")
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("xoxb-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{"inline-key": "inline-key", "env:OPENRECALL_TEST_ROUTING_KEY": "R0UT1NG", "file:" + path: "xoxb-file"} {
		s, err := notify.ParseSecret(spec)
		if err != nil || s.Reveal() != want {
			t.Fatalf("ParseSecret(%q) = %q, %v; want %q", spec, s.Reveal(), err, want)
		}
		j, _ := json.Marshal(struct{ Key notify.Secret }{s})
		for _, shown := range []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s", s, s, s, s), string(j)} {
			if strings.Contains(shown, want) || !strings.Contains(shown, "xxxxx") {
				t.Errorf("%q shows the secret or not xxxxx", shown)
			}
		}
	}
	for _, bad := range []string{"", "env:OPENRECALL_TEST_UNSET_VARIABLE", "file:" + filepath.Join(t.TempDir(), "missing")} {
		if _, err := notify.ParseSecret(bad); err == nil {
			t.Errorf("ParseSecret(%q) accepted", bad)
		}
	}
}
