package crawlstate

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Happenings are facts of a source like articles: each one a source found
// is noted in ingest_source_events (for backfills), each document that
// held some in ingest_event_documents (re-read on every regular poll),
// and which document has the word on each in ingest_event_holders.

// FoundHappening is a happening a source found, with what acceptance
// judges it by.
type FoundHappening struct {
	ID        uuid.UUID `bun:"id"`
	ChangedAt time.Time `bun:"changed_at"`
	LastEnd   time.Time `bun:"last_end"`
}

// KnownHappenings returns which of ids the source has found before.
func (s *Store) KnownHappenings(ctx context.Context, sourceID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	var known []uuid.UUID
	err := s.db.NewRaw(`SELECT event_id FROM ingest_source_events WHERE source_id = ? AND event_id = ANY(?::uuid[])`,
		sourceID, pgdialect.Array(uuidStrings(ids))).Scan(ctx, &known)
	if err != nil {
		return nil, fmt.Errorf("read known events of source %s: %w", sourceID, err)
	}
	out := make(map[uuid.UUID]bool, len(known))
	for _, id := range known {
		out[id] = true
	}
	return out, nil
}

// MarkHappeningDocument records that a document of the source holds
// happenings (checked now).
func (s *Store) MarkHappeningDocument(ctx context.Context, sourceID uuid.UUID, url string) error {
	_, err := s.db.NewRaw(`INSERT INTO ingest_event_documents (source_id, url) VALUES (?, ?)
		ON CONFLICT (source_id, url) DO UPDATE SET checked_at = now()`, sourceID, url).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record event document %s: %w", url, err)
	}
	return nil
}

// MarkHappeningsFound records happenings the source found, in one
// statement.
func (s *Store) MarkHappeningsFound(ctx context.Context, sourceID uuid.UUID, found []FoundHappening) error {
	ids, changed, ends := make([]string, len(found)), make([]time.Time, len(found)), make([]time.Time, len(found))
	for i, e := range found {
		ids[i], changed[i], ends[i] = e.ID.String(), e.ChangedAt, e.LastEnd
	}
	_, err := s.db.NewRaw(`INSERT INTO ingest_source_events (source_id, event_id, changed_at, last_end)
		SELECT ?, e.id, e.changed, e.last_end FROM unnest(?::uuid[], ?::timestamptz[], ?::timestamptz[]) AS e(id, changed, last_end)
		ON CONFLICT (source_id, event_id) DO UPDATE SET changed_at = EXCLUDED.changed_at, last_end = EXCLUDED.last_end`,
		sourceID, pgdialect.Array(ids), pgdialect.Array(changed), pgdialect.Array(ends)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record events of source %s: %w", sourceID, err)
	}
	return nil
}

// HappeningsOfSource returns every happening the source found, oldest
// change first.
func (s *Store) HappeningsOfSource(ctx context.Context, sourceID uuid.UUID) ([]FoundHappening, error) {
	var out []FoundHappening
	err := s.db.NewRaw(`SELECT event_id AS id, changed_at, last_end FROM ingest_source_events
		WHERE source_id = ? ORDER BY changed_at, event_id`, sourceID).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("read events of source %s: %w", sourceID, err)
	}
	return out, nil
}

// EventDocument is a document of the source that holds happenings, with
// what it answered when it was last read whole.
type EventDocument struct {
	URL          string `bun:"url"`
	ETag         string `bun:"etag"`
	LastModified string `bun:"last_modified"`
	Digest       []byte `bun:"digest"`
	// Trusted: it was read whole recently enough (HappeningDocuments'
	// trustFor), for the source's attachments as they are now, and no
	// happening it may take up was let go since, so unchanged bytes need
	// not be read again.
	Trusted bool `bun:"trusted"`
}

// HappeningDocuments returns up to n of the source's documents that hold
// happenings, least recently checked first, leaving out those among not;
// when only is not nil, only those among it. Those read whole within
// trustFor, by a read that saw acceptingSince (the latest
// domain.AcceptingSince of the source's attachments) or later, are
// Trusted.
func (s *Store) HappeningDocuments(ctx context.Context, sourceID uuid.UUID, not, only []string, n int, trustFor time.Duration, acceptingSince time.Time) ([]EventDocument, error) {
	q := s.db.NewRaw(`SELECT url, coalesce(etag, '') AS etag, coalesce(last_modified, '') AS last_modified, digest,
		coalesce(read_at > now() - make_interval(secs => ?) AND accepting_since >= ? AND (distrusted_at IS NULL OR read_at > distrusted_at), false) AS trusted
		FROM ingest_event_documents WHERE source_id = ? AND NOT (url = ANY(?)) AND (?::text[] IS NULL OR url = ANY(?))
		ORDER BY checked_at LIMIT ?`, trustFor.Seconds(), acceptingSince, sourceID, pgdialect.Array(not), pgdialect.Array(only), pgdialect.Array(only), n)
	var docs []EventDocument
	if err := q.Scan(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read event documents of source %s: %w", sourceID, err)
	}
	return docs, nil
}

