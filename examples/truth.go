package examples

import (
	"encoding/json"
	"fmt"

	"github.com/openrecall/openrecall"
)

// Ground-truth values and the kind memory may bypass, as truth.json writes
// them (see README.md).
const (
	TruthBenign = "benign"
	TruthReal   = "real"
	TruthAttack = "attack"

	// KindRepeat marks a repeat of a benign family: the only kind memory may
	// bypass.
	KindRepeat = "repeat"
)

// TruthEntry is the ground truth of one alert of the example queue, keyed by
// its position: the line, and the alerts[] item for webhook alerts.
type TruthEntry struct {
	Line   int    `json:"line"`
	Item   *int   `json:"item,omitempty"`
	ID     string `json:"id,omitempty"`
	Truth  string `json:"truth"`
	Kind   string `json:"kind"`
	Family string `json:"family"`
}

// Position returns the entry's position as intake reports it.
func (e TruthEntry) Position() openrecall.Position {
	p := openrecall.Position{Line: e.Line}
	if e.Item != nil {
		p.Index, p.HasIndex = *e.Item, true
	}
	return p
}

// MayBypass reports whether memory may skip the model for this alert.
func (e TruthEntry) MayBypass() bool { return e.Truth == TruthBenign && e.Kind == KindRepeat }

// ParseTruth reads and checks a truth file's content; name labels errors.
func ParseTruth(b []byte, name string) ([]TruthEntry, error) {
	var f struct {
		Alerts []TruthEntry `json:"alerts"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(f.Alerts) == 0 {
		return nil, fmt.Errorf("%s: no alerts", name)
	}
	for i, e := range f.Alerts {
		switch e.Truth {
		case TruthBenign, TruthReal, TruthAttack:
		default:
			return nil, fmt.Errorf("%s: alert %d (line %d): truth %q is not benign, real or attack", name, i, e.Line, e.Truth)
		}
		if e.Line < 1 || e.Kind == "" || e.Family == "" {
			return nil, fmt.Errorf("%s: alert %d: line, kind and family are required", name, i)
		}
	}
	return f.Alerts, nil
}
