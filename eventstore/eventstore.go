// Package eventstore keeps the service's domain events: named streams with
// optimistic concurrency, and one ordered global log that subscribers read
// from a position without ever skipping an event.
//
// The API is shaped like EventStoreDB's client (streams, expected revisions,
// a {Commit, Prepare} position, catch-up reads of $all) so that an adapter
// for a real EventStoreDB can replace the Postgres implementation later.
package eventstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Position is a point in the global log. Events are ordered by Commit and
// then by Prepare; what the numbers are belongs to the implementation. In
// Postgres, Commit is the transaction id (xid8) of the appending transaction
// and Prepare a sequence number inside the log: ordering by commit
// transaction and reading only below the oldest running transaction is what
// makes the log gap-free for readers, even when appends commit out of order.
// Memory counts appends and events.
type Position struct {
	Commit  uint64
	Prepare uint64
}

// Start is the position before the first event.
var Start = Position{}

// Less reports whether p comes strictly before o in the global log.
func (p Position) Less(o Position) bool {
	if p.Commit != o.Commit {
		return p.Commit < o.Commit
	}
	return p.Prepare < o.Prepare
}

func (p Position) String() string { return fmt.Sprintf("%d/%d", p.Commit, p.Prepare) }

// ParsePosition reads a position as String writes it: "commit/prepare".
func ParsePosition(s string) (Position, error) {
	c, pr, ok := strings.Cut(s, "/")
	commit, err1 := strconv.ParseUint(c, 10, 64)
	prepare, err2 := strconv.ParseUint(pr, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return Position{}, fmt.Errorf("position %q: want COMMIT/PREPARE, two whole numbers", s)
	}
	return Position{Commit: commit, Prepare: prepare}, nil
}

// ExpectedRevision is the optimistic-concurrency precondition of an append.
type ExpectedRevision struct {
	kind     revisionKind
	revision uint64
}

type revisionKind int

const (
	kindAny revisionKind = iota
	kindNoStream
	kindStreamExists
	kindExact
)

// Any appends whatever the stream's state.
func Any() ExpectedRevision { return ExpectedRevision{kind: kindAny} }

// NoStream appends only if the stream has no events yet.
func NoStream() ExpectedRevision { return ExpectedRevision{kind: kindNoStream} }

// StreamExists appends only if the stream has at least one event.
func StreamExists() ExpectedRevision { return ExpectedRevision{kind: kindStreamExists} }

// Exact appends only if the stream's last event has this revision
// (revisions start at 0).
func Exact(revision uint64) ExpectedRevision {
	return ExpectedRevision{kind: kindExact, revision: revision}
}

// IsAny, IsNoStream, IsStreamExists and Revision let implementations inspect
// the precondition without exposing its representation.
func (e ExpectedRevision) IsAny() bool          { return e.kind == kindAny }
func (e ExpectedRevision) IsNoStream() bool     { return e.kind == kindNoStream }
func (e ExpectedRevision) IsStreamExists() bool { return e.kind == kindStreamExists }

// Revision returns the exact revision and true when the precondition is Exact.
func (e ExpectedRevision) Revision() (uint64, bool) { return e.revision, e.kind == kindExact }

func (e ExpectedRevision) String() string {
	switch e.kind {
	case kindNoStream:
		return "no-stream"
	case kindStreamExists:
		return "stream-exists"
	case kindExact:
		return fmt.Sprintf("%d", e.revision)
	default:
		return "any"
	}
}

// ErrWrongExpectedVersion is matched (errors.Is) by every
// *WrongExpectedVersionError.
var ErrWrongExpectedVersion = errors.New("wrong expected version")

// ErrDuplicateEventID is matched (errors.Is) by the error of an append that
// reuses an event ID stored elsewhere: in another stream, or in this stream
// but not as the same append retried.
var ErrDuplicateEventID = errors.New("event id already stored")

// ErrStreamNotFound answers reads of a stream that has no events.
var ErrStreamNotFound = errors.New("stream not found")

// WrongExpectedVersionError is the typed concurrency conflict of an append.
type WrongExpectedVersionError struct {
	Stream   string
	Expected ExpectedRevision
	// Actual is the stream's current last revision; HasActual is false when
	// the stream does not exist.
	Actual    uint64
	HasActual bool
}

func (e *WrongExpectedVersionError) Error() string {
	actual := "no stream"
	if e.HasActual {
		actual = fmt.Sprintf("%d", e.Actual)
	}
	return fmt.Sprintf("append to stream %q: expected revision %s, actual %s", e.Stream, e.Expected, actual)
}

func (e *WrongExpectedVersionError) Is(target error) bool { return target == ErrWrongExpectedVersion }

// EventData is an event to append. ID makes appends idempotent: appending
// events whose IDs are already stored, in the same stream and order, is a
// no-op that succeeds with the original result; reusing an ID any other way
// fails with ErrDuplicateEventID. The zero ID gets a random one.
type EventData struct {
	ID       uuid.UUID
	Type     string
	Data     []byte // JSON; empty is stored as {}
	Metadata []byte // JSON, optional; empty is stored as {}
}

