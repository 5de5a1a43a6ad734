// Package extracts reads the organization's data for analysis extracts
// (GET /log/extracts/…): feedback with the item it was given on, and
// items with their sources, for a time range, in pages a writer streams.
// It owns no table and no projector: it reads the insights read model
// (which entries and items count, as GET /insights/feedback counts them:
// a deleted feed's leave) and the item read models (titles, addresses),
// as readmodel.Lookups reads across read models for the commands.
package extracts

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Queries reads the extracts.
type Queries struct{ db bun.IDB }

// NewQueries returns the extracts' query side over db.
func NewQueries(db bun.IDB) *Queries { return &Queries{db: db} }

// Range is an organization's data between two exclusive bounds (nil:
// unbounded), as GET /insights/feedback takes them.
type Range struct {
	Org          uuid.UUID
	Since, Until *time.Time
}

// Key is where a page ends: the time and id of its last row.
type Key struct {
	At time.Time
	ID uuid.UUID
}

// Feedback is one feedback entry with the item it was given on.
type Feedback struct {
	FeedbackID      uuid.UUID  `bun:"feedback_id,type:uuid"`
	GivenAt         time.Time  `bun:"given_at"`
	Rating          string     `bun:"rating"`
	Comment         string     `bun:"comment"`
	ItemID          uuid.UUID  `bun:"item_id,type:uuid"`
	FeedKind        string     `bun:"feed_kind"`
	ItemTitle       string     `bun:"item_title"`
	ItemURL         string     `bun:"item_url"`
	ItemAddedAt     *time.Time `bun:"item_added_at"`
	ItemPublishedAt *time.Time `bun:"item_published_at"`
	FeedID          uuid.UUID  `bun:"feed_id,type:uuid"`
	FeedName        string     `bun:"feed_name"`
	SourceID        uuid.UUID  `bun:"source_id,type:uuid"`
	SourceType      string     `bun:"source_type"`
}

// Item is one item ever added to a feed of the organization, with the
// source records it came through.
type Item struct {
	ItemID      uuid.UUID   `bun:"item_id,type:uuid"`
	FeedID      uuid.UUID   `bun:"feed_id,type:uuid"`
	FeedKind    string      `bun:"feed_kind"`
	FeedName    string      `bun:"feed_name"`
	Title       string      `bun:"title"`
	URL         string      `bun:"url"`
	AddedAt     time.Time   `bun:"added_at"`
	PublishedAt *time.Time  `bun:"published_at"`
	SourceIDs   []uuid.UUID `bun:"source_ids,array"`
	SourceTypes []string    `bun:"source_types,array"`
}

// CountFeedback is how many feedback entries r holds.
func (q *Queries) CountFeedback(ctx context.Context, r Range) (int, error) {
	var n int
	err := q.db.NewRaw(`SELECT count(*) FROM insight_feedback AS fb WHERE fb.organization_id = ?
		AND (?::timestamptz IS NULL OR fb.given_at > ?::timestamptz) AND (?::timestamptz IS NULL OR fb.given_at < ?::timestamptz)`,
		r.Org, r.Since, r.Since, r.Until, r.Until).Scan(ctx, &n)
	if err != nil {
		return 0, fmt.Errorf("count the feedback of %s: %w", r.Org, err)
	}
	return n, nil
}

