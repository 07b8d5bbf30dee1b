package main

import (
	"os"

	"github.com/openrecall/openrecall/examples"
)

// Ground-truth values of examples/truth.json.
const (
	truthBenign = examples.TruthBenign
	truthReal   = examples.TruthReal
	truthAttack = examples.TruthAttack
	kindRepeat  = examples.KindRepeat
)

// truthEntry is the ground truth of one alert of the example queue.
type truthEntry = examples.TruthEntry

// loadTruth reads and checks a truth file.
func loadTruth(path string) ([]truthEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return examples.ParseTruth(b, path)
}