// RecordedEvent is an event as stored.
type RecordedEvent struct {
	ID         uuid.UUID
	StreamID   string
	Revision   uint64
	Type       string
	Data       []byte
	Metadata   []byte
	Position   Position
	RecordedAt time.Time
}

// AppendResult describes the stream after a successful append.
type AppendResult struct {
	// NextExpectedRevision is the revision of the stream's last event.
	NextExpectedRevision uint64
	// Position is the global position of the last appended event.
	Position Position
}

// StreamAppend is one stream's part of AppendToStreams: its events and
// the expectation they are appended under.
type StreamAppend struct {
	Stream   string
	Expected ExpectedRevision
	Events   []EventData
}

// ErrInvalidAppend is matched (errors.Is) by the error of an
// AppendToStreams call that is malformed: a part without events, or a
// stream named twice.
var ErrInvalidAppend = errors.New("invalid multi-stream append")

// Conflicts returns every stream conflict an append error holds: the
// *WrongExpectedVersionError of AppendToStream, or each one of a failed
// AppendToStreams. Nil when err is no conflict.
func Conflicts(err error) []*WrongExpectedVersionError {
	var out []*WrongExpectedVersionError
	var walk func(error)
	walk = func(e error) {
		switch x := e.(type) {
		case nil:
		case *WrongExpectedVersionError:
			out = append(out, x)
		case interface{ Unwrap() []error }:
			for _, inner := range x.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			walk(x.Unwrap())
		}
	}
	walk(err)
	return out
}

// Store is the event store.
type Store interface {
	// AppendToStream appends events atomically to one stream. With no
	// events it only checks the expectation and returns the stream's
	// current state (the zero AppendResult for a stream without events).
	AppendToStream(ctx context.Context, stream string, expected ExpectedRevision, events ...EventData) (AppendResult, error)
	// AppendToStreams appends to several streams at once, each under its
	// own expectation, atomically: every part is stored or none is (as
	// KurrentDB's multi-stream append). The events of all parts commit
	// together and follow the parts' order in the global log; the results
	// are in the parts' order. Each part names a different stream and
	// has at least one event (else ErrInvalidAppend). A part whose events
	// are all stored already, as one append of its stream in that order,
	// is that append retried and succeeds with the stored result, as with
	// AppendToStream; reusing event ids any other way fails with
	// ErrDuplicateEventID. When expectations fail, nothing is written and
	// the error matches ErrWrongExpectedVersion; Conflicts lists every
	// part that failed.
	AppendToStreams(ctx context.Context, appends ...StreamAppend) ([]AppendResult, error)
	// ReadStream reads up to max events of a stream from revision from on,
	// in revision order. ErrStreamNotFound when the stream has no events.
	ReadStream(ctx context.Context, stream string, from uint64, max int) ([]RecordedEvent, error)
	// ReadAll reads up to max events of the global log strictly after from,
	// in log order. It returns only events that no later read can precede:
	// an event committed out of order is returned after, never instead of,
	// the events before it.
	ReadAll(ctx context.Context, from Position, max int) ([]RecordedEvent, error)
	// ReadAllOfTypes is ReadAll for a reader of some event types only (as
	// EventStoreDB's server-side filters): up to max events of those types
	// strictly after from, in log order, and the position the read
	// reached, from which the reader goes on. That is the last event
	// returned when there are max of them; otherwise the last event of any
	// type the read passed (from when it passed none), so that a reader of
	// rare types moves past the others without reading them.
	ReadAllOfTypes(ctx context.Context, from Position, max int, types []string) ([]RecordedEvent, Position, error)
	// SubscribeToAll is a catch-up subscription: every event after from, in
	// order, then new events as they are appended, until ctx ends.
	SubscribeToAll(ctx context.Context, from Position) (*Subscription, error)
	// Appended returns a channel that receives a value (coalesced) after each
	// append made through this Store value of an event of one of types (of
	// any event when none are given), so that readers in the same process
	// can wake up without polling, and only for what they read. Call the
	// returned func to stop.
	Appended(types ...string) (<-chan struct{}, func())
}

// checkParts rejects a multi-stream append that names a stream twice or
// has a part without events.
func checkParts(appends []StreamAppend) error {
	streams := make(map[string]bool, len(appends))
	for _, a := range appends {
		if len(a.Events) == 0 {
			return fmt.Errorf("append to stream %s: a part of a multi-stream append without events: %w", a.Stream, ErrInvalidAppend)
		}
		if streams[a.Stream] {
			return fmt.Errorf("append to stream %s: named twice in one multi-stream append: %w", a.Stream, ErrInvalidAppend)
		}
		streams[a.Stream] = true
	}
	return nil
}

// checkPartIDs rejects a multi-stream append that uses one event id in
// two parts; prepared are the parts' events with their ids filled in.
func checkPartIDs(appends []StreamAppend, prepared [][]EventData) error {
	seen := make(map[uuid.UUID]string)
	for i, events := range prepared {
		for _, e := range events {
			if other, dup := seen[e.ID]; dup && other != appends[i].Stream {
				return fmt.Errorf("append to stream %s: event %s is also in stream %s of the same append: %w", appends[i].Stream, e.ID, other, ErrDuplicateEventID)
			}
			seen[e.ID] = appends[i].Stream
		}
	}
	return nil
}
