package readmodel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// EventItem is one event in one feed, with the event's current details.
type EventItem struct {
	ID         uuid.UUID           `bun:"id"`
	FeedID     uuid.UUID           `bun:"feed_id"`
	EventID    uuid.UUID           `bun:"event_id"`
	SourceID   uuid.UUID           `bun:"source_id"`
	SourceType string              `bun:"source_type"`
	AddedAt    time.Time           `bun:"added_at"`
	Details    domain.EventDetails `bun:"details,type:jsonb"`
}

// Event item orders (api.md 4.6).
const (
	OrderByOccurrence = "occurrence"
	OrderByCreated    = "created"
)

// EventItemFilter selects a page of a feed's event items: those with an
// occurrence in [Since, Until) (domain.EventOccurrence.Overlaps) of an
// instance whose status at Now is Status (any when empty).
type EventItemFilter struct {
	Since, Until time.Time
	Status       string
	OrderBy      string
	Limit        int
	Offset       int
	// Now is the clock the statuses are judged by (completed is derived).
	Now time.Time
}

// EventItemPage is a page of event items, how many events match in all, and
// the feed's config (what relevance is scored against).
type EventItemPage struct {
	Items  []EventItem
	Total  int
	Config domain.FeedConfig
}

// EventItems pages through the items of an organization's event feed whose
// occurrences the filter selects. Soonest first (by the earliest selected
// occurrence, then id) or newest first (by addedToFeedAt, then id, both
// descending). Matching, ordering and counting read only the occurrence
// index, in one statement with the page's rows.
func (q *Queries) EventItems(ctx context.Context, org, feedID uuid.UUID, f EventItemFilter) (EventItemPage, error) {
	feed, err := q.Feed(ctx, domain.FeedEvents, org, feedID)
	if err != nil {
		return EventItemPage{}, err
	}
	page := EventItemPage{Items: []EventItem{}, Config: feedConfig(feed)}
	statusCond, statusArgs := statusCondition(f.Status, f.Now)
	order := "m.first_start, m.item_id"
	if f.OrderBy == OrderByCreated {
		order = "m.added_at DESC, m.item_id DESC"
	}
	args := []any{feedID, f.Since, feedID, f.Until, f.Since, f.Since}
	args = append(args, statusArgs...)
	args = append(args, f.Limit, f.Offset)
	var rows []struct {
		EventItem
		Total int `bun:"total"`
	}
	err = q.db.NewRaw(`WITH m AS (
			SELECT item_id, min(starts_at) AS first_start, max(added_at) AS added_at
			FROM event_item_occurrences
			WHERE feed_id = ?
			  AND starts_at >= ?::timestamptz - coalesce((SELECT longest FROM event_feed_spans WHERE feed_id = ?), interval '0')
			  AND starts_at < ?
			  AND (ends_at > ? OR starts_at >= ?)`+statusCond+`
			GROUP BY item_id
		), page AS (
			SELECT m.*, count(*) OVER () AS total FROM m ORDER BY `+order+` LIMIT ? OFFSET ?
		)
		SELECT i.id, i.feed_id, i.event_id, i.source_id, i.source_type, i.added_at, e.details, m.total
		FROM page AS m
		JOIN event_items AS i ON i.id = m.item_id
		JOIN calendar_events AS e ON e.id = i.event_id
		ORDER BY `+order, args...).Scan(ctx, &rows)
	if err != nil {
		return EventItemPage{}, fmt.Errorf("list items of event feed %s: %w", feedID, err)
	}
	for _, r := range rows {
		page.Items = append(page.Items, r.EventItem)
		page.Total = r.Total
	}
	if len(rows) == 0 && f.Offset > 0 {
		// Past the end the page carries no total: count on its own.
		if page.Total, err = q.countEventItems(ctx, feedID, f); err != nil {
			return EventItemPage{}, err
		}
	}
	return page, nil
}

