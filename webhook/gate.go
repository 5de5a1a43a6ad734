package webhook

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river"
)

// The job client (River) of the webhooks role runs only while it has jobs
// to work: deliveries to make or retry, and the hourly housekeeping.
// Running, it costs a process some milliseconds of CPU a second whatever
// the deliveries (its completer wakes 20 times a second, its elector,
// scheduler and notifier every few seconds, each with its statements;
// measured at 5.3 against 0.7 ms a second for an idle process without it,
// bench/freshness/README.md), which on a service that polls sites and
// sends a few webhooks an hour is a third of its CPU. A gate stands in for
// it while it is stopped:
//   - the dispatcher wakes it when it queues deliveries (in this process);
//     the gate starts the client once the queueing transaction has
//     committed, so the client's first fetch finds the jobs;
//   - it looks every look interval (at most gateLook) for jobs anything
//     else queued: redeliveries the API queued in another process, jobs a
//     stopped process left;
//   - once an hour it queues the housekeeping (unique for the hour across
//     processes), which starts the client too.
//
// The client stops once no job has been waiting, retrying or running for
// Config.SenderIdle (default DefaultSenderIdle): a retry waiting for its
// time keeps it running, so River's scheduler, rescuer and cleaner run
// whenever there is anything for them (the cleaner too at each start, as
// River's maintenance starts with a pass).
const gateLook = 5 * time.Second

// DefaultSenderIdle is how long the job client runs with no job before the
// gate stops it: long enough that a crawl's deliveries, which come in
// bursts of one poll, start it once.
const DefaultSenderIdle = 30 * time.Second

// commitWait bounds how long the gate, woken by the dispatcher, waits for
// the queueing transaction's jobs to become visible before it gives up
// (the transaction rolled back; the next batch queues them again).
const commitWait = 2 * time.Second

// gate runs River's client while it has work.
type gate struct {
	mu      sync.Mutex
	started bool
	wake    chan struct{}
	stop    context.CancelFunc
	done    chan struct{}
	// housekept is the hour this process last queued the housekeeping.
	housekept time.Time
}

// look is how often the gate looks for jobs, and for how long the client
// has had none.
func (s *Service) look() time.Duration { return min(gateLook, s.cfg.SenderIdle/3) }

// pendingJobs reads whether any job is waiting, retrying or running.
func (s *Service) pendingJobs(ctx context.Context) (bool, error) {
	var yes bool
	err := s.parts.DB.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM river_job
		WHERE state NOT IN ('completed', 'cancelled', 'discarded'))`).Scan(&yes)
	if err != nil {
		return false, fmt.Errorf("look for webhook jobs: %w", err)
	}
	return yes, nil
}

// housekeepable reads whether the installation has anything the
// housekeeping looks after: a secret, a webhook, a delivery or a failure
// streak. An installation that never had a webhook queues no housekeeping.
func (s *Service) housekeepable(ctx context.Context) (bool, error) {
	var yes bool
	err := s.parts.DB.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_secrets)
		OR EXISTS (SELECT 1 FROM webhook_routes)
		OR EXISTS (SELECT 1 FROM webhook_deliveries)
		OR EXISTS (SELECT 1 FROM webhook_health)`).Scan(&yes)
	if err != nil {
		return false, fmt.Errorf("look whether webhooks need housekeeping: %w", err)
	}
	return yes, nil
}

// queueHousekeeping queues the hour's housekeeping once per hour of this
// process's clock; River keeps it to one job an hour across processes.
func (s *Service) queueHousekeeping(ctx context.Context) error {
	hour := s.cfg.Now().Truncate(time.Hour)
	if s.gate.housekept.Equal(hour) {
		return nil
	}
	ok, err := s.housekeepable(ctx)
	if err != nil || !ok {
		return err
	}
	if _, err := s.river.Insert(ctx, housekeepArgs{}, &river.InsertOpts{
		Queue: queueName, UniqueOpts: river.UniqueOpts{ByPeriod: time.Hour},
	}); err != nil {
		return fmt.Errorf("queue webhook housekeeping: %w", err)
	}
	s.gate.housekept = hour
	return nil
}

// startSender starts the job client unless it runs.
func (s *Service) startSender() error {
	g := &s.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started {
		return nil
	}
	// River runs until the gate or Stop stops it, not until a request's
	// or the gate's context ends: attempts in flight get to finish and
	// record themselves.
	if err := s.river.Start(context.Background()); err != nil {
		return fmt.Errorf("start webhook sender: %w", err)
	}
	g.started = true
	s.logger.Debug("webhook sender started")
	return nil
}

// stopSender stops the job client if it runs, letting attempts in flight
// finish for a while, then cancelling them (a cancelled attempt is
// retried later, like a failed one).
func (s *Service) stopSender(ctx context.Context) error {
	g := &s.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.started {
		return nil
	}
	soft, cancel := context.WithTimeout(ctx, s.cfg.AttemptTimeout+2*time.Second)
	defer cancel()
	err := s.river.Stop(soft)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.river.StopAndCancel(ctx)
	}
	if err != nil {
		return fmt.Errorf("stop webhook sender: %w", err)
	}
	g.started = false
	s.logger.Debug("webhook sender stopped")
	return nil
}

// wakeGate tells the gate that deliveries are being queued: the job
// client starts once they are committed, without waiting for a look.
func (s *Service) wakeGate() {
	select {
	case s.gate.wake <- struct{}{}:
	default:
	}
}

// runGate starts the job client when it has jobs and stops it when it has
// had none for SenderIdle. A failed look is logged and tried again at the
// next: the sender starts late rather than never.
func (s *Service) runGate(ctx context.Context) {
	g := &s.gate
	defer close(g.done)
	t := time.NewTimer(0)
	defer t.Stop()
	var idleSince time.Time
	warn := func(err error) {
		if err != nil && ctx.Err() == nil {
			s.logger.Warn("webhook sender gate", "err", err)
		}
	}
	for {
		woken := false
		select {
		case <-ctx.Done():
			return
		case <-g.wake:
			woken = true
		case <-t.C:
		}
		if woken && s.senderStarted() {
			// The running client hears of the jobs itself (River's
			// notifications): a wake only says it is not idle. Looking
			// here would cost a busy sender a query per queued batch,
			// and the commit wait below, once its jobs were done, 200.
			idleSince = time.Time{}
			continue
		}
		warn(s.queueHousekeeping(ctx))
		pending, err := s.pendingJobs(ctx)
		// Woken by the dispatcher before its transaction committed: wait
		// for its jobs, so that the client's first fetch finds them.
		for deadline := time.Now().Add(commitWait); woken && err == nil && !pending && time.Now().Before(deadline); {
			sleep(ctx, 10*time.Millisecond)
			pending, err = s.pendingJobs(ctx)
		}
		switch {
		case err != nil:
			warn(err)
		case pending:
			idleSince = time.Time{}
			warn(s.startSender())
		case !s.senderStarted():
		case idleSince.IsZero():
			idleSince = time.Now()
		case time.Since(idleSince) >= s.cfg.SenderIdle:
			idleSince = time.Time{}
			warn(s.stopSender(ctx))
		}
		if !woken {
			t.Reset(s.look())
		}
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// senderStarted reports whether the job client runs in this process.
func (s *Service) senderStarted() bool {
	s.gate.mu.Lock()
	defer s.gate.mu.Unlock()
	return s.gate.started
}
