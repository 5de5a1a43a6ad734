package happeningitems

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// HappeningsStartingAt are the happenings of the feed's items with an
// occurrence starting at start (commands.HappeningCopyFinder): the items a
// happening found through another source may be a copy of. It walks the
// (feed, start) index of event_item_occurrences.
func (q *Queries) HappeningsStartingAt(ctx context.Context, feedID uuid.UUID, start time.Time) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := q.db.NewRaw(`SELECT DISTINCT i.event_id FROM event_item_occurrences AS o JOIN event_items AS i ON i.id = o.item_id
		WHERE o.feed_id = ? AND o.starts_at = ? LIMIT 50`, feedID, start).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("events of feed %s starting at %s: %w", feedID, start, err)
	}
	return ids, nil
}
