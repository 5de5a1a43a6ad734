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

// HappeningDocuments returns up to n of the source's documents that hold
// happenings, least recently checked first, leaving out those among not;
// when only is not nil, only those among it.
func (s *Store) HappeningDocuments(ctx context.Context, sourceID uuid.UUID, not, only []string, n int) ([]string, error) {
	q := s.db.NewRaw(`SELECT url FROM ingest_event_documents WHERE source_id = ? AND NOT (url = ANY(?))
		ORDER BY checked_at LIMIT ?`, sourceID, pgdialect.Array(not), n)
	if only != nil {
		q = s.db.NewRaw(`SELECT url FROM ingest_event_documents WHERE source_id = ? AND NOT (url = ANY(?)) AND url = ANY(?)
		ORDER BY checked_at LIMIT ?`, sourceID, pgdialect.Array(not), pgdialect.Array(only), n)
	}
	var urls []string
	if err := q.Scan(ctx, &urls); err != nil {
		return nil, fmt.Errorf("read event documents of source %s: %w", sourceID, err)
	}
	return urls, nil
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
// no longer holds (those not among still).
func (s *Store) ReleaseHappenings(ctx context.Context, url string, still []uuid.UUID) error {
	_, err := s.db.NewRaw(`DELETE FROM ingest_event_holders WHERE url = ? AND NOT (event_id = ANY(?::uuid[]))`,
		url, pgdialect.Array(uuidStrings(still))).Exec(ctx)
	if err != nil {
		return fmt.Errorf("release events of %s: %w", url, err)
	}
	return nil
}

func uuidStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}
