// Package commands is the write side: each command loads an aggregate from
// its events, asks the domain to decide, and appends what it decided with an
// optimistic-concurrency check, retrying when another writer got there
// first. Every command goes through one loop, decide.
package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
)

// maxAttempts bounds the retries of a command that keeps losing the race
// for its stream; beyond it the caller gets ErrBusy. Many clients do write
// one stream at once (a bulk of source adds to one feed), so the bound is
// generous and the pauses are jittered to break lock-step retries.
const maxAttempts = 20

// ErrBusy: a command lost the race for its stream maxAttempts times and
// stored nothing; repeating it later is safe.
var ErrBusy = errors.New("too many concurrent changes")

// Result tells the caller where its events landed, so it can wait for the
// projections that read them before answering (read-after-write, D6).
type Result struct {
	Position   eventstore.Position
	EventTypes []string
	// SeenPosition and SeenEventTypes cover stored events a command relied
	// on without appending: a request that decides nothing new answers from
	// state a concurrent request may have stored but not yet projected.
	// Waiting on them too keeps such an answer read-after-write (D6).
	SeenPosition   eventstore.Position
	SeenEventTypes []string
}

// Merge combines the results of several appends made by one request.
func (r Result) Merge(o Result) Result {
	if r.Position.Less(o.Position) {
		r.Position = o.Position
	}
	r.EventTypes = append(r.EventTypes, o.EventTypes...)
	if r.SeenPosition.Less(o.SeenPosition) {
		r.SeenPosition = o.SeenPosition
	}
	r.SeenEventTypes = append(r.SeenEventTypes, o.SeenEventTypes...)
	return r
}

// Empty reports whether nothing was appended.
func (r Result) Empty() bool { return len(r.EventTypes) == 0 }

// Lookups find what requests refer to by id (a siteId, an itemId) as the
// organization sees it. The read model implements them; commands use them
// only to resolve and validate references.
type Lookups interface {
	SourceDetails(ctx context.Context, org, id uuid.UUID) (domain.SourceDetails, error)
	// ItemRef finds an item of a feed of a kind, as the organization sees it.
	ItemRef(ctx context.Context, kind domain.FeedKind, org, feedID, itemID uuid.UUID) (domain.ItemRef, error)
}

// SourceChecker looks a new source up where it lives before it is stored
// (a platform account must exist and be public, api.md 4.3). Its errors
// are the answer: domain errors, or ErrSourceUnavailable.
type SourceChecker interface {
	CheckSource(ctx context.Context, d domain.SourceDetails) error
}

// Handler runs commands against the event store.
type Handler struct {
	store   eventstore.Store
	lookups Lookups
	sources SourceChecker
	now     func() time.Time
	newID   func() uuid.UUID
}

// Option adjusts a Handler.
type Option func(*Handler)

// CheckingSources has new sources checked by c. Without it, platform
// sources are refused as not supported: nothing could look their accounts
// up.
func CheckingSources(c SourceChecker) Option { return func(h *Handler) { h.sources = c } }

// New returns a command handler.
func New(store eventstore.Store, lookups Lookups, opts ...Option) *Handler {
	h := &Handler{store: store, lookups: lookups, now: domain.Now, newID: newID}
	for _, o := range opts {
		o(h)
	}
	return h
}

// WithClock returns a handler that dates what it decides by now instead
// of the wall clock: a test can record a history spread over days.
func (h *Handler) WithClock(now func() time.Time) *Handler {
	c := *h
	c.now = now
	return &c
}

func newID() uuid.UUID { return uuid.Must(uuid.NewV7()) }

type metadata struct {
	SchemaVersion  int       `json:"schemaVersion"`
	OrganizationID uuid.UUID `json:"organizationId,omitempty"`
}

