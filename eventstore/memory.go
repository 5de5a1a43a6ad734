package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Memory is a Store held in memory, for fast tests of code that appends and
// reads events. It meets the whole Store contract (eventstore/storetest),
// keeps nothing across processes and never frees an event. Commit positions
// count appends and Prepare positions count events, so the log is in append
// order and nothing is ever held back. Data and Metadata come back byte for
// byte as appended, where Postgres returns them normalised as jsonb, so
// compare them as JSON. It is safe for concurrent use.
type Memory struct {
	appendSignal

	mu      sync.Mutex
	log     []RecordedEvent
	streams map[string][]int  // each stream's events, as indexes into log
	byID    map[uuid.UUID]int // every event, as its index into log
	commits uint64
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty Memory store.
func NewMemory() *Memory {
	return &Memory{streams: make(map[string][]int), byID: make(map[uuid.UUID]int)}
}

// AppendToStream appends events atomically to stream. See Store.
func (m *Memory) AppendToStream(ctx context.Context, stream string, expected ExpectedRevision, events ...EventData) (AppendResult, error) {
	if err := ctx.Err(); err != nil {
		return AppendResult{}, fmt.Errorf("append to stream %s: %w", stream, err)
	}
	prepared, err := prepareEvents(stream, events)
	if err != nil {
		return AppendResult{}, err
	}
	m.mu.Lock()
	before := len(m.log)
	res, err := m.appendLocked(stream, expected, prepared)
	wrote := len(m.log) > before
	m.mu.Unlock()
	if wrote {
		m.notify(events)
	}
	return res, err
}

// AppendToStreams appends to several streams atomically. See Store.
func (m *Memory) AppendToStreams(ctx context.Context, appends ...StreamAppend) ([]AppendResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("append to %d streams: %w", len(appends), err)
	}
	if err := checkParts(appends); err != nil {
		return nil, err
	}
	prepared := make([][]EventData, len(appends))
	for i, a := range appends {
		events, err := prepareEvents(a.Stream, a.Events)
		if err != nil {
			return nil, err
		}
		prepared[i] = events
	}
	if err := checkPartIDs(appends, prepared); err != nil {
		return nil, err
	}

	m.mu.Lock()
	results := make([]AppendResult, len(appends))
	retried := make([]bool, len(appends))
	var conflicts []error
	for i, a := range appends {
		res, again, err := m.retriedLocked(a.Stream, prepared[i])
		if err != nil {
			m.mu.Unlock()
			return nil, err
		}
		if again {
			results[i], retried[i] = res, true
			continue
		}
		revs := m.streams[a.Stream]
		current := m.resultLocked(revs)
		if !satisfies(a.Expected, len(revs) > 0, current.NextExpectedRevision) {
			conflicts = append(conflicts, &WrongExpectedVersionError{Stream: a.Stream, Expected: a.Expected,
				Actual: current.NextExpectedRevision, HasActual: len(revs) > 0})
		}
	}
	if len(conflicts) > 0 {
		m.mu.Unlock()
		return nil, errors.Join(conflicts...)
	}
	var wrote []EventData
	now := time.Now()
	commit := m.commits + 1
	for i, a := range appends {
		if retried[i] {
			continue
		}
		revs := m.streams[a.Stream]
		for _, e := range prepared[i] {
			at := len(m.log)
			m.log = append(m.log, RecordedEvent{
				ID: e.ID, StreamID: a.Stream, Revision: uint64(len(revs)),
				Type: e.Type, Data: e.Data, Metadata: e.Metadata,
				Position:   Position{Commit: commit, Prepare: uint64(at) + 1},
				RecordedAt: now,
			})
			revs = append(revs, at)
			m.byID[e.ID] = at
		}
		m.streams[a.Stream] = revs
		results[i] = m.resultLocked(revs)
		wrote = append(wrote, a.Events...)
	}
	if len(wrote) > 0 {
		m.commits = commit
	}
	m.mu.Unlock()
	if len(wrote) > 0 {
		m.notify(wrote)
	}
	return results, nil
}

// prepareEvents checks and copies the events outside the lock: the caller may
// reuse its buffers after the append.
func prepareEvents(stream string, events []EventData) ([]EventData, error) {
	out := make([]EventData, len(events))
	seen := make(map[uuid.UUID]struct{}, len(events))
	for i, e := range events {
		if e.ID == uuid.Nil {
			e.ID = uuid.New()
		}
		if _, dup := seen[e.ID]; dup {
			return nil, fmt.Errorf("append to stream %s: event %s appears twice in one append: %w", stream, e.ID, ErrDuplicateEventID)
		}
		seen[e.ID] = struct{}{}
		data, meta := orEmptyObject(e.Data), orEmptyObject(e.Metadata)
		if !json.Valid(data) || !json.Valid(meta) {
			return nil, fmt.Errorf("append to stream %s: event %s: %w", stream, e.ID, errNotJSON)
		}
		e.Data, e.Metadata = slices.Clone(data), slices.Clone(meta)
		out[i] = e
	}
	return out, nil
}

var errNotJSON = errors.New("data or metadata is not JSON")

