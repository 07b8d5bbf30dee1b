package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/notify"
)

// Outbox is the outbox as the dispatcher uses it (DESIGN §12b): intents
// claimed under a lease, and the outcome of each send reported under that
// claim. memory.Store satisfies it.
type Outbox interface {
	// ClaimIntents leases up to limit intents due to receivers, oldest
	// first, never one while an earlier intent of its episode is pending.
	// Each carries its Attempts (this claim counted), its episode's Prior
	// and its LeaseUntil (by the wall clock).
	ClaimIntents(ctx context.Context, limit int, receivers ...string) ([]openrecall.OutboxIntent, error)
	// IntentSent, IntentFailed and IntentDead report the outcome of a
	// claimed intent; each wraps openrecall.ErrLeaseLost, writing nothing,
	// when another process took the intent over. Another error keeps the
	// claim, to report again.
	IntentSent(ctx context.Context, id int64, state map[string]string) error
	IntentFailed(ctx context.Context, id int64, errText string, nextAt time.Time) error
	IntentDead(ctx context.Context, id int64, errText string) error
	// RenewIntents extends the lease of every intent claimed and not
	// reported yet.
	RenewIntents(ctx context.Context) error
}

// Reader reads what a notification carries. memory.Store satisfies it.
type Reader interface {
	// Served returns the delivery analysed as analysisID with its stored
	// result; an unknown id wraps openrecall.ErrNotFound, and a result
	// pruned after the retention has Pruned set and no Result.
	Served(ctx context.Context, analysisID string) (openrecall.Served, error)
	// WaitingFor returns what waited for a person about analysisID, and
	// the person's decision; an analysis that never waited wraps
	// openrecall.ErrNotFound.
	WaitingFor(ctx context.Context, analysisID string) (openrecall.Waiting, error)
	// Get returns the memory a decision retained (Waiting.MemoryID): the
	// person's note an update carries.
	Get(ctx context.Context, id string) (openrecall.Incident, error)
}

// DispatchObserver receives what the dispatcher does, for metrics. It
// observes and never steers; implementations must be safe for concurrent
// use. Sent, Failed and Dead report outcomes the outbox recorded; LeaseLost
// one it refused because another process holds the intent.
type DispatchObserver interface {
	// Sent reports a notification the receiver took, and how long its
	// send took.
	Sent(receiver, kind string, latency time.Duration)
	// Failed reports a send the receiver did not take: retried says it
	// will be tried again; otherwise it is a dead letter (Dead follows).
	Failed(receiver string, retried bool)
	// Dead reports an intent made a dead letter: refused for good,
	// older than the maximum age, or about a result that can no longer be
	// read.
	Dead(receiver string)
	// LeaseLost reports an outcome refused because another process took
	// the intent over after this one's lease passed.
	LeaseLost(receiver string)
}

// The dispatcher's defaults (the notify configuration's).
const (
	defaultConcurrency = 4
	defaultMaxAge      = time.Hour
	defaultBackoffBase = time.Second
	defaultBackoffMax  = 5 * time.Minute
	defaultPoll        = time.Second
	// defaultLease is memory.DefaultLease.
	defaultLease = time.Minute
)

