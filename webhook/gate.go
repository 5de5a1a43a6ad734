package webhook

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The job client (River) of the webhooks role starts only once the
// installation has webhooks. Running, it costs a process some milliseconds
// of CPU a second whatever the deliveries (its completer wakes 20 times a
// second, its elector, scheduler and notifier every few seconds, each
// with its statements: bench/polling/README.md), which on a service
// that polls sites and has no webhooks is a third of its CPU. Until then
// a gate stands in for it: it starts the client when a subscription
// changes in the dispatcher (in this process, before the change is
// projected), and looks every gateLook whether anything else needs it
// (webhooks created while the dispatcher was behind or in another
// process, deliveries to retry or to housekeep, redeliveries the API
// queued). Once started the client runs until the process stops.
//
// Nothing is delayed that River would have done sooner: a delivery is
// queued by the dispatcher, which wakes the gate as soon as it projects
// the webhook it goes to; jobs waiting in the table are fetched when the
// client starts (River's fetch poll was gateLook at most anyway); the
// hourly housekeeping has nothing to do before the first webhook.
const gateLook = 5 * time.Second

// gate starts River's client when the installation first needs it.
type gate struct {
	mu      sync.Mutex
	started bool
	wake    chan struct{}
	stop    context.CancelFunc
	done    chan struct{}
}

// needed reads whether the job client has anything to do or to look
// after: a webhook (its secret is recorded before it is created, its route
// when the dispatcher projects it), a delivery (to retry, redeliver or
// housekeep), a failure streak, or a job not yet finished.
func (s *Service) needed(ctx context.Context) (bool, error) {
	var yes bool
	err := s.parts.DB.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_secrets)
		OR EXISTS (SELECT 1 FROM webhook_routes)
		OR EXISTS (SELECT 1 FROM webhook_deliveries)
		OR EXISTS (SELECT 1 FROM webhook_health)
		OR EXISTS (SELECT 1 FROM river_job WHERE state NOT IN ('completed', 'cancelled', 'discarded'))`).Scan(&yes)
	if err != nil {
		return false, fmt.Errorf("look whether webhooks need the job client: %w", err)
	}
	return yes, nil
}

// startSender starts the job client once; later calls do nothing.
func (s *Service) startSender() error {
	g := &s.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started {
		return nil
	}
	// River runs until Stop, not until a request's or the gate's context
	// ends: attempts in flight get to finish and record themselves.
	if err := s.river.Start(context.Background()); err != nil {
		return fmt.Errorf("start webhook sender: %w", err)
	}
	g.started = true
	s.logger.Info("webhook sender started")
	return nil
}

// wakeGate tells the gate that a subscription is changing: the job client
// starts without waiting for its next look.
func (s *Service) wakeGate() {
	select {
	case s.gate.wake <- struct{}{}:
	default:
	}
}

// runGate starts the job client at once when it is needed, else waits for
// a wake or its next look. A failed look is logged and retried: the sender
// starts late rather than never.
func (s *Service) runGate(ctx context.Context) {
	g := &s.gate
	defer close(g.done)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.wake:
		case <-t.C:
			ok, err := s.needed(ctx)
			if err != nil {
				if ctx.Err() == nil {
					s.logger.Warn("webhook sender gate", "err", err)
				}
				t.Reset(gateLook)
				continue
			}
			if !ok {
				t.Reset(gateLook)
				continue
			}
		}
		if err := s.startSender(); err != nil {
			if ctx.Err() == nil {
				s.logger.Warn("webhook sender gate", "err", err)
			}
			t.Reset(gateLook)
			continue
		}
		return
	}
}

// senderStarted reports whether the job client runs in this process.
func (s *Service) senderStarted() bool {
	s.gate.mu.Lock()
	defer s.gate.mu.Unlock()
	return s.gate.started
}
