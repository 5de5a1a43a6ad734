// Gap-free global log on Postgres
//
// A bigint sequence alone cannot order a log that concurrent transactions
// append to: positions are handed out when a row is inserted, not when its
// transaction commits, so position 11 can become visible before position 10.
// A reader that has already moved past 10 would skip it forever.
//
// The log is therefore ordered by (transaction_id, global_position), where
// transaction_id is the appending transaction's xid8 (pg_current_xact_id()),
// and ReadAll only returns rows whose transaction_id is below a fence: the
// oldest transaction that may still append to this log. Every appender
// below the fence has finished, so every event it wrote is either visible
// now or never will be; and every transaction that may still append sorts
// at or above it. Readers may lag, but they never skip. All events of one
// append share one xid and become visible atomically, so a page may end in
// the middle of an append without harm.
//
// The fence is the log's own (issue 38; it used to be
// pg_snapshot_xmin(pg_current_snapshot()), the oldest writing transaction
// anywhere on the server, so a long write in another database stalled every
// reader). The function eventstore_fence() (migration
// 20261128170000_events_log_fence) computes it in the reader's statement,
// from its snapshot S, in three steps that run in this order:
//
//  1. the appenders: a trigger on events makes every transaction take a
//     shared advisory lock before its first insert into events, before it
//     has an xid (a transaction that already has one is refused), and it
//     holds the lock to its end, after its commit is visible. pg_locks names
//     the holders in this database;
//  2. their xids, read from the backends (pg_stat_get_activity, with the
//     cached copy dropped) after step 1;
//  3. the xids S shows running (its xip) that have ended since
//     (pg_xact_status).
//
// The fence is the least of S's xmax, the holders' xids and those ended
// xids. Why nothing is skipped: take an event with xid X below the fence
// that S does not show. X is below S's xmax, so X was in S.xip, running
// when S was taken, with its xid and so with the lock. If X held the lock
// at step 1 and still ran at step 2, step 2 read X and the fence is at most
// X. If it had let the lock go by step 1, or ended before step 2, it had
// ended by step 3 and the fence is at most X. An appender without an xid
// yet gets one at or above S's xmax. A transaction that does not append, in
// this database or another, holds no reader back, however long it runs:
// its xid is in no step's set, and it cannot become an appender later (the
// trigger refuses it). A long append, a session left idle in a transaction
// that appended, or a prepared transaction that appended still holds
// readers back, as it must. If the service's role may not see a holder in
// pg_stat_activity (another role appends without pg_read_all_stats), or a
// holder is a prepared transaction, the fence falls back to the oldest
// running transaction's, as before.
//
// pg_locks cannot be read alone for the holders' xids: a committing
// transaction's locks show under two virtual transaction ids, and its
// transactionid lock can outlive its advisory one. A test caught both
// (TestTheFenceNeverPassesAnEventThatShowsUpLater).
//
// The fence holds only where the appends run: on a hot standby, pg_locks
// and pg_stat_activity show none of the primary's appenders, so the log
// must be read on the primary (a read replica may serve read models, not
// ReadAll).
//
// The price: computing the fence reads pg_locks (the lock table, under its
// partition locks) and the backends' states, so reads that run at the same
// time share one computation (fenceshare.go says why that is safe); each
// append runs the trigger.
//
// Appends take one round trip: a single statement reads the stream's last
// revision, checks the expectation and inserts with computed revisions.
// Concurrent appenders that both pass the check collide on the unique
// (stream_id, stream_revision) constraint, which is what makes Exact and
// NoStream safe without locks; everything else (conflict details, the
// idempotency lookup) happens only on the error path.
//
// (This block is deliberately detached from the package clause so that it
// does not become part of the package documentation in eventstore.go.)

package eventstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	// DefaultPollInterval is how often a subscription rereads the log when
	// no in-process append wakes it: appends from other processes, and
	// events held back by the fence, are found this way.
	DefaultPollInterval = 100 * time.Millisecond
	// DefaultSubscriptionPageSize is how many events a subscription reads
	// per query.
	DefaultSubscriptionPageSize = 500

	// anyRetries bounds the retries of an Any/StreamExists append that lost
	// its revision to a concurrent Exact/NoStream append (Any appends among
	// themselves take turns, see AppendToStream); each loss means another
	// append succeeded, so this only runs out under heavy contention.
	anyRetries = 20

	uniqueViolation    = "23505"
	revisionConstraint = "events_stream_revision_key"
	eventIDConstraint  = "events_event_id_key"
)