// DispatchConfig wires a Dispatcher. Outbox and Reader are required; the
// zero values of the others are their defaults.
type DispatchConfig struct {
	Outbox Outbox
	Reader Reader
	// Receivers are the configured receivers, each name once: the
	// dispatcher delivers the intents to them and claims no other.
	Receivers []notify.Receiver
	// Concurrency bounds the sends in flight per receiver (default 4).
	Concurrency int
	// MaxAge is how long after its tries began (OutboxIntent.Since) an
	// intent that still fails becomes a dead letter (default 1h).
	MaxAge time.Duration
	// BackoffBase and BackoffMax shape the wait before a failed intent is
	// tried again: a random time (full jitter) up to BackoffBase doubled
	// per attempt after the first, at most BackoffMax (defaults 1s and
	// 5m), and never less than the receiver's Retry-After.
	BackoffBase, BackoffMax time.Duration
	// Lease is how long a claim of an intent lasts (the Outbox's;
	// default memory.DefaultLease's minute). Sends in flight have their
	// claims renewed every third of it, and each send must end a quarter
	// of it before its claim's LeaseUntil.
	Lease time.Duration
	// ReviewURL gives the cockpit's link to an analysis, "" when there is
	// none; nil gives none.
	ReviewURL func(analysisID string) string
	// Observer receives events for metrics; nil observes nothing.
	Observer DispatchObserver
	Logger   *zap.Logger
	// Now is the Outbox's clock (memory.Options.Now), which NextAt and
	// Since are read against; nil is time.Now().UTC().
	Now func() time.Time
	// Rand returns a number in [0, 1) for the back-off's jitter; nil is
	// math/rand/v2's.
	Rand func() float64
	// Poll is how often a receiver with free slots looks for intents when
	// idle (default 1s); Wake makes every receiver look now.
	Poll time.Duration
	// DigestEvery is, per receiver that takes one (notify.Settings.
	// Digests), the window of its digest of what openrecall closed
	// without a person (digest.go). Digests is then required.
	DigestEvery map[string]time.Duration
	// Digests reads the digests' windows and writes their intents.
	Digests Digests
	// DigestSettle is how long after a window ends its digest is written
	// (default 1m); DigestPoll how often the job looks (default 15s).
	DigestSettle, DigestPoll time.Duration
}

// Dispatcher delivers the outbox's intents to their receivers (DESIGN
// §12b): per receiver, up to Concurrency sends in flight, each claimed
// under a lease as a slot frees, so a slow or failing receiver never holds
// up another. A send the receiver refuses for good, or that keeps failing
// past MaxAge, makes its intent a dead letter; another failure is tried
// again after a back-off. Its methods are safe for concurrent use; Run is
// called once.
type Dispatcher struct {
	cfg   DispatchConfig
	log   *zap.Logger
	obs   DispatchObserver
	now   func() time.Time
	rand  func() float64
	lanes []*lane

	inFlight atomic.Int64   // sends in flight, over all receivers
	sends    sync.WaitGroup // one per send in flight
}

// lane is one receiver's share of the dispatcher.
type lane struct {
	r notify.Receiver
	// slots holds a token per send in flight; its capacity is the
	// concurrency. Only the lane's loop puts tokens in.
	slots chan struct{}
	// wake is poked by Wake and by the end of a send: look now.
	wake chan struct{}
}

// poke makes the lane look for intents now.
func (l *lane) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// NewDispatcher checks cfg, fills its defaults and returns a Dispatcher.
func NewDispatcher(cfg DispatchConfig) (*Dispatcher, error) {
	if err := checkDispatch(cfg); err != nil {
		return nil, err
	}
	cfg.Concurrency = orDefault(cfg.Concurrency, defaultConcurrency)
	cfg.MaxAge = orDefault(cfg.MaxAge, defaultMaxAge)
	cfg.BackoffBase = orDefault(cfg.BackoffBase, defaultBackoffBase)
	cfg.BackoffMax = orDefault(cfg.BackoffMax, max(defaultBackoffMax, cfg.BackoffBase))
	cfg.Lease = orDefault(cfg.Lease, defaultLease)
	cfg.Poll = orDefault(cfg.Poll, defaultPoll)
	cfg.DigestSettle = orDefault(cfg.DigestSettle, defaultDigestSettle)
	cfg.DigestPoll = orDefault(cfg.DigestPoll, defaultDigestPoll)
	if cfg.BackoffMax < cfg.BackoffBase {
		return nil, fmt.Errorf("dispatcher: back-off max %s is less than its base %s: %w", cfg.BackoffMax, cfg.BackoffBase, openrecall.ErrInvalid)
	}
	d := &Dispatcher{cfg: cfg, log: cfg.Logger, obs: cfg.Observer, now: cfg.Now, rand: cfg.Rand}
	if d.log == nil {
		d.log = zap.NewNop()
	}
	d.log = d.log.Named("dispatch")
	if d.obs == nil {
		d.obs = nopDispatchObserver{}
	}
	if d.now == nil {
		d.now = func() time.Time { return time.Now().UTC() }
	}
	if d.rand == nil {
		d.rand = rand.Float64
	}
	for _, r := range cfg.Receivers {
		d.lanes = append(d.lanes, &lane{r: r, slots: make(chan struct{}, cfg.Concurrency), wake: make(chan struct{}, 1)})
	}
	return d, nil
}

