package readmodel

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventshape"
)

// EventItem is one event in one feed, with its event's members as the
// shape asked for renders them and every occurrence of the event.
type EventItem struct {
	ID         uuid.UUID
	FeedID     uuid.UUID
	EventID    uuid.UUID
	SourceID   uuid.UUID
	SourceType string
	AddedAt    time.Time
	Static     eventshape.Static
	// Source is the source block, when asked for.
	Source      []byte
	Occurrences []eventshape.Occurrence
}

// EventItemShape is which of an event's stored renderings a read returns.
type EventItemShape struct {
	Legacy        bool
	IncludeSource bool
}

// columns are the stored renderings of the shape (calendar_events AS e).
func (s EventItemShape) columns() string {
	prefix, source := "e.current_", "''"
	if s.Legacy {
		prefix = "e.legacy_"
	}
	if s.IncludeSource && !s.Legacy {
		source = "e.source_block"
	}
	return prefix + "head, " + prefix + "published, " + prefix + "tail, " + source
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
	Now   time.Time
	Shape EventItemShape
}

// EventItemPage is a page of event items, how many events match in all, and
// the feed's config (what relevance is scored against).
type EventItemPage struct {
	Items  []EventItem
	Total  int
	Config domain.FeedConfig
}

// EventItems pages through the items of an organization's event feed whose
// occurrences the filter selects: soonest first (by the earliest selected
// occurrence, then id) or newest first (by addedToFeedAt, then id, both
// descending), with how many match. The page, its rows and the total are
// one statement that reads only the occurrence index (and the page's 20
// events): without a status filter each matching item is the one row of
// the range that is its first there (see event_item_occurrences), so
// nothing is grouped and the soonest-first page stops after its rows.
func (q *Queries) EventItems(ctx context.Context, org, feedID uuid.UUID, f EventItemFilter) (EventItemPage, error) {
	feed, err := q.Feed(ctx, domain.FeedEvents, org, feedID)
	if err != nil {
		return EventItemPage{}, err
	}
	page := EventItemPage{Items: []EventItem{}, Config: feedConfig(feed)}
	statement, args := eventItemsSQL(feedID, f)
	err = q.rows(ctx, statement, args, func(rows *sql.Rows) error {
		it, err := scanEventItem(rows, &page.Total)
		if err != nil {
			return err
		}
		page.Items = append(page.Items, it)
		return nil
	})
	if err != nil {
		return EventItemPage{}, fmt.Errorf("list items of event feed %s: %w", feedID, err)
	}
	if len(page.Items) == 0 && f.Offset > 0 {
		// A page past the end has no row to carry the total.
		statement, args := eventItemsCountSQL(feedID, f)
		if err := q.rows(ctx, statement, args, func(rows *sql.Rows) error { return rows.Scan(&page.Total) }); err != nil {
			return EventItemPage{}, fmt.Errorf("count items of event feed %s: %w", feedID, err)
		}
	}
	if err := q.occurrencesOf(ctx, page.Items); err != nil {
		return EventItemPage{}, err
	}
	return page, nil
}

// eventItemColumns are what scanEventItem reads, before the shape's.
const eventItemColumns = `i.id, i.feed_id, i.event_id, i.source_id, i.source_type, i.added_at, `

func scanEventItem(rows *sql.Rows, extra ...any) (EventItem, error) {
	var it EventItem
	var head, published, tail, source string
	dest := append([]any{&it.ID, &it.FeedID, &it.EventID, &it.SourceID, &it.SourceType, &it.AddedAt, &head, &published, &tail, &source}, extra...)
	if err := rows.Scan(dest...); err != nil {
		return EventItem{}, err
	}
	it.Static = eventshape.Static{Head: []byte(head), Published: []byte(published), Tail: []byte(tail)}
	if source != "" {
		it.Source = []byte(source)
	}
	return it, nil
}