// Postgres is the Store on the events table. It is safe for concurrent use.
// Set the exported fields before the first call.
type Postgres struct {
	pool *pgxpool.Pool

	// PollInterval is how long an idle subscription waits before rereading
	// the log when no append through this value wakes it. Zero means
	// DefaultPollInterval.
	PollInterval time.Duration
	// SubscriptionPageSize is the number of events a subscription reads per
	// query. Zero means DefaultSubscriptionPageSize.
	SubscriptionPageSize int

	appendSignal
	announcer announcer
	fences    fenceShare
}

var _ Store = (*Postgres)(nil)

// NewPostgres returns a Store on pool. The pool's database must have the
// event store's tables (eventstore/migrations).
func NewPostgres(pool *pgxpool.Pool) *Postgres {
	return &Postgres{pool: pool}
}

// The expectation is checked inside the insert so that the happy path is one
// round trip. When the check fails nothing is inserted and the outer SELECT
// still returns the stream's last revision for the conflict error, and
// whether any of the event ids was already stored (the statement's own
// inserts are invisible to that subquery): only then can the failure be the
// same append retried, worth a lookup. The probe sits in a CASE branch so a
// successful append never runs it, and looks ids up one by one so the
// unique index serves it whatever the table's statistics say. ORDER BY e.ord makes global_position
// follow revision order within the append.
const appendSQL = `
WITH cur AS (
    SELECT max(stream_revision) AS rev FROM events WHERE stream_id = $1::text
), ins AS (
    INSERT INTO events (stream_id, stream_revision, event_id, event_type, data, metadata)
    SELECT $1::text, coalesce(cur.rev, -1) + e.ord, e.id, e.type, e.data, e.meta
    FROM cur, unnest($2::uuid[], $3::text[], $4::jsonb[], $5::jsonb[])
        WITH ORDINALITY AS e(id, type, data, meta, ord)
    WHERE CASE $6::int
        WHEN 1 THEN cur.rev IS NULL
        WHEN 2 THEN cur.rev IS NOT NULL
        WHEN 3 THEN cur.rev = $7::bigint
        ELSE true END
    ORDER BY e.ord
    RETURNING stream_revision, transaction_id, global_position
)
SELECT (SELECT rev FROM cur), last.stream_revision, last.transaction_id::text::bigint, last.global_position,
    CASE WHEN last.stream_revision IS NULL THEN EXISTS (
        SELECT 1 FROM unnest($2::uuid[]) AS x(id)
        WHERE EXISTS (SELECT 1 FROM events WHERE events.event_id = x.id)
    ) ELSE false END
FROM (SELECT 1) AS one
LEFT JOIN (SELECT * FROM ins ORDER BY stream_revision DESC LIMIT 1) AS last ON true`

// A batch without BEGIN runs as one implicit transaction, so this lock is
// held until the append that follows it commits.
const streamLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))`

const lastEventSQL = `
SELECT stream_revision, transaction_id::text::bigint, global_position
FROM events WHERE stream_id = $1 ORDER BY stream_revision DESC LIMIT 1`

const eventsByIDSQL = `
SELECT event_id, stream_id, stream_revision, transaction_id::text::bigint, global_position
FROM events WHERE event_id = ANY($1::uuid[])`

// The commit position needs an alias: a bare cast would be an output column
// named transaction_id, and ORDER BY transaction_id would then sort by that
// bigint instead of walking the primary key.
const recordedColumns = `event_id, stream_id, stream_revision, event_type, data, metadata,
    transaction_id::text::bigint AS commit_position, global_position, recorded_at`

const readStreamSQL = `
SELECT ` + recordedColumns + `
FROM events
WHERE stream_id = $1 AND stream_revision >= $2
ORDER BY stream_revision
LIMIT $3`

const streamExistsSQL = `SELECT EXISTS (SELECT 1 FROM events WHERE stream_id = $1)`

// fenceSQL is the log's fence (see the top of this file), as a scalar
// subquery of the reading statement: computed once, with that statement's
// snapshot.
const fenceSQL = `(SELECT eventstore_fence())`

// beginAppendSQL takes the appenders' lock as the trigger does, for a
// transaction that appends after writing something else (it must run
// before that write).
const beginAppendSQL = `SELECT eventstore_begin_append()`

// fenceValueSQL computes the fence for the reads below, which take it as a
// parameter: concurrent reads share one computation (fenceShare). As a
// bound on the primary key together with the row comparison, it keeps a
// poll from touching rows above it while the fence holds back.
const fenceValueSQL = `SELECT ` + fenceSQL + `::text`

const readAllSQL = `
SELECT ` + recordedColumns + `
FROM events
WHERE (transaction_id, global_position) > ($1::text::xid8, $2::bigint)
  AND transaction_id < $4::text::xid8