func (m *Memory) appendLocked(stream string, expected ExpectedRevision, events []EventData) (AppendResult, error) {
	if res, retried, err := m.retriedLocked(stream, events); retried || err != nil {
		return res, err
	}
	revs := m.streams[stream]
	current := m.resultLocked(revs)
	hasActual := len(revs) > 0
	if !satisfies(expected, hasActual, current.NextExpectedRevision) {
		return AppendResult{}, &WrongExpectedVersionError{Stream: stream, Expected: expected, Actual: current.NextExpectedRevision, HasActual: hasActual}
	}
	if len(events) == 0 {
		return current, nil
	}
	m.commits++
	now := time.Now()
	for _, e := range events {
		i := len(m.log)
		m.log = append(m.log, RecordedEvent{
			ID: e.ID, StreamID: stream, Revision: uint64(len(revs)),
			Type: e.Type, Data: e.Data, Metadata: e.Metadata,
			Position:   Position{Commit: m.commits, Prepare: uint64(i) + 1},
			RecordedAt: now,
		})
		revs = append(revs, i)
		m.byID[e.ID] = i
	}
	m.streams[stream] = revs
	return m.resultLocked(revs), nil
}

// retriedLocked reports whether events are already stored as one run of
// stream, in order: the same append retried, which succeeds with the
// original result. Any other reuse of a stored id is an error.
func (m *Memory) retriedLocked(stream string, events []EventData) (AppendResult, bool, error) {
	stored := 0
	for _, e := range events {
		if _, ok := m.byID[e.ID]; ok {
			stored++
		}
	}
	if stored == 0 {
		return AppendResult{}, false, nil
	}
	first := m.byID[events[0].ID]
	for i, e := range events {
		at, ok := m.byID[e.ID]
		if !ok || m.log[at].StreamID != stream || m.log[at].Revision != m.log[first].Revision+uint64(i) {
			return AppendResult{}, false, fmt.Errorf("append to stream %s: event %s is not stored as this append: %w", stream, e.ID, ErrDuplicateEventID)
		}
	}
	last := m.log[m.byID[events[len(events)-1].ID]]
	return AppendResult{NextExpectedRevision: last.Revision, Position: last.Position}, true, nil
}

// resultLocked is the state of a stream whose events are at revs.
func (m *Memory) resultLocked(revs []int) AppendResult {
	if len(revs) == 0 {
		return AppendResult{}
	}
	last := m.log[revs[len(revs)-1]]
	return AppendResult{NextExpectedRevision: last.Revision, Position: last.Position}
}

// ReadStream reads up to max events of stream from revision from on. A max
// of zero or less reads to the end of the stream.
func (m *Memory) ReadStream(ctx context.Context, stream string, from uint64, max int) ([]RecordedEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read stream %s: %w", stream, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	revs := m.streams[stream]
	if len(revs) == 0 {
		return nil, fmt.Errorf("read stream %s: %w", stream, ErrStreamNotFound)
	}
	if from >= uint64(len(revs)) {
		return nil, nil
	}
	revs = limit(revs[from:], max)
	out := make([]RecordedEvent, len(revs))
	for i, at := range revs {
		out[i] = cloneEvent(m.log[at])
	}
	return out, nil
}

// ReadAll reads up to max events of the log strictly after from. A max of
// zero or less reads to the end.
func (m *Memory) ReadAll(ctx context.Context, from Position, max int) ([]RecordedEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read all after %s: %w", from, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	start, _ := slices.BinarySearchFunc(m.log, from, func(e RecordedEvent, p Position) int {
		if p.Less(e.Position) {
			return 1
		}
		return -1 // at or before from: skip it
	})
	events := limit(m.log[start:], max)
	out := make([]RecordedEvent, len(events))
	for i, e := range events {
		out[i] = cloneEvent(e)
	}
	return out, nil
}

// ReadAllOfTypes reads up to max events of types after from. See Store.
func (m *Memory) ReadAllOfTypes(ctx context.Context, from Position, max int, types []string) ([]RecordedEvent, Position, error) {
	all, err := m.ReadAll(ctx, from, 0)
	if err != nil {
		return nil, from, err
	}
	var out []RecordedEvent
	reached := from
	for _, e := range all {
		reached = e.Position
		if !slices.Contains(types, e.Type) {
			continue
		}
		out = append(out, e)
		if max > 0 && len(out) == max {
			break
		}
	}
	return out, reached, nil
}

// SubscribeToAll starts a catch-up subscription after from. Every append
// wakes it, so it polls only as a safeguard.
func (m *Memory) SubscribeToAll(ctx context.Context, from Position) (*Subscription, error) {
	return subscribe(ctx, m, from, DefaultSubscriptionPageSize, DefaultPollInterval)
}

func limit[T any](s []T, max int) []T {
	if max > 0 && len(s) > max {
		return s[:max]
	}
	return s
}

// cloneEvent keeps callers that change what they read from changing the
// store.
func cloneEvent(e RecordedEvent) RecordedEvent {
	e.Data, e.Metadata = slices.Clone(e.Data), slices.Clone(e.Metadata)
	return e
}