// occurrencesOf reads every occurrence of the items' events (their rows in
// the range index), one statement for the page.
func (q *Queries) occurrencesOf(ctx context.Context, items []EventItem) error {
	if len(items) == 0 {
		return nil
	}
	ids := make([][16]byte, len(items))
	index := make(map[uuid.UUID]int, len(items))
	for i, it := range items {
		ids[i], index[it.ID] = it.ID, i
	}
	err := q.rows(ctx, `SELECT item_id, occurrence_id, instance_id, starts_at, end_at, status, instance_ends_at
		FROM event_item_occurrences WHERE item_id = ANY($1)`, []any{ids}, func(rows *sql.Rows) error {
		var item uuid.UUID
		var o eventshape.Occurrence
		var end sql.NullTime
		if err := rows.Scan(&item, &o.ID, &o.InstanceID, &o.Start, &end, &o.Stated, &o.InstanceEnds); err != nil {
			return err
		}
		if end.Valid {
			o.End = &end.Time
		}
		it := &items[index[item]]
		it.Occurrences = append(it.Occurrences, o)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read occurrences of event items: %w", err)
	}
	return nil
}

// inWindow selects the occurrence rows of feed $1 going on in [$2, $3)
// (domain.EventOccurrence.Overlaps): the index range reaches back by the
// feed's longest occurrence, for those already under way at $2.
const inWindow = `feed_id = $1
	AND starts_at >= $2::timestamptz - coalesce((SELECT longest FROM event_feed_spans WHERE feed_id = $1), interval '0')
	AND starts_at < $3 AND (ends_at > $2 OR starts_at >= $2)`

// firstInWindow keeps, of those, each item's first one in the range: all
// its earlier occurrences are over before $2 and began before it.
const firstInWindow = ` AND prev_ends <= $2 AND prev_start < $2`

// candidates are the matching items, one row each (item_id, first_start,
// added_at), and the arguments after $1-$3.
func candidates(f EventItemFilter) (string, []any) {
	if f.Status == "" {
		return `SELECT item_id, starts_at AS first_start, added_at FROM event_item_occurrences WHERE ` + inWindow + firstInWindow, nil
	}
	cond, args := statusCondition(f.Status, f.Now)
	return `SELECT item_id, min(starts_at) AS first_start, max(added_at) AS added_at FROM event_item_occurrences
		WHERE ` + inWindow + cond + ` GROUP BY item_id`, args
}

func eventItemsSQL(feedID uuid.UUID, f EventItemFilter) (string, []any) {
	m, extra := candidates(f)
	args := append([]any{feedID, f.Since, f.Until}, extra...)
	n := len(args)
	order := "first_start, item_id"
	if f.OrderBy == OrderByCreated {
		order = "added_at DESC, item_id DESC"
	}
	args = append(args, f.Limit, f.Offset)
	return fmt.Sprintf(`WITH m AS NOT MATERIALIZED (%s),
		page AS (SELECT * FROM m ORDER BY %s LIMIT $%d OFFSET $%d)
		SELECT `+eventItemColumns+`%s, (SELECT count(*) FROM m)
		FROM page
		JOIN event_items AS i ON i.id = page.item_id
		JOIN calendar_events AS e ON e.id = i.event_id
		ORDER BY %s`, m, order, n+1, n+2, f.Shape.columns(), "page."+strings.ReplaceAll(order, ", ", ", page.")), args
}

func eventItemsCountSQL(feedID uuid.UUID, f EventItemFilter) (string, []any) {
	m, extra := candidates(f)
	return `SELECT count(*) FROM (` + m + `) AS m`, append([]any{feedID, f.Since, f.Until}, extra...)
}

// statusCondition restates domain.EventInstance.StatusAt on the occurrence
// rows, with its arguments from $4: completed is an instance going ahead
// whose last occurrence has ended by now; scheduled and rescheduled ones
// have not.
func statusCondition(status string, now time.Time) (string, []any) {
	switch status {
	case domain.StatusCompleted:
		return " AND status IN ('scheduled', 'rescheduled') AND instance_ends_at <= $4", []any{now}
	case domain.StatusScheduled, domain.StatusRescheduled:
		return " AND status = $4 AND instance_ends_at > $5", []any{status, now}
	default:
		return " AND status = $4", []any{status}
	}
}

// rows runs a statement with $n parameters through database/sql, whose
// pgx driver prepares each statement text once per connection (bun would
// inline the arguments, making every request's SQL new text to parse and
// plan), and hands each row to scan.
func (q *Queries) rows(ctx context.Context, statement string, args []any, scan func(*sql.Rows) error) error {
	var rows *sql.Rows
	var err error
	switch db := q.db.(type) {
	case *bun.DB:
		rows, err = db.DB.QueryContext(ctx, statement, args...)
	case bun.Tx:
		rows, err = db.Tx.QueryContext(ctx, statement, args...)
	case bun.Conn:
		rows, err = db.Conn.QueryContext(ctx, statement, args...)
	default:
		return fmt.Errorf("query: unsupported connection %T", q.db)
	}
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// EventItem returns one visible item of an organization's event feed, in
// the shape asked for, and the feed's config.
func (q *Queries) EventItem(ctx context.Context, org, feedID, itemID uuid.UUID, shape EventItemShape) (EventItem, domain.FeedConfig, error) {
	feed, err := q.Feed(ctx, domain.FeedEvents, org, feedID)
	if err != nil {
		return EventItem{}, domain.FeedConfig{}, err
	}
	var items []EventItem
	err = q.rows(ctx, `SELECT `+eventItemColumns+shape.columns()+`
		FROM event_items AS i JOIN calendar_events AS e ON e.id = i.event_id
		WHERE i.id = $1 AND i.feed_id = $2 AND i.visible`, []any{itemID, feedID}, func(rows *sql.Rows) error {
		it, err := scanEventItem(rows)
		if err != nil {
			return err
		}
		items = append(items, it)
		return nil
	})
	if err != nil {
		return EventItem{}, domain.FeedConfig{}, fmt.Errorf("get event item %s: %w", itemID, err)
	}
	if len(items) == 0 {
		return EventItem{}, domain.FeedConfig{}, &domain.NotFoundError{Resource: "item", ID: itemID.String()}
	}
	if err := q.occurrencesOf(ctx, items); err != nil {
		return EventItem{}, domain.FeedConfig{}, err
	}
	return items[0], feedConfig(feed), nil
}

// EventDetails returns the current details of events, by id.
func (q *Queries) EventDetails(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]domain.EventDetails, error) {
	keys := make([][16]byte, len(ids))
	for i, id := range ids {
		keys[i] = id
	}
	out := make(map[uuid.UUID]domain.EventDetails, len(ids))
	err := q.rows(ctx, `SELECT id, details FROM calendar_events WHERE id = ANY($1)`, []any{keys}, func(rows *sql.Rows) error {
		var id uuid.UUID
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			return err
		}
		var d domain.EventDetails
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("decode event %s: %w", id, err)
		}
		out[id] = d
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read event details: %w", err)
	}
	return out, nil
}

func (q *Queries) eventItemRef(ctx context.Context, feedID, itemID uuid.UUID) (domain.ItemRef, error) {
	var ref domain.ItemRef
	err := q.db.NewRaw(`SELECT feed_id, event_id, source_id FROM event_items WHERE id = ? AND feed_id = ? AND visible`, itemID, feedID).
		Scan(ctx, &ref.FeedID, &ref.EventID, &ref.SourceID)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.ItemRef{}, &domain.NotFoundError{Resource: "item", ID: itemID.String()}
	}
	if err != nil {
		return domain.ItemRef{}, fmt.Errorf("get event item %s: %w", itemID, err)
	}
	return ref, nil
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
	return q.eventItemRef(ctx, feedID, itemID)
}

func feedConfig(f Feed) domain.FeedConfig {
	if f.Config == nil {
		return domain.DefaultFeedConfig()
	}
	return *f.Config
}
