package main

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/model/openai/fake"
	"github.com/openrecall/openrecall/routing"
)

// Model names of the fake row: priced as the tiers the local analyst
// stands in for, so the fake and deterministic rows compare.
const (
	fakeCheapModel  = "gpt-4o-mini"
	fakeStrongModel = "gpt-4o"
	// fakeRateLimitEvery makes every n-th request of the fake row a 429
	// with Retry-After: 0, so the row exercises the retry path.
	fakeRateLimitEvery = 10
)

// defaultModels returns m with the embedded defaults' provider and model
// names: the deterministic row always runs the local analyst.
func defaultModels(m config.Models) config.Models {
	if d, err := config.Default(); err == nil {
		m.Provider, m.Cheap, m.Strong = d.Models.Provider, d.Models.Cheap, d.Models.Strong
	}
	return m
}

// fakeResponder answers like the local analyst (the cheap one for the cheap
// model's name, else the strong one) with usage from its token counts, and
// rate-limits every fakeRateLimitEvery-th request.
func fakeResponder() fake.Responder {
	var n atomic.Int64
	cheap, strong := local.NewCheap(), local.NewStrong()
	return func(r fake.Received) fake.Reply {
		if n.Add(1)%fakeRateLimitEvery == 0 {
			return fake.Status(http.StatusTooManyRequests, "0")
		}
		m := strong
		if r.Request.Model == fakeCheapModel {
			m = cheap
		}
		req := routing.Request{System: r.Request.Text("system"), Prompt: r.Request.Text("user"), MaxTokens: r.Request.MaxTokens, JSON: true}
		resp, err := m.Complete(context.Background(), req)
		if err != nil {
			return fake.Reply{Status: http.StatusBadRequest, Message: err.Error()}
		}
		return fake.Answer(resp.Text, resp.PromptTokens, resp.CompletionTokens)
	}
}

// fakeRouter returns a routerMaker that starts an in-process fake server
// and points the openai provider at it; the release function stops the
// server. The mode says fake.
func fakeRouter(now func() time.Time) routerMaker {
	return func(cfg config.Config, budget *routing.Budget) (*routing.Router, openrecall.Mode, func(), error) {
		srv := fake.New(fakeResponder())
		m := cfg.Models
		m.Cheap, m.Strong = fakeCheapModel, fakeStrongModel
		if m.Timeout <= 0 {
			m.Timeout = time.Minute
		}
		noSleep := func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
		cheap, strong, err := openaiModels(m, srv.URL, "", noSleep)
		if err == nil {
			var r *routing.Router
			if r, _, err = newRouter(cfg, cheap, strong, budget, now, openrecall.Mode{}); err == nil {
				return r, openrecall.Mode{Memory: "sqlite", Model: "fake"}, srv.Close, nil
			}
		}
		srv.Close()
		return nil, openrecall.Mode{}, nil, err
	}
}
