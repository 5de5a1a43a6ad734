package eventstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgPart is one part of a multi-stream append, ready for appendSQL.
type pgPart struct {
	StreamAppend
	ids   []uuid.UUID
	types []string
	data  [][]byte
	meta  [][]byte
}

// partOutcome is what appendStreamsSQL answered for one part.
type partOutcome struct {
	// held: the part's expectation held (all parts' must for any to be
	// stored).
	held                        bool
	actual, lastRev, txid, gpos *int64
	idsStored                   bool
}

// AppendToStreams appends to several streams atomically. See Store.
//
// All parts are one statement (appendStreamsSQL), so a multi-stream append
// costs one round trip however many streams it writes: it checks every
// part's expectation and inserts only when all hold. Parts that take
// whatever revision is next (Any, StreamExists) take their streams' locks
// first, in stream order, so that two multi-stream appends cannot wait on
// each other's locks. Parts that find their events already
// stored (the same append retried, after a lost reply) are looked up on the
// error path only, as in AppendToStream, and the rest is appended again
// without them.
func (s *Postgres) AppendToStreams(ctx context.Context, appends ...StreamAppend) ([]AppendResult, error) {
	if len(appends) == 0 {
		return nil, nil
	}
	if err := checkParts(appends); err != nil {
		return nil, err
	}
	if len(appends) == 1 {
		// One stream's append is atomic on its own, in one round trip.
		a := appends[0]
		res, err := s.AppendToStream(ctx, a.Stream, a.Expected, a.Events...)
		if err != nil {
			return nil, err
		}
		return []AppendResult{res}, nil
	}
	parts := make([]pgPart, len(appends))
	filled := make([][]EventData, len(appends))
	for i, a := range appends {
		p := pgPart{StreamAppend: a}
		seen := make(map[uuid.UUID]struct{}, len(a.Events))
		for _, e := range a.Events {
			id := e.ID
			if id == uuid.Nil {
				id = uuid.New()
			}
			if _, dup := seen[id]; dup {
				return nil, fmt.Errorf("append to stream %s: event %s appears twice in one append: %w", a.Stream, id, ErrDuplicateEventID)
			}
			seen[id] = struct{}{}
			p.ids = append(p.ids, id)
			p.types = append(p.types, e.Type)
			p.data = append(p.data, orEmptyObject(e.Data))
			p.meta = append(p.meta, orEmptyObject(e.Metadata))
			filled[i] = append(filled[i], EventData{ID: id})
		}
		parts[i] = p
	}
	if err := checkPartIDs(appends, filled); err != nil {
		return nil, err
	}

	results := make([]AppendResult, len(parts))
	done := make([]bool, len(parts)) // stored before: the same append retried
	for attempt := 0; ; attempt++ {
		outcomes, committed, err := s.appendParts(ctx, parts, done)
		if err == nil && committed {
			var wrote []EventData
			var last Position
			for i, o := range outcomes {
				if done[i] {
					continue
				}
				results[i] = AppendResult{
					NextExpectedRevision: uint64(*o.lastRev),
					Position:             Position{Commit: uint64(*o.txid), Prepare: uint64(*o.gpos)},
				}
				wrote = append(wrote, appends[i].Events...)
				if last.Less(results[i].Position) {
					last = results[i].Position
				}
			}
			if len(wrote) > 0 {
				s.notify(wrote)
				s.announce(last)
			}
			return results, nil
		}
		if err == nil {
			// Some expectation failed and nothing was written. When none of
			// the failed parts' events was stored before, these are plain
			// conflicts, answered from the state the checks saw.
			var conflicts []error
			lookup := false
			for i, o := range outcomes {
				if done[i] || o.held {
					continue
				}
				if o.idsStored {
					lookup = true
					break
				}
				conflicts = append(conflicts, conflictError(parts[i].Stream, parts[i].Expected, o.actual))
			}
			if !lookup {
				return nil, errors.Join(conflicts...)
			}
		} else {
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != uniqueViolation ||
				(pgErr.ConstraintName != revisionConstraint && pgErr.ConstraintName != eventIDConstraint) {
				return nil, fmt.Errorf("append to %d streams: %w", len(parts), err)
			}
		}

		// A part may be the same append retried, or have lost its revision
		// to a concurrent append: judge every part against the stored state.
		conflicts, retried, err := s.judgeParts(ctx, parts, done, results)
		if err != nil {
			return nil, err
		}
		switch {
		case len(conflicts) > 0:
			return nil, errors.Join(conflicts...)
		case retried:
			// Append the others again without the parts already stored.
			if !slices.Contains(done, false) {
				return results, nil
			}
		case attempt < anyRetries:
			// A revision was taken by an append that committed after the
			// checks; every expectation still holds, so try again.
			if err := backoff(ctx, attempt); err != nil {
				return nil, fmt.Errorf("append to %d streams: %w", len(parts), err)
			}
		default:
			return nil, fmt.Errorf("append to %d streams: revisions kept being taken by concurrent appends: %w", len(parts), ErrWrongExpectedVersion)
		}
	}
}

