package usecase

import (
	"context"
	"fmt"
	"io"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/workflow"
)

// Pipeline analyses a queue of intake records, persisting each batch of
// results before it emits them. workflow.Workflow satisfies it.
type Pipeline interface {
	AnalyzeQueue(ctx context.Context, src workflow.Source, opts workflow.QueueOptions, emit func(openrecall.Result) error) (workflow.Summary, error)
}

// Queue is what an analyze run reads: exactly one of a stream of alerts in
// an intake format (a file, standard input) or a source of intake records
// (the server's inbox of accepted deliveries).
type Queue struct {
	// Input is read in Format, its records' positions named by Name.
	Input  io.Reader
	Format intake.Format
	Name   string
	// Source is the records themselves.
	Source workflow.Source
}

// AnalyzeRequest asks to analyse a queue.
type AnalyzeRequest struct {
	Queue Queue
	// Options tune the run: workers, progress, the batch hook, the stored
	// cost curve a run continues.
	Options workflow.QueueOptions
}

// Analyze runs every record of the queue through the pipeline (the same
// workflow, persistence and cost curve for the command line and the
// server) and emits each result in queue order once its batch is stored.
// It returns the run's summary, also when the run stops early with an
// error; a queue that names no input, or two, is an error wrapping
// openrecall.ErrInvalid.
func Analyze(ctx context.Context, p Pipeline, req AnalyzeRequest, emit func(openrecall.Result) error) (workflow.Summary, error) {
	q := req.Queue
	src := q.Source
	switch {
	case (q.Input == nil) == (src == nil):
		return workflow.Summary{}, fmt.Errorf("analyze: give a stream of alerts or a source of records, exactly one: %w", openrecall.ErrInvalid)
	case src == nil:
		src = workflow.Records(intake.NewReader(q.Input, intake.Options{Format: q.Format, Source: q.Name}))
	}
	return p.AnalyzeQueue(ctx, src, req.Options, emit)
}