// Feedback reads up to limit entries of r after key (nil: from the
// first), in the order they were given.
func (q *Queries) Feedback(ctx context.Context, r Range, after *Key, limit int) ([]Feedback, error) {
	var at *time.Time
	var id *uuid.UUID
	if after != nil {
		at, id = &after.At, &after.ID
	}
	var rows []Feedback
	err := q.db.NewRaw(`SELECT fb.feedback_id, fb.given_at, fb.rating, fb.comment, fb.item_id, fb.feed_kind,
			coalesce(n.title, ce.details->>'title', '') AS item_title,
			coalesce(n.url, ce.details->'source'->>'url', '') AS item_url,
			fb.item_added_at, n.published_at AS item_published_at,
			fb.feed_id, coalesce(f.name, '') AS feed_name, fb.source_id,
			coalesce(n.source_type, ei.source_type, '') AS source_type
		FROM insight_feedback AS fb
		LEFT JOIN news_items AS n ON n.id = fb.item_id
		LEFT JOIN event_items AS ei ON ei.id = fb.item_id
		LEFT JOIN calendar_events AS ce ON ce.id = coalesce(ei.view_id, ei.event_id)
		LEFT JOIN feeds AS f ON f.id = fb.feed_id
		WHERE fb.organization_id = ?
		  AND (?::timestamptz IS NULL OR fb.given_at > ?::timestamptz) AND (?::timestamptz IS NULL OR fb.given_at < ?::timestamptz)
		  AND (?::timestamptz IS NULL OR (fb.given_at, fb.feedback_id) > (?::timestamptz, ?::uuid))
		ORDER BY fb.given_at, fb.feedback_id LIMIT ?`,
		r.Org, r.Since, r.Since, r.Until, r.Until, at, at, id, limit).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("read the feedback of %s: %w", r.Org, err)
	}
	return rows, nil
}

// CountItems is how many items r holds (added within it).
func (q *Queries) CountItems(ctx context.Context, r Range) (int, error) {
	var n int
	err := q.db.NewRaw(`SELECT count(*) FROM insight_items AS i WHERE i.organization_id = ?
		AND (?::timestamptz IS NULL OR i.added_at > ?::timestamptz) AND (?::timestamptz IS NULL OR i.added_at < ?::timestamptz)`,
		r.Org, r.Since, r.Since, r.Until, r.Until).Scan(ctx, &n)
	if err != nil {
		return 0, fmt.Errorf("count the items of %s: %w", r.Org, err)
	}
	return n, nil
}

// Items reads up to limit items of r after key (nil: from the first), in
// the order they were added.
func (q *Queries) Items(ctx context.Context, r Range, after *Key, limit int) ([]Item, error) {
	var at *time.Time
	var id *uuid.UUID
	if after != nil {
		at, id = &after.At, &after.ID
	}
	var rows []Item
	err := q.db.NewRaw(`SELECT i.item_id, i.feed_id, i.feed_kind, coalesce(f.name, '') AS feed_name,
			coalesce(n.title, ce.details->>'title', '') AS title,
			coalesce(n.url, ce.details->'source'->>'url', '') AS url,
			i.added_at, n.published_at,
			coalesce(s.ids, ARRAY[i.source_id]) AS source_ids,
			coalesce(s.types, ARRAY[coalesce(n.source_type, ei.source_type, '')]) AS source_types
		FROM insight_items AS i
		LEFT JOIN news_items AS n ON n.id = i.item_id
		LEFT JOIN event_items AS ei ON ei.id = i.item_id
		LEFT JOIN calendar_events AS ce ON ce.id = coalesce(ei.view_id, ei.event_id)
		LEFT JOIN feeds AS f ON f.id = i.feed_id
		LEFT JOIN LATERAL (SELECT array_agg(a.source_id ORDER BY a.linked_at, a.source_id) AS ids,
				array_agg(a.source_type ORDER BY a.linked_at, a.source_id) AS types
			FROM event_item_attachments AS a WHERE a.item_id = i.item_id) AS s ON i.feed_kind = 'events'
		WHERE i.organization_id = ?
		  AND (?::timestamptz IS NULL OR i.added_at > ?::timestamptz) AND (?::timestamptz IS NULL OR i.added_at < ?::timestamptz)
		  AND (?::timestamptz IS NULL OR (i.added_at, i.item_id) > (?::timestamptz, ?::uuid))
		ORDER BY i.added_at, i.item_id LIMIT ?`,
		r.Org, r.Since, r.Since, r.Until, r.Until, at, at, id, limit).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("read the items of %s: %w", r.Org, err)
	}
	return rows, nil
}
