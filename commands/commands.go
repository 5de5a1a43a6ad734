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
	"github.com/feedsvc/feedsvc/domain/stream"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/idempotency"
)

// maxAttempts bounds the retries of a command that keeps losing the race
// for its stream; beyond it the caller gets ErrBusy. Many clients do write
// one stream at once (a bulk of source adds to one feed), so the bound is
// generous and the pauses are jittered to break lock-step retries.
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
	now     func() time.Time
	sources SourceChecker
	// copies finds the items articles are copies of (copies.go); nil
	// when copies are not looked for.
	copies *copyGuard
	// feedLocks serialises copy decisions of a feed across processes
	// (DecidingCopiesAlone); nil leaves the in-process guard alone.
	feedLocks FeedLocks
	// happeningCopies finds the event items happenings are copies of
	// (happeningcopies.go); nil when they are not looked for.
	happeningCopies *happeningGuard
	// scope is the idempotent request the commands run as; zero outside
	// one.
	scope idempotency.Scope
}

// Option adjusts a Handler.
type Option func(*Handler)

// CheckingSources has new sources checked by c. Without it, platform
// sources are refused as not supported: nothing could look their accounts
// up.
func CheckingSources(c SourceChecker) Option { return func(h *Handler) { h.sources = c } }

// New returns a command handler.
func New(store eventstore.Store, lookups Lookups, opts ...Option) *Handler {
	h := &Handler{store: store, lookups: lookups, now: domain.Now}
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

// Idempotent returns a handler whose commands run as the idempotent
// request s (one Idempotency-Key's): the ids they mint and the events they
// append derive from s, and a stream already holding the request's events
// is not decided on again (see decide). The zero Scope gives a handler
// like h.
func (h *Handler) Idempotent(s idempotency.Scope) *Handler {
	c := *h
	c.scope = s
	return &c
}

// newID mints the id of something new a command makes. In an idempotent
// request it is derived from the request's key and purpose, so a rerun of
// the request names the same resource.
func (h *Handler) newID(purpose string) uuid.UUID {
	return h.scope.NewID(purpose)
}

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
//
// In an idempotent request (Idempotent) the events' ids derive from the
// request's key (see append), and a stream already holding the request's
// events is not decided on again: see rerun.
func decide[A domain.Aggregate](ctx context.Context, h *Handler, c change[A]) (A, Result, error) {
	var agg A
	var res Result
	idempotent := h.scope.Idempotent()
	// A rerun must read the stream to find its events, so it never takes
	// the no-read shortcut.
	fresh := c.mostlyNew && !idempotent
	err := retry(ctx, func() error {
		agg = c.empty()
		var recs []stream.Recorded
		if !fresh {
			var err error
			if recs, err = stream.Load(ctx, h.store, c.stream); err != nil {
				return err
			}
		}
		fresh = false
		if idempotent {
			if at, n := h.scope.Stored(c.stream, eventIDs(recs)); n > 0 {
				res = rerun(agg, c, recs[:at], recs[at:at+n])
				return nil
			}
		}
		seen := apply(agg, recs)
		events, err := c.decide(agg)
		if err != nil {
			return err
		}
		if len(events) == 0 {
			res = seen
			return nil
		}
		if res, err = h.append(ctx, c.stream, expectedAfter(len(recs)), c.org, events); err != nil {
			return err
		}
		for _, e := range events {
			agg.Apply(e)
		}
		return nil
	})
	return agg, res, err
}

// rerun answers for a stream to which an earlier run of the same
// idempotent request already appended mine (a run whose answer was a 5xx
// or never recorded: its process died). Nothing is appended again. The
// decision is made again on the state that run saw (before), for what
// callers note while deciding (whether a record was new, say), and then
// the stored events, not the new decision, are applied: the aggregate is
// exactly as that run left it, later changes by others aside, and the
// caller waits for mine to be visible as it would have.
func rerun[A domain.Aggregate](agg A, c change[A], before, mine []stream.Recorded) Result {
	apply(agg, before)
	_, _ = c.decide(agg) // decided on this state once already: same outcome
	apply(agg, mine)
	res := Result{Position: mine[len(mine)-1].Position}
	for _, r := range mine {
		if !slices.Contains(res.EventTypes, r.Type) {
			res.EventTypes = append(res.EventTypes, r.Type)
		}
	}
	return res
}

// apply folds recs into agg and returns a Result whose Seen members cover
// them.
func apply(agg domain.Aggregate, recs []stream.Recorded) Result {
	var seen Result
	for _, r := range recs {
		agg.Apply(r.Event)
		seen.SeenPosition = r.Position
		if !slices.Contains(seen.SeenEventTypes, r.Type) {
			seen.SeenEventTypes = append(seen.SeenEventTypes, r.Type)
		}
	}
	return seen
}

func eventIDs(recs []stream.Recorded) []uuid.UUID {
	ids := make([]uuid.UUID, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	return ids
}

// append stores decided events with the given precondition. In an
// idempotent request their ids derive from the request's key and the
// stream: a retried append is then the event store's idempotent no-op, and
// a rerun of the request recognises them (decide).
func (h *Handler) append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, org uuid.UUID, events []domain.Event) (Result, error) {
	data, types, err := h.encode(stream, org, events)
	if err != nil {
		return Result{}, err
	}
	res, err := h.store.AppendToStream(ctx, stream, expected, data...)
	if err != nil {
		return Result{}, fmt.Errorf("append to %s: %w", stream, err)
	}
	return Result{Position: res.Position, EventTypes: types}, nil
}

// encode turns decided events into what the store appends to stream, and
// lists their types.
func (h *Handler) encode(stream string, org uuid.UUID, events []domain.Event) ([]eventstore.EventData, []string, error) {
	meta, err := json.Marshal(metadata{SchemaVersion: domain.SchemaVersion, OrganizationID: org})
	if err != nil {
		return nil, nil, fmt.Errorf("encode metadata: %w", err)
	}
	data := make([]eventstore.EventData, 0, len(events))
	types := make([]string, 0, len(events))
	for i, e := range events {
		b, err := domain.EncodeEvent(e)
		if err != nil {
			return nil, nil, err
		}
		id, ok := h.scope.EventID(stream, i)
		if !ok {
			id = uuid.Must(uuid.NewV7())
		}
		data = append(data, eventstore.EventData{ID: id, Type: e.EventType(), Data: b, Metadata: meta})
		types = append(types, e.EventType())
	}
	return data, types, nil
}

// decideAll is decide for changes to several streams whose decisions are
// appended together, in one multi-stream append (AppendToStreams): they
// commit at once, in one transaction however many streams they touch,
// which is what makes recording many articles or items cheap. Each change
// is decided on its own stream as decide would, and the append expects
// every stream unchanged since it was read; a conflict on some streams
// appends nothing, and the attempt decides again, reading the conflicting
// streams (a mostlyNew stream is not read until it conflicts). Changes to
// one stream named twice are decided one after the other, in order. In an
// idempotent request each change goes through decide: a rerun must find
// its events stream by stream.
func decideAll[A domain.Aggregate](ctx context.Context, h *Handler, cs []change[A]) ([]A, []Result, error) {
	aggs := make([]A, len(cs))
	results := make([]Result, len(cs))
	if h.scope.Idempotent() {
		for i, c := range cs {
			var err error
			if aggs[i], results[i], err = decide(ctx, h, c); err != nil {
				return nil, nil, err
			}
		}
		return aggs, results, nil
	}
	// Rounds of changes whose streams differ: a stream named again waits
	// for the next round.
	for rest := indexes(len(cs)); len(rest) > 0; {
		var round, later []int
		named := make(map[string]bool, len(rest))
		for _, i := range rest {
			if named[cs[i].stream] {
				later = append(later, i)
				continue
			}
			named[cs[i].stream] = true
			round = append(round, i)
		}
		if err := decideRound(ctx, h, cs, round, aggs, results); err != nil {
			return nil, nil, err
		}
		rest = later
	}
	return aggs, results, nil
}

func indexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// decideRound decides and appends the changes at round, whose streams
// differ, filling their aggregates and results.
func decideRound[A domain.Aggregate](ctx context.Context, h *Handler, cs []change[A], round []int, aggs []A, results []Result) error {
	load := make(map[string]bool, len(round))
	for _, i := range round {
		load[cs[i].stream] = !cs[i].mostlyNew
	}
	return retry(ctx, func() error {
		var (
			parts   []eventstore.StreamAppend
			decided = make(map[int][]domain.Event, len(round))
		)
		for _, i := range round {
			c := cs[i]
			agg := c.empty()
			var recs []stream.Recorded
			if load[c.stream] {
				var err error
				if recs, err = stream.Load(ctx, h.store, c.stream); err != nil {
					return err
				}
			}
			seen := apply(agg, recs)
			events, err := c.decide(agg)
			if err != nil {
				return err
			}
			aggs[i] = agg
			if len(events) == 0 {
				results[i] = seen
				continue
			}
			data, types, err := h.encode(c.stream, c.org, events)
			if err != nil {
				return err
			}
			parts = append(parts, eventstore.StreamAppend{Stream: c.stream, Expected: expectedAfter(len(recs)), Events: data})
			decided[i] = events
			results[i] = Result{EventTypes: types}
		}
		if len(parts) == 0 {
			return nil
		}
		res, err := h.store.AppendToStreams(ctx, parts...)
		if err != nil {
			conflicts := eventstore.Conflicts(err)
			for _, c := range conflicts {
				load[c.Stream] = true
			}
			if len(conflicts) == 0 && errors.Is(err, eventstore.ErrWrongExpectedVersion) {
				// Lost races without a named stream: read them all.
				for s := range load {
					load[s] = true
				}
			}
			return fmt.Errorf("append to %d streams: %w", len(parts), err)
		}
		k := 0
		for _, i := range round {
			events, ok := decided[i]
			if !ok {
				continue
			}
			results[i].Position = res[k].Position
			k++
			for _, e := range events {
				aggs[i].Apply(e)
			}
		}
		return nil
	})
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
