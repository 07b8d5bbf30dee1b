package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/server/cockpit"
	"github.com/openrecall/openrecall/usecase"
)

// failingQueue is the cockpit's use cases with a queue that fails with
// err (the other use cases are not called).
type failingQueue struct {
	cockpit.UseCases
	err error
}

func (f failingQueue) QueuePage(context.Context, openrecall.WaitingFilter) (usecase.QueuePage, error) {
	return usecase.QueuePage{}, f.err
}

// anySession is a store that knows every session cookie as alice's.
type anySession struct{ cockpit.Store }

func (anySession) Session(context.Context, string, time.Time) (openrecall.Session, error) {
	return openrecall.Session{Analyst: "alice", Scopes: []string{ScopeRead}}, nil
}

// TestErrorStatusesAgree holds the JSON API's and the cockpit's answers
// to the same error to the same status, for every sentinel error of the
// root package (and one that is none): the API's answerErr, and a cockpit
// page whose use case fails with it.
func TestErrorStatusesAgree(t *testing.T) {
	s := &Server{log: zap.NewNop()}
	for _, sentinel := range []error{
		openrecall.ErrInvalid, openrecall.ErrNotFound, openrecall.ErrIntegrity, openrecall.ErrGroupDecided,
		openrecall.ErrPruned, &openrecall.PrunedError{AnalysisID: "a"}, openrecall.ErrFull, openrecall.ErrNoSpace,
		openrecall.ErrSchemaMismatch, fmt.Errorf("disk on fire"),
	} {
		err := fmt.Errorf("queue: %w", sentinel)
		t.Run(sentinel.Error(), func(t *testing.T) {
			api := httptest.NewRecorder()
			s.answerErr(api, httptest.NewRequest(http.MethodGet, "/api/v1/queue", nil), err)

			c, cerr := cockpit.New(cockpit.Config{UseCases: failingQueue{err: err}, Store: anySession{},
				Tokens: []Token{{Name: "alice", Analyst: "alice", Secret: "alice-secret-0123456789", Scopes: []string{ScopeRead}}},
				Badge:  func(context.Context) cockpit.Badge { return cockpit.Badge{Ready: true} }})
			if cerr != nil {
				t.Fatal(cerr)
			}
			req := httptest.NewRequest(http.MethodGet, cockpit.Prefix+"queue", nil)
			req.AddCookie(&http.Cookie{Name: cockpit.SessionCookie, Value: "any"})
			page := httptest.NewRecorder()
			c.Handler().ServeHTTP(page, req)

			if api.Code != page.Code {
				t.Errorf("%v: the API answers %d, the cockpit %d", err, api.Code, page.Code)
			}
		})
	}
}