func (q *Queries) countEventItems(ctx context.Context, feedID uuid.UUID, f EventItemFilter) (int, error) {
	statusCond, statusArgs := statusCondition(f.Status, f.Now)
	args := append([]any{feedID, f.Since, feedID, f.Until, f.Since, f.Since}, statusArgs...)
	var n int
	err := q.db.NewRaw(`SELECT count(DISTINCT item_id) FROM event_item_occurrences
		WHERE feed_id = ?
		  AND starts_at >= ?::timestamptz - coalesce((SELECT longest FROM event_feed_spans WHERE feed_id = ?), interval '0')
		  AND starts_at < ?
		  AND (ends_at > ? OR starts_at >= ?)`+statusCond, args...).Scan(ctx, &n)
	if err != nil {
		return 0, fmt.Errorf("count items of event feed %s: %w", feedID, err)
	}
	return n, nil
}

// statusCondition restates domain.EventInstance.StatusAt on the occurrence
// rows: completed is an instance going ahead whose last occurrence has
// ended by now; scheduled and rescheduled ones have not.
func statusCondition(status string, now time.Time) (string, []any) {
	switch status {
	case "":
		return "", nil
	case domain.StatusCompleted:
		return " AND status IN ('scheduled', 'rescheduled') AND instance_ends_at <= ?", []any{now}
	case domain.StatusScheduled, domain.StatusRescheduled:
		return " AND status = ? AND instance_ends_at > ?", []any{status, now}
	default:
		return " AND status = ?", []any{status}
	}
}

// EventItem returns one visible item of an organization's event feed, and
// the feed's config.
func (q *Queries) EventItem(ctx context.Context, org, feedID, itemID uuid.UUID) (EventItem, domain.FeedConfig, error) {
	feed, err := q.Feed(ctx, domain.FeedEvents, org, feedID)
	if err != nil {
		return EventItem{}, domain.FeedConfig{}, err
	}
	it, err := q.eventItem(ctx, feedID, itemID)
	return it, feedConfig(feed), err
}

func (q *Queries) eventItem(ctx context.Context, feedID, itemID uuid.UUID) (EventItem, error) {
	var it EventItem
	err := q.db.NewRaw(`SELECT i.id, i.feed_id, i.event_id, i.source_id, i.source_type, i.added_at, e.details
		FROM event_items AS i JOIN calendar_events AS e ON e.id = i.event_id
		WHERE i.id = ? AND i.feed_id = ? AND i.visible`, itemID, feedID).Scan(ctx, &it)
	if errors.Is(err, sql.ErrNoRows) {
		return EventItem{}, &domain.NotFoundError{Resource: "item", ID: itemID.String()}
	}
	if err != nil {
		return EventItem{}, fmt.Errorf("get event item %s: %w", itemID, err)
	}
	return it, nil
}

// ItemRef implements commands.Lookups: the item of a feed of a kind that
// the organization sees.
func (q *Queries) ItemRef(ctx context.Context, kind domain.FeedKind, org, feedID, itemID uuid.UUID) (domain.ItemRef, error) {
	if kind != domain.FeedEvents {
		it, err := q.NewsItem(ctx, org, feedID, itemID)
		if err != nil {
			return domain.ItemRef{}, err
		}
		return domain.ItemRef{FeedID: it.FeedID, NewsPageID: it.NewsPageID, SourceID: it.SourceID}, nil
	}
	if _, err := q.Feed(ctx, domain.FeedEvents, org, feedID); err != nil {
		return domain.ItemRef{}, err
	}
	it, err := q.eventItem(ctx, feedID, itemID)
	if err != nil {
		return domain.ItemRef{}, err
	}
	return domain.ItemRef{FeedID: it.FeedID, EventID: it.EventID, SourceID: it.SourceID}, nil
}

func feedConfig(f Feed) domain.FeedConfig {
	if f.Config == nil {
		return domain.DefaultFeedConfig()
	}
	return *f.Config
}
