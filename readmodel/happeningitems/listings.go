package happeningitems

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// One happening, several listings. A happening of an event feed that
// another source of the feed lists too is one item (domain/copies.go);
// the other listing is recorded on the item (EventItemCopyFound), and the
// item is shown as the listings merged (domain.MergeHappenings): the
// details of the one of highest precedence, completed by the others, and
// the union of their occurrences. The merged listing is stored as a row of
// calendar_events of its own (domain.MergedHappeningID of the item), which
// the item's view_id names, so that lists, search, the calendar feed out
// and the occurrence index read it as they read any happening. It is
// merged anew whenever one of its listings changes, another is found or
// one is split off.

// projectListing records another listing of an item and shows the item
// merged. The item stays in the feed while an attachment that found its
// own happening is attached (event_item_attachments), as before: the
// other listings' attachments do not hold it.
func projectListing(ctx context.Context, db bun.IDB, e domain.HappeningItemCopyFound, pos eventstore.Position) error {
	var items []uuid.UUID
	if err := db.NewRaw(`INSERT INTO event_item_listings (item_id, feed_id, event_id, found_at)
		SELECT id, feed_id, ?, ? FROM event_items WHERE id = ?
		ON CONFLICT DO NOTHING RETURNING item_id`, e.CopyID, e.At, e.ItemID).Scan(ctx, &items); err != nil {
		return projections.Exec(nil, err)
	}
	if len(items) == 0 {
		return nil
	}
	return remerge(ctx, db, e.ItemID, pos)
}

// projectListingSplit forgets a listing split off an item and shows the
// item from the listings left; the item the listing became
// (HappeningItemAdded) shows itself.
func projectListingSplit(ctx context.Context, db bun.IDB, e domain.HappeningItemCopySplit, pos eventstore.Position) error {
	if err := projections.Exec(db.NewRaw(`DELETE FROM event_item_listings WHERE item_id = ? AND event_id = ?`,
		e.ItemID, e.CopyID).Exec(ctx)); err != nil {
		return err
	}
	return remerge(ctx, db, e.ItemID, pos)
}

// listing is one of an item's listings as calendar_events holds it.
type listing struct {
	ID           uuid.UUID               `bun:"id"`
	SourceID     uuid.UUID               `bun:"source_id"`
	Details      domain.HappeningDetails `bun:"details,type:jsonb"`
	DiscoveredAt time.Time               `bun:"discovered_at"`
	UpdatedAt    time.Time               `bun:"updated_at"`
	FoundAt      time.Time               `bun:"found_at"`
}

// remerge shows an item as its listings merged, or as its own happening
// when it has no other listing: it stores the merged listing, points the
// item at it and, when the item is visible, rewrites its occurrences and
// score as a change at pos. An item whose happening is not known yet
// waits for its discovery.
func remerge(ctx context.Context, db bun.IDB, itemID uuid.UUID, pos eventstore.Position) error {
	var item struct {
		visibleItem
		EventID uuid.UUID  `bun:"event_id"`
		ViewID  *uuid.UUID `bun:"view_id"`
		Visible bool       `bun:"visible"`
	}
	err := db.NewRaw(`SELECT i.id, i.feed_id, i.added_at, i.event_id, i.view_id, i.visible, c.config
		FROM event_items AS i LEFT JOIN event_feed_configs AS c ON c.feed_id = i.feed_id WHERE i.id = ?`, itemID).Scan(ctx, &item)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return projections.Exec(nil, err)
	}
	var listings []listing
	if err := db.NewRaw(`SELECT e.id, e.source_id, e.details, e.discovered_at, e.updated_at, ?1::timestamptz AS found_at
			FROM calendar_events AS e WHERE e.id = ?0
		UNION ALL
		(SELECT e.id, e.source_id, e.details, e.discovered_at, e.updated_at, l.found_at
			FROM event_item_listings AS l JOIN calendar_events AS e ON e.id = l.event_id
			WHERE l.item_id = ?2 ORDER BY l.found_at, l.event_id)`,
		item.EventID, item.AddedAt, itemID).Scan(ctx, &listings); err != nil {
		return projections.Exec(nil, err)
	}
	if len(listings) == 0 || listings[0].ID != item.EventID {
		return nil
	}
	own := listings[0]
	view := own.Details
	var viewID *uuid.UUID
	if len(listings) > 1 {
		copies := make([]domain.HappeningDetails, 0, len(listings)-1)
		updated := own.UpdatedAt
		for _, l := range listings[1:] {
			copies = append(copies, l.Details)
			updated = later(updated, later(l.UpdatedAt, l.FoundAt))
		}
		view = domain.MergeHappenings(own.Details, copies...)
		id := domain.MergedHappeningID(itemID)
		viewID = &id
		if err := storeMerged(ctx, db, id, own, view, updated); err != nil {
			return err
		}
	} else if item.ViewID != nil {
		if err := projections.Exec(db.NewRaw(`DELETE FROM calendar_events WHERE id = ?`, *item.ViewID).Exec(ctx)); err != nil {
			return err
		}
	}
	if err := projections.Exec(db.NewRaw(`DELETE FROM event_item_occurrences WHERE item_id = ?`, itemID).Exec(ctx)); err != nil {
		return err
	}
	if err := projections.Exec(db.NewRaw(`UPDATE event_items SET view_id = ?1,
			change_commit = CASE WHEN visible THEN ?2 ELSE change_commit END,
			change_prepare = CASE WHEN visible THEN ?3 ELSE change_prepare END
		WHERE id = ?0`, itemID, viewID, int64(pos.Commit), int64(pos.Prepare)).Exec(ctx)); err != nil {
		return err
	}
	if !item.Visible {
		return nil
	}
	items := []visibleItem{item.visibleItem}
	if err := scoreItems(ctx, db, items, view); err != nil {
		return err
	}
	return insertOccurrences(ctx, db, items, view)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// storeMerged stores an item's merged listing under id, discovered when
// the item's own happening was and updated when the latest of its listings
// changed or was found.
func storeMerged(ctx context.Context, db bun.IDB, id uuid.UUID, own listing, d domain.HappeningDetails, updated time.Time) error {
	r, err := render(d)
	if err != nil {
		return fmt.Errorf("render merged event %s: %w", id, err)
	}
	return projections.Exec(db.NewRaw(`INSERT INTO calendar_events (id, source_id, details, current_head, current_published, current_tail,
			legacy_head, legacy_published, legacy_tail, source_block, discovered_at, updated_at)
		VALUES (?0, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
		ON CONFLICT (id) DO UPDATE SET source_id = EXCLUDED.source_id, details = EXCLUDED.details,
			current_head = EXCLUDED.current_head, current_published = EXCLUDED.current_published, current_tail = EXCLUDED.current_tail,
			legacy_head = EXCLUDED.legacy_head, legacy_published = EXCLUDED.legacy_published, legacy_tail = EXCLUDED.legacy_tail,
			source_block = EXCLUDED.source_block, discovered_at = EXCLUDED.discovered_at, updated_at = EXCLUDED.updated_at`,
		id, own.SourceID, string(r.details), string(r.current.Head), string(r.current.Published), string(r.current.Tail),
		string(r.legacy.Head), string(r.legacy.Published), string(r.legacy.Tail), string(r.source), own.DiscoveredAt, updated).Exec(ctx))
}

// rendered is a happening as calendar_events stores it.
type rendered struct {
	details         json.RawMessage
	current, legacy shape.Static
	source          []byte
}