// appendStreamsSQL is appendSQL for several streams in one statement. $1
// to $3 are the parts (stream, expectation kind and revision as in
// appendSQL), $4 to $9 the events of all parts in order, each with its
// part's number (1-based) and its place in the part (1-based). The
// inserts happen only when every part's expectation holds, so the
// statement is all or nothing on its own; it answers one row per part
// with the stream's last revision before, and the last event it stored
// there. When nothing was stored, the outer SELECT also says whether any
// event id was stored before (the same append retried?), as appendSQL
// does.
const appendStreamsSQL = `
WITH cur AS (
    SELECT p.part, p.stream, p.kind, p.exact,
        (SELECT max(stream_revision) FROM events WHERE stream_id = p.stream) AS rev
    FROM unnest($1::text[], $2::int[], $3::bigint[]) WITH ORDINALITY AS p(stream, kind, exact, part)
), parts AS (
    SELECT cur.*, coalesce(CASE kind
        WHEN 1 THEN rev IS NULL
        WHEN 2 THEN rev IS NOT NULL
        WHEN 3 THEN rev = exact
        ELSE true END, false) AS ok
    FROM cur
), checked AS (
    SELECT bool_and(ok) AS ok FROM parts
), ins AS (
    INSERT INTO events (stream_id, stream_revision, event_id, event_type, data, metadata)
    SELECT parts.stream, coalesce(parts.rev, -1) + e.at, e.id, e.type, e.data, e.meta
    FROM unnest($4::int[], $5::int[], $6::uuid[], $7::text[], $8::jsonb[], $9::jsonb[])
        WITH ORDINALITY AS e(part, at, id, type, data, meta, ord)
    JOIN parts ON parts.part = e.part
    WHERE (SELECT ok FROM checked)
    ORDER BY e.ord
    RETURNING stream_id, stream_revision, transaction_id, global_position
), last AS (
    SELECT DISTINCT ON (stream_id) stream_id, stream_revision, transaction_id, global_position
    FROM ins ORDER BY stream_id, stream_revision DESC
)
SELECT parts.part, parts.ok, parts.rev, last.stream_revision, last.transaction_id::text::bigint, last.global_position,
    CASE WHEN (SELECT ok FROM checked) THEN false ELSE EXISTS (
        SELECT 1 FROM unnest($6::uuid[]) AS x(id)
        WHERE EXISTS (SELECT 1 FROM events WHERE events.event_id = x.id)
    ) END
FROM parts LEFT JOIN last ON last.stream_id = parts.stream
ORDER BY parts.part`

