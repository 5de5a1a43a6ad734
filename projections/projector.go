// Package projections is the projection engine: it turns the global event
// log into read models. It owns the Projector contract (Handler, On), the
// Subscriber that reads the event store in batches, the Runner, rebuilds
// and read-model versions, the read-after-write Waiter and the shared write
// helpers (Exec, ExecArrays, Deferred). The read models themselves live one
// package each under readmodel/; service/projectors lists them.
//
// A batch's read-model writes and the projector's checkpoint commit in one
// transaction, so a crash or restart never applies an event twice or loses
// one.
package projections

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
)

// Projector keeps one read model up to date.
type Projector interface {
	// Name identifies the projector: its checkpoint and its rebuild command.
	Name() string
	// Version is the version of the read model it builds, from 1. Bump it
	// with any change after which the read model built so far is wrong:
	// what a handler writes, or a table's columns. On start, `feedsvc
	// serve` rebuilds a read model whose stored version is older, in a
	// shadow copy while the old one serves (RebuildOutdated).
	Version() int
	// Tables are the read-model tables it owns, recreated by a rebuild.
	// Every table has one owner.
	Tables() []string
	// Handlers say what it does with each event type it reads. The types
	// it subscribes to are derived from them (EventTypes), so a handled
	// type can never be missing from the subscription. Handlers must derive
	// everything from the event (never the clock), so a rebuild gives the
	// same read model; they write through db, the batch's transaction.
	Handlers() []Handler
}

// Handler applies the events of some types.
type Handler struct {
	eventTypes []string
	project    func(ctx context.Context, db bun.IDB, env Envelope) error
}

// On handles the events of Go type E: every stored name E is read from
// (one per feed kind for feed events).
func On[E domain.Event](f func(ctx context.Context, db bun.IDB, e E) error) Handler {
	return OnEnvelope(func(ctx context.Context, db bun.IDB, e E, _ Envelope) error { return f(ctx, db, e) })
}

// OnEnvelope is On for handlers that also need where the event sits in the
// log: its id, position or recording time.
func OnEnvelope[E domain.Event](f func(ctx context.Context, db bun.IDB, e E, env Envelope) error) Handler {
	types := domain.EventTypesOf(reflect.TypeFor[E]())
	if len(types) == 0 {
		// A programming error caught when the projector is built.
		panic(fmt.Sprintf("projections.On: %s is not a registered event type", reflect.TypeFor[E]()))
	}
	return Handler{eventTypes: types, project: func(ctx context.Context, db bun.IDB, env Envelope) error {
		return f(ctx, db, env.Event.(E), env)
	}}
}

// OnEvery handles every registered event type, with its envelope.
func OnEvery(f func(ctx context.Context, db bun.IDB, env Envelope) error) Handler {
	return Handler{eventTypes: domain.EventTypeNames(), project: f}
}

// EventTypes are the stored event names p reads, derived from its
// handlers; the others only move its checkpoint. Read-after-write waits
// only for projectors that read what a command wrote.
func EventTypes(p Projector) []string {
	var out []string
	for _, h := range p.Handlers() {
		for _, t := range h.eventTypes {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}

// dispatcher routes an envelope to p's handler of its type.
type dispatcher map[string]func(ctx context.Context, db bun.IDB, env Envelope) error

func dispatcherFor(p Projector) dispatcher {
	d := dispatcher{}
	for _, h := range p.Handlers() {
		for _, t := range h.eventTypes {
			d[t] = h.project
		}
	}
	return d
}

func (d dispatcher) project(ctx context.Context, db bun.IDB, env Envelope) error {
	f, ok := d[env.Event.EventType()]
	if !ok {
		return nil
	}
	return f(ctx, db, env)
}

// apply projects a batch's events in log order with the handlers of the
// projector named name, through tx, then flushes the writes they deferred
// (Deferred); the first failing event fails the batch. A live batch's
// handler and a rebuild's writer both apply through it, each in the
// transaction its checkpoint is then written in.
func (d dispatcher) apply(ctx context.Context, tx bun.Tx, name string, events []Envelope) error {
	writes := &deferred{byKey: map[any]BatchWriter{}}
	bctx := context.WithValue(ctx, deferredKey{}, writes)
	for _, env := range events {
		if err := d.project(bctx, tx, env); err != nil {
			return fmt.Errorf("%s: project %s %s at %s: %w", name, env.Event.EventType(), env.EventID, env.Position, err)
		}
	}
	if err := writes.flush(ctx, tx); err != nil {
		return fmt.Errorf("%s: flush batch ending at %s: %w", name, events[len(events)-1].Position, err)
	}
	return nil
}

// Envelope is a decoded event with where it sits in the log.
type Envelope struct {
	Event      domain.Event
	EventID    string
	StreamID   string
	Revision   uint64
	Position   eventstore.Position
	RecordedAt time.Time
}
