package workflow

import (
	"fmt"
	"testing"
)

// TestAnalysisIDIsSprintf holds analysisID (strconv, no fmt) to its plain
// definition, fmt.Sprintf("%s-%06d", batch, seq), around every width edge.
func TestAnalysisIDIsSprintf(t *testing.T) {
	for _, batch := range []string{"", "run-20261207T060426.736837Z-0b70e6"} {
		for _, seq := range []int{-1234567, -1, 0, 1, 9, 10, 99999, 100000, 999999, 1000000, 123456789} {
			if got, want := analysisID(batch, seq), fmt.Sprintf("%s-%06d", batch, seq); got != want {
				t.Errorf("analysisID(%q, %d) = %q, want %q", batch, seq, got, want)
			}
		}
	}
}