// appendParts runs one attempt: the parts not done, in one statement
// (one round trip; Any and StreamExists parts take their streams' locks
// first, in stream order, pipelined in the same implicit transaction, as
// AppendToStream does for one). committed is false when an expectation
// failed (the outcomes say which) and nothing was written.
func (s *Postgres) appendParts(ctx context.Context, parts []pgPart, done []bool) (outcomes []partOutcome, committed bool, err error) {
	var (
		streams      []string
		kinds        []int32
		exacts       []int64
		evPart, evAt []int32
		ids          []uuid.UUID
		types        []string
		data, meta   [][]byte
		locks        []string
		index        []int // the part of each row of the statement
	)
	for i, p := range parts {
		if done[i] {
			continue
		}
		index = append(index, i)
		kind, exact := expectationParams(p.Expected)
		streams, kinds, exacts = append(streams, p.Stream), append(kinds, kind), append(exacts, exact)
		for j := range p.ids {
			evPart, evAt = append(evPart, int32(len(streams))), append(evAt, int32(j+1))
		}
		ids, types = append(ids, p.ids...), append(types, p.types...)
		data, meta = append(data, p.data...), append(meta, p.meta...)
		if retriesOnConflict(p.Expected) {
			locks = append(locks, p.Stream)
		}
	}
	slices.Sort(locks)
	batch := &pgx.Batch{}
	for _, stream := range locks {
		batch.Queue(streamLockSQL, stream)
	}
	outcomes = make([]partOutcome, len(parts))
	committed = true
	batch.Queue(appendStreamsSQL, streams, kinds, exacts, evPart, evAt, ids, types, data, meta).Query(func(rows pgx.Rows) error {
		var (
			part int64
			o    partOutcome
		)
		_, err := pgx.ForEachRow(rows, []any{&part, &o.held, &o.actual, &o.lastRev, &o.txid, &o.gpos, &o.idsStored}, func() error {
			outcomes[index[part-1]] = o
			if o.lastRev == nil {
				committed = false
			}
			return nil
		})
		return err
	})
	if err := s.pool.SendBatch(ctx, batch).Close(); err != nil {
		return nil, false, err
	}
	return outcomes, committed, nil
}

// judgeParts reads, in one round trip, where the events of the parts not
// done are stored and each stream's last revision. A part whose events
// are all stored as one append of its stream is done, with its stored
// result (retried true); events stored any other way fail the whole
// append; a part whose expectation no longer holds is a conflict.
func (s *Postgres) judgeParts(ctx context.Context, parts []pgPart, done []bool, results []AppendResult) (conflicts []error, retried bool, err error) {
	type stored struct {
		stream   string
		revision int64
		pos      Position
	}
	var ids []uuid.UUID
	var streams []string
	for i, p := range parts {
		if !done[i] {
			ids = append(ids, p.ids...)
			streams = append(streams, p.Stream)
		}
	}
	found := make(map[uuid.UUID]stored, len(ids))
	last := make(map[string]int64, len(streams))
	batch := &pgx.Batch{}
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
	batch.Queue(`SELECT stream_id, max(stream_revision) FROM events WHERE stream_id = ANY($1::text[]) GROUP BY stream_id`, streams).
		Query(func(rows pgx.Rows) error {
			var (
				stream string
				rev    int64
			)
			_, err := pgx.ForEachRow(rows, []any{&stream, &rev}, func() error {
				last[stream] = rev
				return nil
			})
			return err
		})
	if err := s.pool.SendBatch(ctx, batch).Close(); err != nil {
		return nil, false, fmt.Errorf("append to %d streams: look up conflicting events: %w", len(parts), err)
	}
	for i, p := range parts {
		if done[i] {
			continue
		}
		first, ok := found[p.ids[0]]
		stored := 0
		for j, id := range p.ids {
			st, present := found[id]
			if !present {
				continue
			}
			stored++
			if !ok || st.stream != p.Stream || st.revision != first.revision+int64(j) {
				return nil, false, fmt.Errorf("append to stream %s: event %s: %w", p.Stream, describeStored(id, present, st.stream, st.revision), ErrDuplicateEventID)
			}
		}
		switch {
		case stored == len(p.ids):
			lastEvent := found[p.ids[len(p.ids)-1]]
			results[i] = AppendResult{NextExpectedRevision: uint64(lastEvent.revision), Position: lastEvent.pos}
			done[i], retried = true, true
			continue
		case stored > 0:
			return nil, false, fmt.Errorf("append to stream %s: event %s is new but other events of the append are stored: %w", p.Stream, p.ids[0], ErrDuplicateEventID)
		}
		rev, has := last[p.Stream]
		if !satisfies(p.Expected, has, uint64(rev)) {
			conflicts = append(conflicts, &WrongExpectedVersionError{Stream: p.Stream, Expected: p.Expected, Actual: uint64(rev), HasActual: has})
		}
	}
	return conflicts, retried, nil
}