// KeepHappeningDocumentRead records what a document of the source
// answered when it was read whole and all it holds was recorded and
// offered: its validators and body digest, the time its read began
// (readAt), and the latest domain.AcceptingSince of the attachments it was
// offered to. A document no longer known to hold happenings is left alone.
func (s *Store) KeepHappeningDocumentRead(ctx context.Context, sourceID uuid.UUID, url, etag, lastModified string, digest []byte, readAt, acceptingSince time.Time) error {
	_, err := s.db.NewRaw(`UPDATE ingest_event_documents SET etag = nullif(?, ''), last_modified = nullif(?, ''), digest = ?,
		read_at = ?, checked_at = now(), accepting_since = ?
		WHERE source_id = ? AND url = ?`, etag, lastModified, digest, readAt, acceptingSince, sourceID, url).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record the read of event document %s: %w", url, err)
	}
	return nil
}

// TouchHappeningDocuments records that the source's documents urls were
// checked now and found unchanged, in one statement.
func (s *Store) TouchHappeningDocuments(ctx context.Context, sourceID uuid.UUID, urls []string) error {
	if len(urls) == 0 {
		return nil
	}
	_, err := s.db.NewRaw(`UPDATE ingest_event_documents SET checked_at = now() WHERE source_id = ? AND url = ANY(?)`,
		sourceID, pgdialect.Array(urls)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record unchanged event documents of source %s: %w", sourceID, err)
	}
	return nil
}

// ClaimHappenings takes the word on happenings for the document url where
// it may: where nobody has it, where url has it already, or where its
// precedence (ranks, one per id) is higher than the holder's; in one
// statement, so two documents read at once cannot both win. It returns
// the happenings the document holds. ids hold no duplicates.
func (s *Store) ClaimHappenings(ctx context.Context, url string, ids []uuid.UUID, ranks []int) (map[uuid.UUID]bool, error) {
	var won []uuid.UUID
	err := s.db.NewRaw(`INSERT INTO ingest_event_holders AS h (event_id, url, precedence)
		SELECT e.id, ?, e.p FROM unnest(?::uuid[], ?::smallint[]) AS e(id, p)
		ON CONFLICT (event_id) DO UPDATE SET url = EXCLUDED.url, precedence = EXCLUDED.precedence
		WHERE h.url = EXCLUDED.url OR EXCLUDED.precedence > h.precedence
		RETURNING event_id`, url, pgdialect.Array(uuidStrings(ids)), pgdialect.Array(ranks)).Scan(ctx, &won)
	if err != nil {
		return nil, fmt.Errorf("claim events of %s: %w", url, err)
	}
	held := make(map[uuid.UUID]bool, len(won))
	for _, id := range won {
		held[id] = true
	}
	return held, nil
}

// ReleaseHappenings lets go of the happenings the document url held but
// no longer holds (those not among still), and has every document of the
// sources that found one of them read whole at its next re-read: one may
// state it and take it up.
func (s *Store) ReleaseHappenings(ctx context.Context, url string, still []uuid.UUID) error {
	_, err := s.db.NewRaw(`WITH released AS (DELETE FROM ingest_event_holders WHERE url = ? AND NOT (event_id = ANY(?::uuid[])) RETURNING event_id)
		`+distrustHolders, url, pgdialect.Array(uuidStrings(still))).Exec(ctx)
	if err != nil {
		return fmt.Errorf("release events of %s: %w", url, err)
	}
	return nil
}

// distrustHolders ends a statement whose CTE released lists the
// happenings it let go: the event documents of every source that found
// one of them are read whole at their next re-read, whatever they answer
// (a read begun before now included), since one of them may state it and
// take it up (holders.go).
const distrustHolders = `UPDATE ingest_event_documents d SET distrusted_at = now()
		WHERE d.source_id IN (SELECT se.source_id FROM ingest_source_events se JOIN released r ON r.event_id = se.event_id)`

func uuidStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}
