package eval

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrecall/openrecall"
)

// Pipeline is a fresh pipeline for one replay: an analyzer, the empty memory
// it recalls from and stores its results in, which the simulated analyst
// retains into and decides groups in, and Close, which releases both.
type Pipeline struct {
	Analyzer   Analyzer
	Memory     Retainer
	Groups     GroupDecider
	Identifier Identifier
	// Exceptions is where the simulated analyst approves proposals; nil
	// approves none.
	Exceptions Approver
	Close      func() error
}

// ModeSpec is one quadrant of the mode matrix (memory backend × model).
type ModeSpec struct {
	Mode openrecall.Mode
	// Unavailable, when not empty, says why this mode cannot run here; Open
	// is not called then.
	Unavailable string
	// Open builds a fresh pipeline for the mode.
	Open func(ctx context.Context) (Pipeline, error)
}

// ModeRow is one mode's outcome: its report, or why it did not run.
type ModeRow struct {
	Mode   openrecall.Mode `json:"mode"`
	Ran    bool            `json:"ran"`
	Reason string          `json:"unavailable_reason,omitempty"`
	Report *Report         `json:"report,omitempty"`
}

// RunModes replays the corpus once per available mode, each on a fresh
// pipeline, and returns one row per spec in order. An unavailable mode gets
// a row that says why instead of figures. It stops at the first error.
func RunModes(ctx context.Context, c Corpus, specs []ModeSpec, cfg Config) ([]ModeRow, error) {
	rows := make([]ModeRow, 0, len(specs))
	for _, spec := range specs {
		if spec.Unavailable != "" || spec.Open == nil {
			why := spec.Unavailable
			if why == "" {
				why = "no pipeline is wired for this mode"
			}
			rows = append(rows, ModeRow{Mode: spec.Mode, Reason: why})
			continue
		}
		rep, err := runMode(ctx, c, spec, cfg)
		if err != nil {
			return rows, fmt.Errorf("mode %s: %w", spec.Mode, err)
		}
		rows = append(rows, ModeRow{Mode: spec.Mode, Ran: true, Report: &rep})
	}
	return rows, nil
}

func runMode(ctx context.Context, c Corpus, spec ModeSpec, cfg Config) (rep Report, err error) {
	p, err := spec.Open(ctx)
	if err != nil {
		return Report{}, err
	}
	defer func() {
		if p.Close != nil {
			err = errors.Join(err, p.Close())
		}
	}()
	cfg.Analyzer, cfg.Memory, cfg.Groups, cfg.Identifier, cfg.Exceptions, cfg.Mode = p.Analyzer, p.Memory, p.Groups, p.Identifier, p.Exceptions, spec.Mode
	return Replay(ctx, c, cfg)
}
