package memory

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
)

// MaxRecordBytes is the longest line Import accepts; a longer line is
// rejected and skipped.
const MaxRecordBytes = 1 << 20

// importBatch is how many records Import stores per transaction.
const importBatch = 500

// ImportReport says what Import did with each line: Read counts non-blank
// lines; each is Created, Existing (an equivalent incident was already
// stored) or Rejected.
type ImportReport struct {
	Read     int           `json:"read"`
	Created  int           `json:"created"`
	Existing int           `json:"existing"`
	Rejected []RecordError `json:"rejected,omitempty"`
	// Exceptions are the exception lines read ({"exception": {...}}, as
	// Export writes them), by line, not stored: only a person's action
	// stores one (usecase.App.ImportExceptions, audited).
	Exceptions []ExceptionLine `json:"-"`
}

// ExceptionLine is an exception read by Import, with its line.
type ExceptionLine struct {
	Line      int
	Exception openrecall.Exception
}

// exceptionRecord is how Export writes an exception among the memories.
type exceptionRecord struct {
	Exception *openrecall.Exception `json:"exception"`
}

// RecordError is one rejected import line and why.
type RecordError struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// Export writes every incident as JSON Lines (one openrecall.Incident per
// line), oldest first (created time, then id), then every exception as
// {"exception": {...}}, and returns how many incidents it wrote.
func (s *Store) Export(ctx context.Context, w io.Writer) (int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+incidentColumns+` FROM incidents ORDER BY created_at, id`)
	if err != nil {
		return 0, translate("export", err)
	}
	defer rows.Close()
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n := 0
	for rows.Next() {
		inc, err := scanIncident(rows)
		if err != nil {
			return n, translate("export: scan", err)
		}
		if err := enc.Encode(inc); err != nil {
			return n, fmt.Errorf("export: write incident %s: %w", inc.ID, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, translate("export", err)
	}
	excs, err := s.Exceptions(ctx)
	if err != nil {
		return n, err
	}
	for i := range excs {
		if err := enc.Encode(exceptionRecord{Exception: &excs[i]}); err != nil {
			return n, fmt.Errorf("export: write exception %s: %w", excs[i].ID, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	return n, nil
}

type pendingRecord struct {
	line int
	args []any
	inc  openrecall.Incident
}

// Import reads JSON Lines of openrecall.Incident (as Export writes them) and
// retains each one. A line that is not a valid incident is reported in
// Rejected with its 1-based line number and a reason, and the rest are still
// stored; blank lines are skipped. Ids and dedupe keys are recomputed from
// content, so an import never overwrites or alters a stored incident. The
// error is for failures of the reader or the database, not of records; the
// report is valid up to that point.
func (s *Store) Import(ctx context.Context, r io.Reader) (ImportReport, error) {
	var rep ImportReport
	br := bufio.NewReaderSize(r, 64<<10)
	var pending []pendingRecord
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		err := s.importBatch(ctx, pending, &rep)
		pending = pending[:0]
		return err
	}
	for line := 1; ; line++ {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("import: %w", err)
		}
		data, tooLong, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return rep, fmt.Errorf("import: read line %d: %w", line, err)
		}
		eof := errors.Is(err, io.EOF)
		trimmed := bytes.TrimSpace(data)
		if len(trimmed) > 0 || tooLong {
			rep.Read++
			if tooLong {
				rep.Rejected = append(rep.Rejected, RecordError{Line: line, Reason: fmt.Sprintf("record longer than %d bytes", MaxRecordBytes)})
			} else if exc, ok, reason := parseException(trimmed); ok {
				if reason != "" {
					rep.Rejected = append(rep.Rejected, RecordError{Line: line, Reason: reason})
				} else {
					rep.Exceptions = append(rep.Exceptions, ExceptionLine{Line: line, Exception: exc})
				}
			} else if rec, reason := s.parseRecord(trimmed); reason != "" {
				rep.Rejected = append(rep.Rejected, RecordError{Line: line, Reason: reason})
			} else {
				rec.line = line
				pending = append(pending, rec)
				if len(pending) >= importBatch {
					if err := flush(); err != nil {
						return rep, err
					}
				}
			}
		}
		if eof {
			break
		}
	}
	if err := flush(); err != nil {
		return rep, err
	}
	s.log.Info("import", zap.Int("read", rep.Read), zap.Int("created", rep.Created),
		zap.Int("existing", rep.Existing), zap.Int("rejected", len(rep.Rejected)))
	return rep, nil
}

// readLine returns the next line without its newline; a line longer than
// MaxRecordBytes is consumed and reported as tooLong. err is io.EOF at the
// end of input, possibly with a last unterminated line.
func readLine(br *bufio.Reader) (data []byte, tooLong bool, err error) {
	for {
		chunk, isPrefix, err := br.ReadLine()
		if !tooLong {
			data = append(data, chunk...)
			if len(data) > MaxRecordBytes {
				tooLong, data = true, nil
			}
		}
		if err != nil {
			return data, tooLong, err
		}
		if !isPrefix {
			return data, tooLong, nil
		}
	}
}

// parseException reads an exception line; ok is false for any other line.
func parseException(data []byte) (openrecall.Exception, bool, string) {
	if !bytes.HasPrefix(data, []byte(`{"exception":`)) {
		return openrecall.Exception{}, false, ""
	}
	var rec exceptionRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil || rec.Exception == nil {
		return openrecall.Exception{}, true, fmt.Sprintf("invalid exception record: %v", err)
	}
	if err := rec.Exception.Validate(); err != nil {
		return openrecall.Exception{}, true, err.Error()
	}
	return *rec.Exception, true, ""
}

func (s *conn) parseRecord(data []byte) (pendingRecord, string) {
	if data[0] != '{' {
		return pendingRecord{}, "not a JSON object"
	}
	var inc openrecall.Incident
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&inc); err != nil {
		return pendingRecord{}, "invalid JSON: " + err.Error()
	}
	if dec.More() {
		return pendingRecord{}, "more than one JSON value on the line"
	}
	inc, args, err := s.prepare(inc)
	if err != nil {
		return pendingRecord{}, err.Error()
	}
	return pendingRecord{args: args, inc: inc}, ""
}

func (s *conn) importBatch(ctx context.Context, recs []pendingRecord, rep *ImportReport) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return translate("import: begin", err)
	}
	defer tx.Rollback()
	created, existing := 0, 0
	stored := make([]openrecall.Incident, 0, len(recs))
	for _, rec := range recs {
		inc, ok, err := s.retainTx(ctx, tx, rec.args, rec.inc)
		if err != nil {
			return fmt.Errorf("import line %d: %w", rec.line, err)
		}
		stored = append(stored, inc)
		if ok {
			created++
		} else {
			existing++
		}
	}
	if err := tx.Commit(); err != nil {
		return translate("import: commit", err)
	}
	s.incidentWrites.Add(1)
	s.indexWrote(stored...)
	rep.Created += created
	rep.Existing += existing
	return nil
}