// checkDispatch refuses a DispatchConfig that lacks what it needs or says
// something impossible.
func checkDispatch(cfg DispatchConfig) error {
	switch {
	case cfg.Outbox == nil, cfg.Reader == nil:
		return errors.New("dispatcher: outbox and reader are required")
	case cfg.Concurrency < 0:
		return fmt.Errorf("dispatcher: concurrency %d must not be negative: %w", cfg.Concurrency, openrecall.ErrInvalid)
	case cfg.MaxAge < 0, cfg.BackoffBase < 0, cfg.BackoffMax < 0, cfg.Lease < 0, cfg.Poll < 0, cfg.DigestSettle < 0, cfg.DigestPoll < 0:
		return fmt.Errorf("dispatcher: max age, back-off, lease, poll and digest settle and poll must not be negative: %w", openrecall.ErrInvalid)
	}
	seen := map[string]bool{}
	for i, r := range cfg.Receivers {
		switch {
		case r == nil:
			return fmt.Errorf("dispatcher: receiver %d is nil: %w", i, openrecall.ErrInvalid)
		case r.Name() == "":
			return fmt.Errorf("dispatcher: receiver %d has no name: %w", i, openrecall.ErrInvalid)
		case seen[r.Name()]:
			return fmt.Errorf("dispatcher: receiver %s is named twice: %w", r.Name(), openrecall.ErrInvalid)
		}
		seen[r.Name()] = true
	}
	return checkDigests(cfg)
}

// orDefault returns v, or def when v is zero.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Wake makes every receiver look for intents now rather than at its next
// poll: serve calls it once a batch wrote intents.
func (d *Dispatcher) Wake() {
	for _, l := range d.lanes {
		l.poke()
	}
}

// Run delivers intents until halt is closed, then lets the sends in flight
// end and their outcomes be recorded, and returns. ctx bounds all of it:
// once ctx is done the sends still in flight are cut short and Run returns
// without waiting for them; their intents, claimed and not reported, are
// claimed again once their lease passes (at once by the next start of the
// same instance), and each notification's ID lets its receiver drop a
// second delivery.
func (d *Dispatcher) Run(ctx context.Context, halt <-chan struct{}) {
	d.log.Info("dispatching", zap.Int("receivers", len(d.lanes)), zap.Int("concurrency", d.cfg.Concurrency))
	var lanes sync.WaitGroup
	for _, l := range d.lanes {
		lanes.Add(1)
		go func() {
			defer lanes.Done()
			d.claim(ctx, halt, l)
		}()
	}
	renewing := make(chan struct{})
	renewed := goDone(func() { d.renew(ctx, renewing) })
	digested := goDone(func() { d.digests(ctx, halt) })
	lanes.Wait()
	<-digested
	// No lane starts a send any more: the wait group only goes down.
	sent := goDone(d.sends.Wait)
	select {
	case <-sent:
	case <-ctx.Done():
		d.log.Warn("shutdown deadline passed with notifications in flight; they are claimed again once their lease passes",
			zap.Int64("in_flight", d.inFlight.Load()))
	}
	close(renewing)
	<-renewed
}

// claim is the loop of one lane until halt: it claims as many intents as
// the receiver has free slots and starts their sends, looks again at once
// while it fills every slot, and otherwise waits for a slot to free, a
// Wake or the next poll.
func (d *Dispatcher) claim(ctx context.Context, halt <-chan struct{}, l *lane) {
	poll := time.NewTicker(d.cfg.Poll)
	defer poll.Stop()
	name := l.r.Name()
	for {
		select {
		case <-halt:
			return
		case <-ctx.Done():
			return
		default:
		}
		if free := cap(l.slots) - len(l.slots); free > 0 {
			ins, err := d.cfg.Outbox.ClaimIntents(ctx, free, name)
			if err != nil && ctx.Err() == nil {
				d.log.Error("claim notifications; will retry", zap.String("receiver", name), zap.Error(err))
			}
			for _, in := range ins {
				d.start(ctx, l, in)
			}
			if len(ins) == free {
				continue // more may be due: look again once a slot frees
			}
		}
		select {
		case <-halt:
			return
		case <-ctx.Done():
			return
		case <-l.wake:
		case <-poll.C:
		}
	}
}

