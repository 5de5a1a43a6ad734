package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventshape"
)

// EventItems projects the events every feed shares and the items of every
// event feed, with the occurrences of each visible item indexed per feed for
// range queries. An item is visible while at least one of the attachments
// that brought it is attached: detaching the last one hides it at once
// (api.md 3), and another attachment finding the event shows it again, as
// newly added. Deleting a feed deletes its items.
type EventItems struct{}

func (EventItems) Name() string { return "eventitems" }
func (EventItems) Tables() []string {
	return []string{"calendar_events", "event_items", "event_item_attachments", "event_item_occurrences",
		"event_feed_spans", "event_detached_attachments"}
}

func (EventItems) Handlers() []Handler {
	return []Handler{
		On(func(ctx context.Context, db bun.IDB, e domain.EventDiscovered) error {
			return projectEventDetails(ctx, db, e.EventID, e.SourceID, e.Details, e.At)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.EventChanged) error {
			return projectEventDetails(ctx, db, e.EventID, e.SourceID, e.Details, e.At)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.EventItemAdded) error {
			// Added hidden, then shown by its first attachment: one way in for
			// the first attachment and every later one.
			if err := exec(db.NewRaw(`INSERT INTO event_items (id, feed_id, organization_id, event_id, source_id, source_type, added_at, visible)
				VALUES (?, ?, ?, ?, ?, ?, ?, false) ON CONFLICT DO NOTHING`,
				e.ItemID, e.FeedID, e.OrganizationID, e.EventID, e.SourceID, string(e.SourceType), e.At).Exec(ctx)); err != nil {
				return err
			}
			return linkEventItem(ctx, db, e.ItemID, e.FeedID, e.AttachmentID, e.SourceID, e.SourceType, e.At)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.EventItemLinked) error {
			return linkEventItem(ctx, db, e.ItemID, e.FeedID, e.AttachmentID, e.SourceID, e.SourceType, e.At)
		}),
		On(ofKind(domain.FeedEvents, projectEventSourceDetached)),
		On(ofKind(domain.FeedEvents, func(ctx context.Context, db bun.IDB, e domain.FeedDeleted) error {
			for _, table := range []string{"event_item_occurrences", "event_item_attachments", "event_items", "event_feed_spans"} {
				if err := exec(db.NewRaw("DELETE FROM ? WHERE feed_id = ?", bun.Ident(table), e.FeedID).Exec(ctx)); err != nil {
					return err
				}
			}
			return nil
		})),
	}
}

// projectEventDetails stores an event's current state, rendered in both
// item shapes, and replaces the occurrences of every visible item of it, in
// every feed.
func projectEventDetails(ctx context.Context, db bun.IDB, id, sourceID uuid.UUID, d domain.EventDetails, at time.Time) error {
	details, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode details of event %s: %w", id, err)
	}
	current, err := eventshape.RenderStatic(d, false)
	if err != nil {
		return err
	}
	legacy, err := eventshape.RenderStatic(d, true)
	if err != nil {
		return err
	}
	source, err := eventshape.SourceBlock(d)
	if err != nil {
		return err
	}
	if err := exec(db.NewRaw(`INSERT INTO calendar_events (id, source_id, details, current_head, current_published, current_tail,
			legacy_head, legacy_published, legacy_tail, source_block, discovered_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET source_id = EXCLUDED.source_id, details = EXCLUDED.details,
			current_head = EXCLUDED.current_head, current_published = EXCLUDED.current_published, current_tail = EXCLUDED.current_tail,
			legacy_head = EXCLUDED.legacy_head, legacy_published = EXCLUDED.legacy_published, legacy_tail = EXCLUDED.legacy_tail,
			source_block = EXCLUDED.source_block, updated_at = EXCLUDED.updated_at`,
		id, sourceID, string(details), string(current.Head), string(current.Published), string(current.Tail),
		string(legacy.Head), string(legacy.Published), string(legacy.Tail), string(source), at, at).Exec(ctx)); err != nil {
		return err
	}
	if err := exec(db.NewRaw(`DELETE FROM event_item_occurrences AS o USING event_items AS i
		WHERE i.event_id = ? AND o.item_id = i.id`, id).Exec(ctx)); err != nil {
		return err
	}
	var items []visibleItem
	if err := db.NewRaw(`SELECT id, feed_id, added_at FROM event_items WHERE event_id = ? AND visible`, id).Scan(ctx, &items); err != nil {
		return exec(nil, err)
	}
	return insertOccurrences(ctx, db, items, d)
}

