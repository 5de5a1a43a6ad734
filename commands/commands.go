// Package commands is the write side: each command loads an aggregate from
// its events, asks the domain to decide, and appends what it decided with an
// optimistic-concurrency check, retrying when another writer got there first.
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
// for its stream; beyond it the caller gets the conflict. Many clients do
// write one stream at once (a bulk of source adds to one feed), so the
// bound is generous and the pauses are jittered to break lock-step retries.
const maxAttempts = 20

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
	NewsItemRef(ctx context.Context, org, feedID, itemID uuid.UUID) (ItemRef, error)
}

// Handler runs commands against the event store.
type Handler struct {
	store   eventstore.Store
	lookups Lookups
	now     func() time.Time
	newID   func() uuid.UUID
}

// New returns a command handler.
func New(store eventstore.Store, lookups Lookups) *Handler {
	return &Handler{store: store, lookups: lookups, now: domain.Now, newID: newID}
}

func newID() uuid.UUID { return uuid.Must(uuid.NewV7()) }

type metadata struct {
	SchemaVersion  int       `json:"schemaVersion"`
	OrganizationID uuid.UUID `json:"organizationId,omitempty"`
}

// append stores decided events with the given precondition.
func (h *Handler) append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, org uuid.UUID, events []domain.Event) (Result, error) {
	if len(events) == 0 {
		return Result{}, nil
	}
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

// appendDecided appends what a command decided. When it decided nothing,
// the answer rests on the stored events it read, which a concurrent request
// may have appended without their projections catching up yet: the result
// then carries them (Seen), so the caller still answers read-after-write.
func (h *Handler) appendDecided(ctx context.Context, stream string, expected eventstore.ExpectedRevision, org uuid.UUID, events []domain.Event, seen Result) (Result, error) {
	if len(events) == 0 {
		return seen, nil
	}
	return h.append(ctx, stream, expected, org, events)
}

// readStream loads every event of a stream; a missing stream is empty.
func (h *Handler) readStream(ctx context.Context, stream string) ([]domain.Event, error) {
	events, _, err := h.readStreamSeen(ctx, stream)
	return events, err
}

// readStreamSeen is readStream that also returns a Result whose Seen
// members cover the events read (see Result).
func (h *Handler) readStreamSeen(ctx context.Context, stream string) ([]domain.Event, Result, error) {
	var out []domain.Event
	var seen Result
	var from uint64
	for {
		recs, err := h.store.ReadStream(ctx, stream, from, 1000)
		if errors.Is(err, eventstore.ErrStreamNotFound) {
			return out, seen, nil
		}
		if err != nil {
			return nil, Result{}, fmt.Errorf("read stream %s: %w", stream, err)
		}
		for _, r := range recs {
			e, err := domain.DecodeEvent(r.Type, r.Data)
			if err != nil {
				return nil, Result{}, fmt.Errorf("read stream %s: %w", stream, err)
			}
			out = append(out, e)
			seen.SeenPosition = r.Position
			if !slices.Contains(seen.SeenEventTypes, r.Type) {
				seen.SeenEventTypes = append(seen.SeenEventTypes, r.Type)
			}
		}
		if len(recs) < 1000 {
			return out, seen, nil
		}
		from = recs[len(recs)-1].Revision + 1
	}
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
	return fmt.Errorf("gave up after %d concurrent modifications: %w", maxAttempts, err)
}
