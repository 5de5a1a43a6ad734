package ingest

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Documents that disagree about an event. A page and its .ics export, or a
// listing and the event's own page, often word an event differently; if
// every document's finding were recorded, the event would change back and
// forth on every poll. So one document at a time has the word on each
// event (ingest_event_holders): the first to find it, until one of higher
// precedence (events.Precedence: own page, listing, calendar) finds it too,
// or the holder stops holding it (re-read without it, or gone for good).
// The others' findings still count as finding the event, for feeds and
// backfills; they are recorded only when the event is new.

// claimHappenings takes the word on the happenings of a document where it may, in
// one statement so two documents read at once cannot both win; it returns
// the events the document holds.
func (w *Worker) claimHappenings(ctx context.Context, url string, happenings []StatedHappening) (map[uuid.UUID]bool, error) {
	if len(happenings) == 0 {
		return nil, nil
	}
	ids, ranks := make([]string, 0, len(happenings)), make([]int, 0, len(happenings))
	seen := make(map[uuid.UUID]bool, len(happenings))
	for _, e := range happenings {
		if !seen[e.ID] {
			seen[e.ID] = true
			ids, ranks = append(ids, e.ID.String()), append(ranks, e.Precedence)
		}
	}
	var won []uuid.UUID
	err := w.db.NewRaw(`INSERT INTO ingest_event_holders AS h (event_id, url, precedence)
		SELECT e.id, ?, e.p FROM unnest(?::uuid[], ?::smallint[]) AS e(id, p)
		ON CONFLICT (event_id) DO UPDATE SET url = EXCLUDED.url, precedence = EXCLUDED.precedence
		WHERE h.url = EXCLUDED.url OR EXCLUDED.precedence > h.precedence
		RETURNING event_id`, url, pgdialect.Array(ids), pgdialect.Array(ranks)).Scan(ctx, &won)
	if err != nil {
		return nil, fmt.Errorf("claim events of %s: %w", url, err)
	}
	held := make(map[uuid.UUID]bool, len(won))
	for _, id := range won {
		held[id] = true
	}
	return held, nil
}

// releaseHappenings lets go of the happenings a document held but no longer holds,
// so the next document that holds them has the word.
func (w *Worker) releaseHappenings(ctx context.Context, url string, still []StatedHappening) error {
	ids := make([]string, len(still))
	for i, e := range still {
		ids[i] = e.ID.String()
	}
	_, err := w.db.NewRaw(`DELETE FROM ingest_event_holders WHERE url = ? AND NOT (event_id = ANY(?::uuid[]))`,
		url, pgdialect.Array(ids)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("release events of %s: %w", url, err)
	}
	return nil
}
