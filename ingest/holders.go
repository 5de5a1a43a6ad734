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

// claimEvents takes the word on the events of a document where it may, in
// one statement so two documents read at once cannot both win; it returns
// the events the document holds.
func (w *Worker) claimEvents(ctx context.Context, url string, events []StatedHappening) (map[uuid.UUID]bool, error) {
	if len(events) == 0 {
		return nil, nil
	}
	ids, ranks := make([]uuid.UUID, 0, len(events)), make([]int, 0, len(events))
	seen := make(map[uuid.UUID]bool, len(events))
	for _, e := range events {
		if !seen[e.ID] {
			seen[e.ID] = true
			ids, ranks = append(ids, e.ID), append(ranks, e.Precedence)
		}
	}
	return w.store.ClaimHappenings(ctx, url, ids, ranks)
}

// releaseEvents lets go of the events a document held but no longer holds,
// so the next document that holds them has the word.
func (w *Worker) releaseEvents(ctx context.Context, url string, still []StatedHappening) error {
	ids := make([]uuid.UUID, len(still))
	for i, e := range still {
		ids[i] = e.ID
	}
	return w.store.ReleaseHappenings(ctx, url, ids)
}