// change is how a command reaches one stream.
type change[A domain.Aggregate] struct {
	stream string
	// org is recorded in the events' metadata.
	org uuid.UUID
	// empty makes the aggregate to apply the stream's events to.
	empty func() A
	// decide returns the events to append, given the current state.
	decide func(A) ([]domain.Event, error)
	// mostlyNew skips the read on the first attempt and appends expecting
	// no stream: one round trip for streams that are usually created by the
	// command (articles, items). A conflict falls back to reading.
	mostlyNew bool
}

// decide is the one load-decide-append loop: it rebuilds the aggregate,
// decides, and appends expecting the stream unchanged since the read,
// retrying on conflicts. It returns the aggregate with the decision applied
// and where it landed; a decision of nothing reports the stored events it
// rests on (Result.Seen) so that the caller still answers read-after-write.
func decide[A domain.Aggregate](ctx context.Context, h *Handler, c change[A]) (A, Result, error) {
	var agg A
	var res Result
	fresh := c.mostlyNew
	err := retry(ctx, func() error {
		agg = c.empty()
		version, seen := 0, Result{}
		if !fresh {
			var err error
			if version, seen, err = h.load(ctx, c.stream, agg); err != nil {
				return err
			}
		}
		fresh = false
		events, err := c.decide(agg)
		if err != nil {
			return err
		}
		if len(events) == 0 {
			res = seen
			return nil
		}
		if res, err = h.append(ctx, c.stream, expectedAfter(version), c.org, events); err != nil {
			return err
		}
		for _, e := range events {
			agg.Apply(e)
		}
		return nil
	})
	return agg, res, err
}

// load applies every event of a stream to agg; a missing stream is empty.
// It returns how many events it applied and a Result whose Seen members
// cover them.
func (h *Handler) load(ctx context.Context, stream string, agg domain.Aggregate) (int, Result, error) {
	var seen Result
	version := 0
	for r, err := range eventstore.Events(ctx, h.store, stream, 1000) {
		if err != nil {
			return 0, Result{}, err
		}
		e, err := domain.DecodeEvent(r.Type, r.Data)
		if err != nil {
			return 0, Result{}, fmt.Errorf("read stream %s: %w", stream, err)
		}
		agg.Apply(e)
		version++
		seen.SeenPosition = r.Position
		if !slices.Contains(seen.SeenEventTypes, r.Type) {
			seen.SeenEventTypes = append(seen.SeenEventTypes, r.Type)
		}
	}
	return version, seen, nil
}

// append stores decided events with the given precondition.
func (h *Handler) append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, org uuid.UUID, events []domain.Event) (Result, error) {
	meta, err := json.Marshal(metadata{SchemaVersion: domain.SchemaVersion, OrganizationID: org})
	if err != nil {
		return Result{}, fmt.Errorf("encode metadata: %w", err)
	}
	data := make([]eventstore.EventData, 0, len(events))
	types := make([]string, 0, len(events))
	for _, e := range events {
		b, err := domain.EncodeEvent(e)
		if err != nil {
			return Result{}, err
		}
		data = append(data, eventstore.EventData{ID: newID(), Type: e.EventType(), Data: b, Metadata: meta})
		types = append(types, e.EventType())
	}
	res, err := h.store.AppendToStream(ctx, stream, expected, data...)
	if err != nil {
		return Result{}, fmt.Errorf("append to %s: %w", stream, err)
	}
	return Result{Position: res.Position, EventTypes: types}, nil
}

// expectedAfter is the precondition for appending to a stream from which
// version events were read.
func expectedAfter(version int) eventstore.ExpectedRevision {
	if version == 0 {
		return eventstore.NoStream()
	}
	return eventstore.Exact(uint64(version - 1))
}

// retry runs attempt until it does not fail with a concurrency conflict.
func retry(ctx context.Context, attempt func() error) error {
	var err error
	for i := 0; i < maxAttempts; i++ {
		if err = attempt(); !errors.Is(err, eventstore.ErrWrongExpectedVersion) {
			return err
		}
		pause := time.Duration(1+rand.IntN(5*min(i+1, 10))) * time.Millisecond
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
	return fmt.Errorf("%w: gave up after %d attempts: %w", ErrBusy, maxAttempts, err)
}