// linkEventItem records that an attachment brought the item. The first
// current attachment makes a hidden item visible, as added now. Links
// through an attachment already detached (a crawl that raced the detach)
// are ignored.
func linkEventItem(ctx context.Context, db bun.IDB, itemID, feedID, attachmentID, sourceID uuid.UUID, sourceType domain.SourceType, at time.Time) error {
	res, err := db.NewRaw(`INSERT INTO event_item_attachments (item_id, attachment_id, feed_id, source_id, source_type, linked_at)
		SELECT ?, ?, ?, ?, ?, ?
		WHERE EXISTS (SELECT 1 FROM event_items WHERE id = ?)
		  AND NOT EXISTS (SELECT 1 FROM event_detached_attachments WHERE attachment_id = ?)
		ON CONFLICT DO NOTHING`,
		itemID, attachmentID, feedID, sourceID, string(sourceType), at, itemID, attachmentID).Exec(ctx)
	if err != nil {
		return exec(nil, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	var shown []struct {
		visibleItem
		Details *domain.EventDetails `bun:"details,type:jsonb"`
	}
	err = db.NewRaw(`UPDATE event_items AS i SET visible = true, added_at = ?, source_id = ?, source_type = ?
		WHERE i.id = ? AND NOT i.visible
		RETURNING i.id, i.feed_id, i.added_at, (SELECT details FROM calendar_events WHERE id = i.event_id) AS details`,
		at, sourceID, string(sourceType), itemID).Scan(ctx, &shown)
	if err != nil {
		return exec(nil, err)
	}
	if len(shown) == 0 || shown[0].Details == nil {
		// Already visible, or its event is not known yet: the event's
		// discovery will write the occurrences.
		return nil
	}
	return insertOccurrences(ctx, db, []visibleItem{shown[0].visibleItem}, *shown[0].Details)
}

// projectEventSourceDetached hides the items no other attachment holds and
// names a remaining attachment as the source of those others hold.
func projectEventSourceDetached(ctx context.Context, db bun.IDB, e domain.SourceDetached) error {
	if err := exec(db.NewRaw(`INSERT INTO event_detached_attachments (attachment_id) VALUES (?) ON CONFLICT DO NOTHING`,
		e.AttachmentID).Exec(ctx)); err != nil {
		return err
	}
	var items []string
	if err := db.NewRaw(`DELETE FROM event_item_attachments WHERE attachment_id = ? RETURNING item_id::text`,
		e.AttachmentID).Scan(ctx, &items); err != nil {
		return exec(nil, err)
	}
	if len(items) == 0 {
		return nil
	}
	ids := pgdialect.Array(items)
	stmts := []string{
		`UPDATE event_items AS i SET source_id = a.source_id, source_type = a.source_type
		FROM (SELECT DISTINCT ON (item_id) item_id, source_id, source_type FROM event_item_attachments
			WHERE item_id = ANY(?::uuid[]) ORDER BY item_id, linked_at, attachment_id) AS a
		WHERE i.id = a.item_id`,
		`UPDATE event_items AS i SET visible = false
		WHERE i.id = ANY(?::uuid[]) AND NOT EXISTS (SELECT 1 FROM event_item_attachments AS a WHERE a.item_id = i.id)`,
		`DELETE FROM event_item_occurrences AS o USING event_items AS i
		WHERE i.id = ANY(?::uuid[]) AND NOT i.visible AND o.item_id = i.id`,
	}
	for _, s := range stmts {
		if err := exec(db.NewRaw(s, ids).Exec(ctx)); err != nil {
			return err
		}
	}
	return nil
}

// visibleItem is an item whose occurrences are to be written.
type visibleItem struct {
	ID      uuid.UUID `bun:"id"`
	FeedID  uuid.UUID `bun:"feed_id"`
	AddedAt time.Time `bun:"added_at"`
}

// insertOccurrences writes the occurrence rows of items, from their event's
// details, and widens their feeds' longest span: one statement for every
// item and occurrence. When an occurrence and an instance are over comes
// from the domain (eventshape.Flatten), so the range query and the
// occurrence blocks agree.
func insertOccurrences(ctx context.Context, db bun.IDB, items []visibleItem, d domain.EventDetails) error {
	rows := occurrenceRows(d)
	if len(items) == 0 || len(rows) == 0 {
		return nil
	}
	itemIDs, feeds, added := make([]string, len(items)), make([]string, len(items)), make([]time.Time, len(items))
	for i, it := range items {
		itemIDs[i], feeds[i], added[i] = it.ID.String(), it.FeedID.String(), it.AddedAt
	}
	n := len(rows)
	ids, instances, statuses := make([]string, n), make([]string, n), make([]string, n)
	stated := make([]*time.Time, n)
	starts, ends, prevEnds, prevStarts, instanceEnds := make([]time.Time, n), make([]time.Time, n), make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
	for i, r := range rows {
		ids[i], instances[i], statuses[i], stated[i] = r.ID.String(), r.InstanceID.String(), r.Stated, r.End
		starts[i], ends[i], prevEnds[i], prevStarts[i], instanceEnds[i] = r.Start, r.ends, r.prevEnds, r.prevStart, r.InstanceEnds
	}
	return exec(db.NewRaw(`WITH ins AS (
		INSERT INTO event_item_occurrences (feed_id, item_id, occurrence_id, instance_id, starts_at, end_at, ends_at,
			prev_ends, prev_start, status, instance_ends_at, added_at)
		SELECT i.feed_id, i.item_id, o.id, o.instance_id, o.starts_at, o.end_at, o.ends_at,
			o.prev_ends, o.prev_start, o.status, o.instance_ends_at, i.added_at
		FROM unnest(?::uuid[], ?::uuid[], ?::timestamptz[]) AS i(item_id, feed_id, added_at)
		CROSS JOIN unnest(?::uuid[], ?::uuid[], ?::timestamptz[], ?::timestamptz[], ?::timestamptz[],
			?::timestamptz[], ?::timestamptz[], ?::text[], ?::timestamptz[])
			AS o(id, instance_id, starts_at, end_at, ends_at, prev_ends, prev_start, status, instance_ends_at)
		ON CONFLICT DO NOTHING
		RETURNING feed_id, ends_at - starts_at AS span
	)
	INSERT INTO event_feed_spans (feed_id, longest)
	SELECT feed_id, max(span) FROM ins GROUP BY feed_id
	ON CONFLICT (feed_id) DO UPDATE SET longest = greatest(event_feed_spans.longest, EXCLUDED.longest)`,
		pgdialect.Array(itemIDs), pgdialect.Array(feeds), pgdialect.Array(added),
		pgdialect.Array(ids), pgdialect.Array(instances), pgdialect.Array(starts), pgdialect.Array(stated), pgdialect.Array(ends),
		pgdialect.Array(prevEnds), pgdialect.Array(prevStarts), pgdialect.Array(statuses), pgdialect.Array(instanceEnds),
	).Exec(ctx))
}

// occurrenceRow is one occurrence of an event as the range index holds it.
type occurrenceRow struct {
	eventshape.Occurrence
	ends, prevEnds, prevStart time.Time
}

// occurrenceRows are an event's occurrences in start order (then id), each
// with when it is over and the latest end and the last start of those
// before it (year 1 for the first): in any range, the occurrence whose
// earlier ones are all over before the range and all began before it is
// the event's first there.
func occurrenceRows(d domain.EventDetails) []occurrenceRow {
	var rows []occurrenceRow
	for _, o := range eventshape.Flatten(d) {
		rows = append(rows, occurrenceRow{Occurrence: o, ends: domain.EventOccurrence{Start: o.Start, End: o.End}.Ends()})
	}
	slices.SortFunc(rows, func(a, b occurrenceRow) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return slices.Compare(a.ID[:], b.ID[:])
	})
	var latest, last time.Time
	for i := range rows {
		rows[i].prevEnds, rows[i].prevStart = latest, last
		if rows[i].ends.After(latest) {
			latest = rows[i].ends
		}
		last = rows[i].Start
	}
	return rows
}