// start sends in in a goroutine of its own, holding one of l's slots.
func (d *Dispatcher) start(ctx context.Context, l *lane, in openrecall.OutboxIntent) {
	l.slots <- struct{}{} // never blocks: the lane claimed no more than its free slots
	d.inFlight.Add(1)
	d.sends.Add(1)
	go func() {
		defer func() {
			d.inFlight.Add(-1)
			<-l.slots
			d.sends.Done()
			l.poke() // a slot is free, and the episode's next intent may be due
		}()
		d.deliver(ctx, l.r, in)
	}()
}

// renew extends the claims of the intents in flight every third of the
// lease, until done is closed. A failure is logged and tried again at the
// next tick: the lease outlasts two missed renewals.
func (d *Dispatcher) renew(ctx context.Context, done <-chan struct{}) {
	t := time.NewTicker(max(d.cfg.Lease/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if d.inFlight.Load() == 0 {
			continue
		}
		if err := d.cfg.Outbox.RenewIntents(ctx); err != nil && ctx.Err() == nil {
			d.log.Error("renew notification leases; will retry", zap.Error(err))
		}
	}
}

// IntentNotificationID is the Notification.ID of outbox intent id: the
// same on every try, so a receiver that takes an idempotency key drops a
// second delivery.
func IntentNotificationID(id int64) string {
	return "openrecall-intent-" + strconv.FormatInt(id, 10)
}

// deliver makes in's notification, sends it and records the outcome.
func (d *Dispatcher) deliver(ctx context.Context, r notify.Receiver, in openrecall.OutboxIntent) {
	log := d.log.With(zap.String("receiver", in.Receiver), zap.Int64("intent", in.ID), zap.String("kind", in.Kind),
		zap.String("analysis_id", in.AnalysisID), zap.Int("attempt", in.Attempts))
	n, err := d.notification(ctx, in)
	if err != nil {
		if ctx.Err() != nil {
			return // shutdown: claimed again once the lease passes
		}
		var gone *unreadableError
		if errors.As(err, &gone) {
			d.dead(ctx, log, in, err.Error(), false)
			return
		}
		d.retryOrDead(ctx, log, in, err, false)
		return
	}
	sendCtx, cancel := context.WithDeadline(ctx, d.sendDeadline(in))
	began := time.Now()
	delivery, err := r.Send(sendCtx, n)
	latency := time.Since(began)
	cancel()
	state := delivery.State
	if in.Kind == openrecall.IntentDigest {
		// A digest is an episode of its own: no later intent reads its
		// state, and without one its row is pruned with the others.
		state = nil
	}
	switch {
	case err == nil:
		if d.record(ctx, log, in, func(ctx context.Context) error { return d.cfg.Outbox.IntentSent(ctx, in.ID, state) }) {
			log.Debug("notification sent", zap.Duration("latency", latency))
			d.obs.Sent(in.Receiver, in.Kind, latency)
		}
	case ctx.Err() != nil:
		log.Debug("send cut short by the shutdown deadline; claimed again once the lease passes", zap.Error(err))
	default:
		d.retryOrDead(ctx, log, in, err, true)
	}
}

// sendDeadline is when a send of in must end: a quarter of the lease before
// its claim passes, leaving time to record the outcome under the claim.
// LeaseUntil is by the wall clock, as the deadline is.
func (d *Dispatcher) sendDeadline(in openrecall.OutboxIntent) time.Time {
	until := in.LeaseUntil
	if until.IsZero() {
		until = time.Now().Add(d.cfg.Lease)
	}
	return until.Add(-d.cfg.Lease / 4)
}

// retryOrDead records a try of in that failed with err: a dead letter when
// the receiver refused it for good or its tries began MaxAge ago or more,
// else a failure tried again after the back-off or the receiver's
// Retry-After, whichever is longer. sent says err is the receiver's answer
// (observed as Failed), not a failure to read what the notification
// carries.
func (d *Dispatcher) retryOrDead(ctx context.Context, log *zap.Logger, in openrecall.OutboxIntent, err error, sent bool) {
	var se *notify.SendError
	isSendErr := errors.As(err, &se)
	now := d.now()
	switch {
	case isSendErr && se.Permanent:
		d.dead(ctx, log, in, err.Error(), sent)
		return
	case now.Sub(in.Since) >= d.cfg.MaxAge:
		why := fmt.Sprintf("%v; given up %s after its tries began (max age %s)", err, now.Sub(in.Since).Round(time.Second), d.cfg.MaxAge)
		d.dead(ctx, log, in, why, sent)
		return
	}
	wait := d.backoff(in.Attempts)
	if isSendErr && se.RetryAfter > wait {
		wait = se.RetryAfter
	}
	next := now.Add(wait)
	if !d.record(ctx, log, in, func(ctx context.Context) error { return d.cfg.Outbox.IntentFailed(ctx, in.ID, err.Error(), next) }) {
		return
	}
	if !sent {
		log.Error("read what the notification carries; will retry", zap.Time("next_at", next), zap.Error(err))
		return
	}
	log.Info("notification not delivered; will retry", zap.Time("next_at", next), zap.Error(err))
	d.obs.Failed(in.Receiver, true)
}

// dead makes in a dead letter with why as its last error. sent says a
// send failed (observed as Failed, not retried, before Dead).
func (d *Dispatcher) dead(ctx context.Context, log *zap.Logger, in openrecall.OutboxIntent, why string, sent bool) {
	if !d.record(ctx, log, in, func(ctx context.Context) error { return d.cfg.Outbox.IntentDead(ctx, in.ID, why) }) {
		return
	}
	log.Warn("notification is a dead letter; a person can retry it", zap.String("reason", why))
	if sent {
		d.obs.Failed(in.Receiver, false)
	}
	d.obs.Dead(in.Receiver)
}

// backoff is the wait before the try after attempt attempts (1 for the
// first): a random time up to BackoffBase doubled attempts-1 times, at most
// BackoffMax.
func (d *Dispatcher) backoff(attempts int) time.Duration {
	ceil, limit := d.cfg.BackoffBase, d.cfg.BackoffMax
	for i := 1; i < attempts && ceil < limit; i++ {
		if ceil > limit/2 {
			ceil = limit
		} else {
			ceil *= 2
		}
	}
	return time.Duration(d.rand() * float64(min(ceil, limit)))
}

// record writes an outcome of in (write) and reports whether it was
// written. A refusal because another process took the intent over is
// logged and observed (LeaseLost): that process reports it. Another error
// leaves the claim this process's, so the write is tried again, with a
// growing pause, until it is written or refused or ctx is done: until
// then this Store never claims the intent again, and the renewals keep
// its lease.
func (d *Dispatcher) record(ctx context.Context, log *zap.Logger, in openrecall.OutboxIntent, write func(ctx context.Context) error) bool {
	for pause := 100 * time.Millisecond; ; pause = min(2*pause, 5*time.Second) {
		err := write(ctx)
		switch {
		case err == nil:
			return true
		case errors.Is(err, openrecall.ErrLeaseLost):
			log.Info("another process took the notification over after this one's lease passed; it reports the outcome", zap.Error(err))
			d.obs.LeaseLost(in.Receiver)
			return false
		case ctx.Err() != nil:
			log.Debug("outcome not recorded before the shutdown deadline; claimed again once the lease passes", zap.Error(err))
			return false
		}
		log.Error("record the notification's outcome; will retry", zap.Error(err))
		select {
		case <-ctx.Done():
			return false
		case <-time.After(pause):
		}
	}
}

// unreadableError is what a notification needs and can no longer be read
// (a result pruned after the retention, missing, or failing its seal): its
// intent is a dead letter at once, since no try will read it.
type unreadableError struct{ why string }

func (e *unreadableError) Error() string { return e.why + "; the notification cannot be made" }

// notification makes in's notification: the stored result it is about
// and, for an update, the person's decision. What can no longer be read is
// an *unreadableError; another error (a storage failure, an update whose
// decision is not visible yet) is worth another try.
func (d *Dispatcher) notification(ctx context.Context, in openrecall.OutboxIntent) (notify.Notification, error) {
	n := notify.Notification{Kind: in.Kind, Key: in.Key, ID: IntentNotificationID(in.ID), Prior: in.Prior, At: in.CreatedAt}
	if d.cfg.ReviewURL != nil {
		n.ReviewURL = d.cfg.ReviewURL(in.AnalysisID)
	}
	if in.Kind == openrecall.IntentDigest {
		return d.digestNotification(ctx, in, n)
	}
	var kept *openrecall.Result // the decided analysis's result, as the waiting row keeps it
	if in.Kind == openrecall.IntentUpdate {
		w, err := d.cfg.Reader.WaitingFor(ctx, in.AnalysisID)
		switch {
		case errors.Is(err, openrecall.ErrNotFound):
			return n, &unreadableError{fmt.Sprintf("analysis %s never waited for a person: no decision to notify", in.AnalysisID)}
		case errors.Is(err, openrecall.ErrIntegrity):
			return n, &unreadableError{fmt.Sprintf("the decision of analysis %s is not served: %v", in.AnalysisID, err)}
		case err != nil:
			return n, fmt.Errorf("read the decision of analysis %s: %w", in.AnalysisID, err)
		case !w.Decided:
			return n, fmt.Errorf("analysis %s is not decided yet", in.AnalysisID)
		}
		n.Decision = &notify.Decided{Decision: w.Decision, Analyst: w.DecidedBy, Note: d.noteOf(ctx, w.MemoryID)}
		kept = w.Result
	}
	sv, err := d.cfg.Reader.Served(ctx, in.AnalysisID)
	if err == nil && sv.Result != nil {
		n.Result = *sv.Result
		return n, nil
	}
	if err != nil && !errors.Is(err, openrecall.ErrNotFound) && !errors.Is(err, openrecall.ErrIntegrity) {
		return n, fmt.Errorf("read the result of analysis %s: %w", in.AnalysisID, err)
	}
	if kept != nil {
		n.Result = *kept
		return n, nil
	}
	switch {
	case err != nil && errors.Is(err, openrecall.ErrNotFound):
		return n, &unreadableError{fmt.Sprintf("the result of analysis %s is not stored", in.AnalysisID)}
	case err != nil:
		return n, &unreadableError{fmt.Sprintf("the result of analysis %s is not served: %v", in.AnalysisID, err)}
	case sv.Pruned:
		return n, &unreadableError{fmt.Sprintf("the result of analysis %s was pruned after the retention (%s)",
			in.AnalysisID, sv.PrunedAt.UTC().Format(time.RFC3339))}
	case !sv.Done:
		return n, &unreadableError{fmt.Sprintf("analysis %s has no stored result", in.AnalysisID)}
	}
	return n, &unreadableError{fmt.Sprintf("the result of analysis %s is withheld (integrity %q)", in.AnalysisID, sv.Integrity)}
}

type nopDispatchObserver struct{}

func (nopDispatchObserver) Sent(string, string, time.Duration) {}
func (nopDispatchObserver) Failed(string, bool)                {}
func (nopDispatchObserver) Dead(string)                        {}
func (nopDispatchObserver) LeaseLost(string)                   {}

// noteOf is the note of the memory a person's decision retained, "" when
// the decision retained none or the memory has none: an update says what
// the person wrote. A memory that cannot be read leaves the note out
// rather than holding the update back.
func (d *Dispatcher) noteOf(ctx context.Context, memoryID string) string {
	if memoryID == "" {
		return ""
	}
	inc, err := d.cfg.Reader.Get(ctx, memoryID)
	if err != nil {
		d.log.Warn("read the memory of a decision for its note", zap.String("memory_id", memoryID), zap.Error(err))
		return ""
	}
	return inc.Note
}
