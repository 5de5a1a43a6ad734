package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Subscription is a catch-up subscription to the global log: it delivers
// every event after its start position, in log order, each exactly once,
// first the backlog and then new events as they become readable.
//
// Consume Events until it is closed, then call Err. A subscription ends when
// its context ends, when Close is called, or when a read fails; it does not
// retry failed reads, so that the owner restarts it from its own checkpoint.
type Subscription struct {
	events chan RecordedEvent
	cancel context.CancelFunc
	done   chan struct{}
	err    error // written before done is closed
}

// Events delivers the events. It is closed when the subscription ends.
func (s *Subscription) Events() <-chan RecordedEvent { return s.events }

// Err reports why the subscription ended, once Events is closed: nil after
// Close, the context's error when the context ended, or the read error.
// Before the end it returns nil.
func (s *Subscription) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Close ends the subscription and waits until its goroutine has stopped.
// It is safe to call more than once and from any goroutine.
func (s *Subscription) Close() {
	s.cancel()
	<-s.done
}

// logReader is what a subscription needs from a store; it keeps the loop
// independent of Postgres so another Store can reuse it.
type logReader interface {
	ReadAll(ctx context.Context, from Position, max int) ([]RecordedEvent, error)
	Appended(types ...string) (<-chan struct{}, func())
}

// SubscribeToAll starts a catch-up subscription after from. It reads pages
// of SubscriptionPageSize events and, once caught up, waits for an append
// through s or PollInterval, whichever comes first.
func (s *Postgres) SubscribeToAll(ctx context.Context, from Position) (*Subscription, error) {
	poll := s.PollInterval
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	page := s.SubscriptionPageSize
	if page <= 0 {
		page = DefaultSubscriptionPageSize
	}
	return subscribe(ctx, s, from, page, poll)
}

func subscribe(ctx context.Context, r logReader, from Position, page int, poll time.Duration) (*Subscription, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("subscribe to all after %s: %w", from, err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	sub := &Subscription{
		events: make(chan RecordedEvent, page),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	// Registering before the first read means an append that lands during
	// that read still leaves a signal behind: no lost wake-ups.
	wake, stop := r.Appended()
	go func() {
		defer close(sub.done)
		defer close(sub.events)
		defer stop()
		defer cancel()
		err := sub.run(runCtx, r, from, page, poll, wake)
		switch {
		case ctx.Err() != nil:
			sub.err = ctx.Err()
		case errors.Is(err, context.Canceled) && runCtx.Err() != nil:
			sub.err = nil // Close
		default:
			sub.err = err
		}
	}()
	return sub, nil
}

func (s *Subscription) run(ctx context.Context, r logReader, pos Position, page int, poll time.Duration, wake <-chan struct{}) error {
	timer := time.NewTimer(poll)
	defer timer.Stop()
	for {
		batch, err := r.ReadAll(ctx, pos, page)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("subscription: %w", err)
		}
		for _, e := range batch {
			select {
			case s.events <- e:
				pos = e.Position
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if len(batch) == page {
			continue // a full page: there is probably more right away
		}
		timer.Reset(poll)
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