ORDER BY transaction_id, global_position
LIMIT $3`

// readAllOfTypesSQL is readAllSQL for some types, with one more row: the
// last event below the fence of any type (head true), in the same
// snapshot, which is how far a read that returns fewer than max events
// has seen. Skipped events are passed in the primary key without their
// data leaving the server. ORDER BY names the columns with their table:
// the output columns of the second branch have these names.
const readAllOfTypesSQL = `
(SELECT ` + recordedColumns + `, false AS head
 FROM events
 WHERE (transaction_id, global_position) > ($1::text::xid8, $2::bigint)
   AND transaction_id < $5::text::xid8
   AND event_type = ANY($4::text[])
 ORDER BY events.transaction_id, events.global_position
 LIMIT $3)
UNION ALL
(SELECT NULL, NULL, NULL, NULL, NULL, NULL, transaction_id::text::bigint, global_position, NULL, true
 FROM events
 WHERE (transaction_id, global_position) > ($1::text::xid8, $2::bigint)
   AND transaction_id < $5::text::xid8
 ORDER BY events.transaction_id DESC, events.global_position DESC
 LIMIT 1)`

// fence returns the log's fence, computed after the call began, shared
// with the reads that run at the same time (fenceShare).
func (s *Postgres) fence(ctx context.Context) (string, error) {
	return s.fences.get(ctx, func(ctx context.Context) (string, error) {
		var f string
		if err := s.pool.QueryRow(ctx, fenceValueSQL).Scan(&f); err != nil {
			return "", fmt.Errorf("read the log's fence: %w", err)
		}
		return f, nil
	})
}

// AppendToStream appends events atomically to stream. See Store. An event
// with the zero ID gets a random one. Empty Data is stored as {} and empty
// Metadata as {}. With no events it checks the expectation and returns the
// stream's current state (the zero AppendResult for a stream without events).
// An Any or StreamExists append that keeps losing its revision to concurrent
// appends gives up after a few retries with a *WrongExpectedVersionError.
func (s *Postgres) AppendToStream(ctx context.Context, stream string, expected ExpectedRevision, events ...EventData) (AppendResult, error) {
	if len(events) == 0 {
		return s.currentState(ctx, stream, expected)
	}
	if rev, ok := expected.Revision(); ok && rev > math.MaxInt64 {
		// No stream can be that long; answer with the real state rather than
		// let the parameter overflow.
		return s.currentState(ctx, stream, expected)
	}

	ids := make([]uuid.UUID, len(events))
	types := make([]string, len(events))
	data := make([][]byte, len(events))
	meta := make([][]byte, len(events))
	seen := make(map[uuid.UUID]struct{}, len(events))
	for i, e := range events {
		id := e.ID
		if id == uuid.Nil {
			id = uuid.New()
		}
		if _, dup := seen[id]; dup {
			return AppendResult{}, fmt.Errorf("append to stream %s: event %s appears twice in one append: %w", stream, id, ErrDuplicateEventID)
		}
		seen[id] = struct{}{}
		ids[i] = id
		types[i] = e.Type
		data[i] = orEmptyObject(e.Data)
		meta[i] = orEmptyObject(e.Metadata)
	}
	kind, exact := expectationParams(expected)

	for attempt := 0; ; attempt++ {
		var actual, lastRev, txid, gpos *int64
		var idsStored bool
		scan := func(row pgx.Row) error { return row.Scan(&actual, &lastRev, &txid, &gpos, &idsStored) }
		var err error
		if retriesOnConflict(expected) {
			// Appends that take whatever revision is next would otherwise
			// keep colliding on a hot stream: two statements that start
			// together read the same last revision. The lock makes them take
			// turns, and since the insert is a second statement it reads the
			// stream after the previous holder committed. Pipelined, so it is
			// still one round trip. Exact and NoStream skip it: for them a
			// collision is the answer, not something to wait out.
			batch := &pgx.Batch{}
			batch.Queue(streamLockSQL, stream)
			batch.Queue(appendSQL, stream, ids, types, data, meta, kind, exact).QueryRow(scan)
			err = s.pool.SendBatch(ctx, batch).Close()
		} else {
			err = scan(s.pool.QueryRow(ctx, appendSQL, stream, ids, types, data, meta, kind, exact))
		}
		if err == nil && lastRev != nil {
			pos := Position{Commit: uint64(*txid), Prepare: uint64(*gpos)}
			s.notify(events)
			s.announce(pos)
			return AppendResult{NextExpectedRevision: uint64(*lastRev), Position: pos}, nil
		}
		if err == nil && !idsStored {
			// The expectation failed, nothing was written, and none of the
			// events was stored before: a plain conflict, answered from the
			// state the check saw.
			return AppendResult{}, conflictError(stream, expected, actual)
		}
		revisionTaken := false
		if err != nil {
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != uniqueViolation ||
				(pgErr.ConstraintName != revisionConstraint && pgErr.ConstraintName != eventIDConstraint) {
				return AppendResult{}, fmt.Errorf("append to stream %s: %w", stream, err)
			}
			revisionTaken = pgErr.ConstraintName == revisionConstraint
		}

		// Any failure may be the same append retried (after a lost reply,
		// say): its events are stored, so the expectation no longer holds or
		// the insert collides. Only this path pays for the lookup.
		res, state, lookupErr := s.lookupRetry(ctx, stream, ids)
		if lookupErr != nil {
			return AppendResult{}, lookupErr
		}
		if state.retried {
			return res, nil
		}
		switch {
		case err == nil:
			return AppendResult{}, conflictError(stream, expected, actual)
		case revisionTaken && retriesOnConflict(expected) && attempt < anyRetries:
			if err := backoff(ctx, attempt); err != nil {
				return AppendResult{}, fmt.Errorf("append to stream %s: %w", stream, err)
			}
		case revisionTaken:
			// Another append won the revision between our check and insert.
			return AppendResult{}, &WrongExpectedVersionError{
				Stream: stream, Expected: expected,
				Actual: uint64(state.actual), HasActual: state.hasActual,
			}
		default:
			// The event id index fired, yet none of the ids is stored now:
			// the holder was deleted in between.
			return AppendResult{}, fmt.Errorf("append to stream %s: %w", stream, ErrDuplicateEventID)
		}
	}
}

func conflictError(stream string, expected ExpectedRevision, actual *int64) error {
	conflict := &WrongExpectedVersionError{Stream: stream, Expected: expected}
	if actual != nil {
		conflict.Actual, conflict.HasActual = uint64(*actual), true
	}
	return conflict
}

type retryState struct {
	retried   bool  // all ids are stored as one append in this stream
	hasActual bool  // the stream has events
	actual    int64 // its last revision
}

// lookupRetry decides whether a failed append was the same append retried,
// and reads the stream's last revision for the conflict error, in one round
// trip. It returns an ErrDuplicateEventID error when some of the ids are
// stored in a way that cannot be a retry.
func (s *Postgres) lookupRetry(ctx context.Context, stream string, ids []uuid.UUID) (AppendResult, retryState, error) {
	var state retryState
	batch := &pgx.Batch{}
	type stored struct {
		stream   string
		revision int64
		pos      Position
	}
	found := make(map[uuid.UUID]stored, len(ids))
	batch.Queue(eventsByIDSQL, ids).Query(func(rows pgx.Rows) error {
		var (
			id         uuid.UUID
			st         stored
			txid, gpos int64
		)
		_, err := pgx.ForEachRow(rows, []any{&id, &st.stream, &st.revision, &txid, &gpos}, func() error {
			st.pos = Position{Commit: uint64(txid), Prepare: uint64(gpos)}
			found[id] = st
			return nil
		})
		return err
	})
	batch.Queue(`SELECT max(stream_revision) FROM events WHERE stream_id = $1`, stream).QueryRow(func(row pgx.Row) error {
		var actual *int64
		if err := row.Scan(&actual); err != nil {
			return err
		}
		if actual != nil {
			state.hasActual, state.actual = true, *actual
		}
		return nil
	})
	if err := s.pool.SendBatch(ctx, batch).Close(); err != nil {
		return AppendResult{}, state, fmt.Errorf("append to stream %s: look up conflicting events: %w", stream, err)
	}
	if len(found) == 0 {
		return AppendResult{}, state, nil
	}
	first, ok := found[ids[0]]
	for i, id := range ids {
		st, present := found[id]
		if !present || !ok || st.stream != stream || st.revision != first.revision+int64(i) {
			return AppendResult{}, state, fmt.Errorf("append to stream %s: event %s: %w", stream, describeStored(id, present, st.stream, st.revision), ErrDuplicateEventID)
		}
	}
	last := found[ids[len(ids)-1]]
	state.retried = true
	return AppendResult{NextExpectedRevision: uint64(last.revision), Position: last.pos}, state, nil
}

func describeStored(id uuid.UUID, present bool, stream string, revision int64) string {
	if !present {
		return fmt.Sprintf("%s is new but other events of the append are stored", id)
	}
	return fmt.Sprintf("%s is stored in stream %s at revision %d", id, stream, revision)
}

func retriesOnConflict(e ExpectedRevision) bool {
	return e.kind == kindAny || e.kind == kindStreamExists
}

// expectationParams are appendSQL's $6 and $7; its CASE numbers the kinds as
// revisionKind does.
func expectationParams(e ExpectedRevision) (kind int32, revision int64) {
	return int32(e.kind), int64(e.revision)
}

func satisfies(e ExpectedRevision, hasActual bool, actual uint64) bool {
	switch e.kind {
	case kindNoStream:
		return !hasActual
	case kindStreamExists:
		return hasActual
	case kindExact:
		return hasActual && actual == e.revision
	}
	return true
}

func orEmptyObject(b []byte) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

// backoff spreads out appenders that keep losing the same revision, so that
// they stop colliding in lockstep.
func backoff(ctx context.Context, attempt int) error {
	limit := time.Millisecond << min(attempt, 5)
	t := time.NewTimer(rand.N(limit) + 100*time.Microsecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// currentState answers an append of no events: the expectation is checked
// against the stream's last event, and nothing is written.
func (s *Postgres) currentState(ctx context.Context, stream string, expected ExpectedRevision) (AppendResult, error) {
	var rev, txid, gpos int64
	err := s.pool.QueryRow(ctx, lastEventSQL, stream).Scan(&rev, &txid, &gpos)
	hasActual := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return AppendResult{}, fmt.Errorf("append to stream %s: read last event: %w", stream, err)
	}
	if !satisfies(expected, hasActual, uint64(rev)) {
		return AppendResult{}, &WrongExpectedVersionError{Stream: stream, Expected: expected, Actual: uint64(rev), HasActual: hasActual}
	}
	if !hasActual {
		return AppendResult{}, nil
	}
	return AppendResult{
		NextExpectedRevision: uint64(rev),
		Position:             Position{Commit: uint64(txid), Prepare: uint64(gpos)},
	}, nil
}

// ReadStream reads up to max events of stream from revision from on. A max
// of zero or less reads to the end of the stream.
func (s *Postgres) ReadStream(ctx context.Context, stream string, from uint64, max int) ([]RecordedEvent, error) {
	if from > math.MaxInt64 {
		from = math.MaxInt64
	}
	events, err := s.query(ctx, readStreamSQL, max, stream, int64(from), limitParam(max))
	if err != nil {
		return nil, fmt.Errorf("read stream %s: %w", stream, err)
	}
	if len(events) > 0 {
		return events, nil
	}
	if from > 0 {
		// Reading past the end of an existing stream is not an error.
		var exists bool
		if err := s.pool.QueryRow(ctx, streamExistsSQL, stream).Scan(&exists); err != nil {
			return nil, fmt.Errorf("read stream %s: %w", stream, err)
		}
		if exists {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("read stream %s: %w", stream, ErrStreamNotFound)
}

// ReadAll reads up to max events of the global log strictly after from,
// stopping at the fence described at the top of this file. A max of zero or
// less reads everything up to the fence.
func (s *Postgres) ReadAll(ctx context.Context, from Position, max int) ([]RecordedEvent, error) {
	fence, err := s.fence(ctx)
	if err != nil {
		return nil, fmt.Errorf("read all after %s: %w", from, err)
	}
	events, err := s.query(ctx, readAllSQL, max,
		strconv.FormatUint(from.Commit, 10), int64(min(from.Prepare, math.MaxInt64)), limitParam(max), fence)
	if err != nil {
		return nil, fmt.Errorf("read all after %s: %w", from, err)
	}
	return events, nil
}

// ReadAllOfTypes reads up to max events of types strictly after from,
// stopping at the fence like ReadAll. See Store.
func (s *Postgres) ReadAllOfTypes(ctx context.Context, from Position, max int, types []string) ([]RecordedEvent, Position, error) {
	if max <= 0 {
		max = math.MaxInt32
	}
	fence, err := s.fence(ctx)
	if err != nil {
		return nil, from, fmt.Errorf("read all of %v after %s: %w", types, from, err)
	}
	rows, err := s.pool.Query(ctx, readAllOfTypesSQL,
		strconv.FormatUint(from.Commit, 10), int64(min(from.Prepare, math.MaxInt64)), int64(max), types, fence)
	if err != nil {
		return nil, from, fmt.Errorf("read all of %v after %s: %w", types, from, err)
	}
	defer rows.Close()
	events := make([]RecordedEvent, 0, min(max, 1024))
	head, sawHead := from, false
	for rows.Next() {
		var (
			e          RecordedEvent
			id         *uuid.UUID
			stream     *string
			rev        *int64
			typ        *string
			at         *time.Time
			txid, gpos int64
			isHead     bool
		)
		if err := rows.Scan(&id, &stream, &rev, &typ, &e.Data, &e.Metadata, &txid, &gpos, &at, &isHead); err != nil {
			return nil, from, fmt.Errorf("read all of %v after %s: %w", types, from, err)
		}
		e.Position = Position{Commit: uint64(txid), Prepare: uint64(gpos)}
		if isHead {
			head, sawHead = e.Position, true
			continue
		}
		e.ID, e.StreamID, e.Revision, e.Type, e.RecordedAt = *id, *stream, uint64(*rev), *typ, *at
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, from, fmt.Errorf("read all of %v after %s: %w", types, from, err)
	}
	switch {
	case len(events) == max:
		return events, events[len(events)-1].Position, nil
	case sawHead:
		// Every event of types up to the head is among those returned.
		return events, head, nil
	}
	return events, from, nil
}

func (s *Postgres) query(ctx context.Context, sql string, max int, args ...any) ([]RecordedEvent, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var events []RecordedEvent
	if max > 0 {
		events = make([]RecordedEvent, 0, min(max, 1024))
	}
	for rows.Next() {
		var (
			e          RecordedEvent
			rev        int64
			txid, gpos int64
		)
		if err := rows.Scan(&e.ID, &e.StreamID, &rev, &e.Type, &e.Data, &e.Metadata, &txid, &gpos, &e.RecordedAt); err != nil {
			return nil, err
		}
		e.Revision = uint64(rev)
		e.Position = Position{Commit: uint64(txid), Prepare: uint64(gpos)}
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return events, nil
}

// limitParam turns "no limit" into SQL's LIMIT NULL.
func limitParam(max int) *int64 {
	if max <= 0 {
		return nil
	}
	l := int64(max)
	return &l
}
