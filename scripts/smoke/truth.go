package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/openrecall/openrecall"
)

// Ground-truth values of examples/truth.json.
const (
	truthBenign = "benign"
	truthReal   = "real"
	truthAttack = "attack"

	kindRepeat = "repeat" // a repeat of a benign family: the only kind memory may bypass
)

// truthEntry is the ground truth of one alert of the example queue, keyed by
// its position: the line, and the alerts[] item for webhook alerts.
type truthEntry struct {
	Line   int    `json:"line"`
	Item   *int   `json:"item,omitempty"`
	ID     string `json:"id,omitempty"`
	Truth  string `json:"truth"`
	Kind   string `json:"kind"`
	Family string `json:"family"`
}

// position returns the entry's position as intake reports it.
func (e truthEntry) position() openrecall.Position {
	p := openrecall.Position{Line: e.Line}
	if e.Item != nil {
		p.Index, p.HasIndex = *e.Item, true
	}
	return p
}

// mayBypass reports whether memory may skip the model for this alert.
func (e truthEntry) mayBypass() bool { return e.Truth == truthBenign && e.Kind == kindRepeat }

// loadTruth reads and checks a truth file.
func loadTruth(path string) ([]truthEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Alerts []truthEntry `json:"alerts"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Alerts) == 0 {
		return nil, fmt.Errorf("%s: no alerts", path)
	}
	for i, e := range f.Alerts {
		switch e.Truth {
		case truthBenign, truthReal, truthAttack:
		default:
			return nil, fmt.Errorf("%s: alert %d (line %d): truth %q is not benign, real or attack", path, i, e.Line, e.Truth)
		}
		if e.Line < 1 || e.Kind == "" || e.Family == "" {
			return nil, fmt.Errorf("%s: alert %d: line, kind and family are required", path, i)
		}
	}
	return f.Alerts, nil
}
