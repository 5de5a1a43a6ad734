package ingest

import (
	"context"

	"github.com/google/uuid"
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
	ids, ranks := make([]uuid.UUID, 0, len(happenings)), make([]int, 0, len(happenings))
	seen := make(map[uuid.UUID]bool, len(happenings))
	for _, e := range happenings {
		if !seen[e.ID] {
			seen[e.ID] = true
			ids, ranks = append(ids, e.ID), append(ranks, e.Precedence)
		}
	}
	return w.store.ClaimHappenings(ctx, url, ids, ranks)
}

// releaseHappenings lets go of the happenings a document held but no longer holds,
// so the next document that holds them has the word.
func (w *Worker) releaseHappenings(ctx context.Context, url string, still []StatedHappening) error {
	ids := make([]uuid.UUID, len(still))
	for i, e := range still {
		ids[i] = e.ID
	}
	return w.store.ReleaseHappenings(ctx, url, ids)
}
