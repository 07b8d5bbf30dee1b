package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// relay stands in front of the PagerDuty fake and passes every request on.
// Told to hold, it still passes each request on (PagerDuty takes the
// event) but keeps the answer back until released or the client goes: a
// delivery made and not yet known to serve, the moment a crash turns into
// a re-sent trigger.
type relay struct {
	url    string // the relay's base URL
	target string // the fake's events endpoint
	srv    *http.Server
	client *http.Client

	mu      sync.Mutex
	holding bool
	held    int // answers kept back since hold
	release chan struct{}
}

func startRelay(target string) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	p := &relay{url: "http://" + ln.Addr().String(), target: target, client: &http.Client{Timeout: 10 * time.Second},
		release: make(chan struct{})}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }() // ErrServerClosed once closed
	return p, nil
}

func (p *relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// The event reaches PagerDuty whatever happens to the client after.
	req, err := http.NewRequestWithContext(context.Background(), r.Method, p.target, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := p.client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	p.mu.Lock()
	hold := p.holding && resp.StatusCode == http.StatusAccepted
	release := p.release
	if hold {
		p.held++
	}
	p.mu.Unlock()
	if hold {
		select {
		case <-release:
		case <-r.Context().Done():
			return // serve is gone: its delivery stays unrecorded
		}
	}
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer) // the client may have gone
}

// hold keeps back the answers of the requests from now on.
func (p *relay) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holding, p.held = true, 0
}

// heldCount returns how many answers were kept back since hold.
func (p *relay) heldCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// pass lets the answers kept back go and passes the next ones at once.
func (p *relay) pass() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.holding {
		close(p.release)
		p.release = make(chan struct{})
	}
	p.holding = false
}

func (p *relay) close() {
	p.pass()
	_ = p.srv.Close()
}

// amSink is Alertmanager's webhook receiver: it keeps every alert of
// every notification Alertmanager sends.
type amSink struct {
	url string
	srv *http.Server

	mu     sync.Mutex
	events []amEvent
	posts  int
	agents map[string]bool
}

// amEvent is one alert of a notification Alertmanager sent.
type amEvent struct {
	Status string // firing or resolved
	Labels map[string]string
	EndsAt time.Time
}

func startSink() (*amSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("alertmanager sink: %w", err)
	}
	s := &amSink{url: "http://" + ln.Addr().String(), agents: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /alerts", s.receive)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }() // ErrServerClosed once closed
	return s, nil
}

func (s *amSink) receive(w http.ResponseWriter, r *http.Request) {
	var msg struct {
		Alerts []struct {
			Status string            `json:"status"`
			Labels map[string]string `json:"labels"`
			EndsAt time.Time         `json:"endsAt"`
		} `json:"alerts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.posts++
	s.agents[r.UserAgent()] = true
	for _, a := range msg.Alerts {
		s.events = append(s.events, amEvent{Status: a.Status, Labels: a.Labels, EndsAt: a.EndsAt})
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// received returns a copy of the alerts received, in order.
func (s *amSink) received() []amEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]amEvent(nil), s.events...)
}

// userAgents returns the User-Agents that posted.
func (s *amSink) userAgents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for a := range s.agents {
		out = append(out, a)
	}
	return out
}

func (s *amSink) close() { _ = s.srv.Close() }

// api calls openrecall serve with token and decodes its JSON answer into
// out (when not nil); it returns the status.
func (r *run) api(method, path, token string, body []byte, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, r.url+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %d %s: %w", method, path, resp.StatusCode, b, err)
		}
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(b))
	}
	return resp.StatusCode, nil
}

// get returns the body of a GET answered 200.
func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = errors.New("GET " + url + ": " + resp.Status)
	}
	return string(b), err
}
