// Package happeningitems owns the event items read model: the happenings
// (calendar things) every feed shares and the items of every event
// feed, with each visible item's occurrences indexed per feed for range
// queries (tables calendar_events, event_items, event_item_attachments,
// event_item_occurrences, event_feed_spans, event_detached_attachments),
// its projector, and the queries the API lists and pages event items with.
// "Event" is the log's word in Go; a calendar thing is a happening. URLs,
// JSON, table names and the projector's name (eventitems) keep the
// API's words.
package happeningitems

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/search"
	"github.com/feedsvc/feedsvc/readmodel/changes"
	"github.com/feedsvc/feedsvc/readmodel/feeds"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// Item is one happening in one feed, with its happening's members as the
// shape asked for renders them and every occurrence of the happening.
type Item struct {
	ID          uuid.UUID
	FeedID      uuid.UUID
	HappeningID uuid.UUID
	// ViewID is the happening the item is shown as: its own, or its
	// listings merged (listings.go).
	ViewID     uuid.UUID
	SourceID   uuid.UUID
	SourceType string
	AddedAt    time.Time
	Static     shape.Static
	// Source is the source block, when asked for.
	Source      []byte
	Occurrences []shape.Occurrence
	// Relevance is the item's score against its feed's config, as the
	// projector stored it; nil when the config scores nothing.
	Relevance *float64
	// Change is where the item last changed (changes.Key).
	Change changes.Key
	// Removed marks an item that has left the feed (a page of changes
	// lists them); only ID and Change are set.
	Removed bool
}

// Shape is which of a happening's stored renderings a read returns.
type Shape struct {
	Legacy        bool
	IncludeSource bool
}

// columns are the stored renderings of the shape (calendar_events AS e).
func (s Shape) columns() string {
	prefix, source := "e.current_", "''"
	if s.Legacy {
		prefix = "e.legacy_"
	}
	if s.IncludeSource && !s.Legacy {
		source = "e.source_block"
	}
	return prefix + "head, " + prefix + "published, " + prefix + "tail, " + source
}

// Queries answers reads of the event items read model.
type Queries struct {
	db    bun.IDB
	feeds *feeds.Queries
	// totals are the range totals counted last, per feed (totals.go).
	totals *totals
}

// NewQueries returns the event items' query side over db.
func NewQueries(db bun.IDB) *Queries {
	return &Queries{db: db, feeds: feeds.NewQueries(db), totals: &totals{}}
}

// Event item orders (api.md 4.6), and by how well an item matches the
// filter's Query.
const (
	OrderByOccurrence = "occurrence"
	OrderByCreated    = "created"
	OrderByRelevance  = "relevance"
)

// Filter selects a page of a feed's event items: those with an
// occurrence in [Since, Until) (domain.Occurrence.Overlaps) of an
// instance whose status at Now is Status (any when empty).
type Filter struct {
	Since, Until time.Time
	Status       string
	OrderBy      string
	Limit        int
	Offset       int
	// Now is the clock the statuses are judged by (completed is derived).
	Now   time.Time
	Shape Shape
	// After, when set, pages through the changes after it instead of by
	// offset (OrderBy and Offset do not apply): the items added or
	// changed after it that the filter selects, and those removed, in
	// change order. A zero Since or Until is then an open bound.
	After *changes.Key
	// Query, unless zero, keeps the items whose event's title,
	// description, venue, address or organizer match it.
	Query search.Query
}

// Window is the filter's range of occurrence dates.
func (f Filter) Window() shape.Window {
	var w shape.Window
	if !f.Since.IsZero() {
		w.From = &f.Since
	}
	if !f.Until.IsZero() {
		w.To = &f.Until
	}
	return w
}

// Page is a page of event items and how many happenings match in all.
type Page struct {
	Items []Item
	Total int
	changes.Changes
	// Entries, on a page of changes, are its items and removed items
	// together in change order (Item.Removed marks the latter): the live
	// item streams send each with its own change key.
	Entries []Item
}

// Items pages through the items of an organization's event feed whose
// occurrences the filter selects: soonest first (by the earliest selected
// occurrence, then id) or newest first (by addedToFeedAt, then id, both
// descending), with how many match.
//
// It is one round trip: the feed check and one statement that finds,
// orders and counts the items on the occurrence index alone (without a
// status filter each matching item is the one row of the range that is
// its first there, see event_item_occurrences, so nothing is grouped and a
// soonest-first page stops after its rows), and returns the page's items
// with their stored renderings and occurrences.
//
// With f.After it pages through the feed's changes instead
// (changesSQL). Either way the feed's latest change is read
// before the page, in the same round trip, for the page's Changes.
func (q *Queries) Items(ctx context.Context, org, feedID uuid.UUID, f Filter) (Page, error) {
	page := Page{Items: []Item{}}
	// A range total counted before, for the same latest change, is
	// reused rather than walked again (totals.go).
	remembers := f.After == nil && f.Status == "" && f.Query.IsZero()
	known, hit := countedTotal{}, false
	if remembers {
		known, hit = q.totals.get(feedID)
		hit = hit && known.holds(f.Since, f.Until)
	}
	statement, args := itemsSQL(feedID, f, !hit)
	if f.After != nil {
		// One more than the page: whether more changes follow.
		statement, args = changesSQL(feedID, f, f.Limit+1)
	}
	var latest, latestAfter changes.Key
	var sinceBefore, untilUpTo pgtype.Timestamptz
	var listed []Item
	err := q.withPgx(ctx, func(conn *pgx.Conn) error {
		batch := &pgx.Batch{}
		batch.Queue(feedSQL, feedID, org).QueryRow(func(row pgx.Row) error { return scanFeed(row, feedID) })
		// Statements of a batch run in order, each seeing what was
		// committed when it began: the page sees every change up to latest.
		batch.Queue(changes.LatestSQL("event_items", "$1"), feedID).QueryRow(func(row pgx.Row) error {
			return scanChangeKey(row, &latest)
		})
		batch.Queue(statement, args...).Query(func(rows pgx.Rows) error {
			var err error
			listed, err = scanItems(rows, &page.Total)
			return err
		})
		if f.After != nil {
			count, args := changesTotalSQL(feedID, f)
			batch.Queue(count, args...).QueryRow(func(row pgx.Row) error { return row.Scan(&page.Total) })
		}
		if remembers && !hit {
			// Where the total counted now holds, and whether anything
			// changed while it was counted.
			batch.Queue(boundsSQL, feedID, f.Since, f.Until).QueryRow(func(row pgx.Row) error {
				return row.Scan(&sinceBefore, &untilUpTo)
			})
			batch.Queue(changes.LatestSQL("event_items", "$1"), feedID).QueryRow(func(row pgx.Row) error {
				return scanChangeKey(row, &latestAfter)
			})
		}
		return conn.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return Page{}, notFoundAsIs(err, "list items of event feed %s", feedID)
	}
	if f.After != nil {
		return changesPage(page, listed, latest, f), nil
	}
	page.Items, page.Next = listed, latest
	counted := !hit
	switch {
	case hit && known.latest == latest:
		page.Total, counted = known.total, true
	case hit:
		// The feed changed since the total was counted: count again, and
		// forget it, so that the next list counts and remembers anew.
		counted = false
		q.totals.forget(feedID, known.latest)
	case len(listed) == 0 && f.Offset > 0:
		// A page past the end has no row to carry the total.
		counted = false
	case latest == latestAfter:
		q.totals.put(feedID, countedTotal{
			latest: latest, total: page.Total,
			since: f.Since, sinceBefore: boundOrFar(sinceBefore),
			until: f.Until, untilUpTo: boundOrFar(untilUpTo),
		})
	}
	if !counted {
		statement, args := countSQL(feedID, f)
		err := q.withPgx(ctx, func(conn *pgx.Conn) error { return conn.QueryRow(ctx, statement, args...).Scan(&page.Total) })
		if err != nil {
			return Page{}, fmt.Errorf("count items of event feed %s: %w", feedID, err)
		}
	}
	return page, nil
}

// boundOrFar is a bound of boundsSQL; none when no occurrence sets it.
func boundOrFar(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return farFuture
	}
	return t.Time
}

// changesPage splits a page of changes into the items and those removed,
// and says where the next one starts.
func changesPage(page Page, listed []Item, latest changes.Key, f Filter) Page {
	page.HasMore = len(listed) > f.Limit
	listed = listed[:min(len(listed), f.Limit)]
	page.Entries = listed
	page.Removed = []uuid.UUID{}
	for _, it := range listed {
		if it.Removed {
			page.Removed = append(page.Removed, it.ID)
			continue
		}
		page.Items = append(page.Items, it)
	}
	var last *changes.Key
	if len(listed) > 0 {
		last = &listed[len(listed)-1].Change
	}
	page.Next = changes.NextAfter(*f.After, latest, last, page.HasMore)
	return page
}

// scanChangeKey reads a change key row; none is the zero key.
func scanChangeKey(row pgx.Row, k *changes.Key) error {
	var commit, prepare int64
	var item [16]byte
	if err := row.Scan(&commit, &prepare, &item); errors.Is(err, pgx.ErrNoRows) {
		*k = changes.Key{}
		return nil
	} else if err != nil {
		return err
	}
	*k = changes.Key{Commit: uint64(commit), Prepare: uint64(prepare), Item: item}
	return nil
}

// Item returns one visible item of an organization's event feed, in
// the shape asked for.
func (q *Queries) Item(ctx context.Context, org, feedID, itemID uuid.UUID, s Shape) (Item, error) {
	var items []Item
	err := q.withPgx(ctx, func(conn *pgx.Conn) error {
		batch := &pgx.Batch{}
		batch.Queue(feedSQL, feedID, org).QueryRow(func(row pgx.Row) error { return scanFeed(row, feedID) })
		batch.Queue(`WITH page AS (SELECT id AS item_id FROM event_items WHERE id = $1 AND feed_id = $2 AND visible) `+
			itemsOfPage(s, "0", "page.item_id", false), itemID, feedID).Query(func(rows pgx.Rows) error {
			var err error
			items, err = scanItems(rows, new(int))
			return err
		})
		return conn.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return Item{}, notFoundAsIs(err, "get event item %s", itemID)
	}
	if len(items) == 0 {
		return Item{}, &domain.NotFoundError{Resource: "item", ID: itemID.String()}
	}
	return items[0], nil
}

// feedSQL finds an organization's event feed ($1, $2): a list needs no
// more of it (relevance is scored by the projector, event_items).
const feedSQL = `SELECT true FROM feeds WHERE id = $1 AND organization_id = $2 AND kind = 'events'`

func scanFeed(row pgx.Row, feedID uuid.UUID) error {
	var found bool
	if err := row.Scan(&found); errors.Is(err, pgx.ErrNoRows) {
		return &domain.NotFoundError{Resource: "feed", ID: feedID.String()}
	} else if err != nil {
		return err
	}
	return nil
}

// notFoundAsIs wraps err with context unless it is a not-found answer.
func notFoundAsIs(err error, format string, id uuid.UUID) error {
	var missing *domain.NotFoundError
	if errors.As(err, &missing) {
		return missing
	}
	return fmt.Errorf(format+": %w", id, err)
}

// itemsOfPage selects the items of the CTE page (with item_id and the
// order's columns) with their renderings, every occurrence of their happenings
// as arrays (kept with the happening; gathered from the item's occurrence
// rows for a happening written before they were), their change keys and
// total. withRemoved keeps the page's hidden items, without renderings or
// occurrences.
func itemsOfPage(s Shape, total, order string, withRemoved bool) string {
	events := "JOIN calendar_events AS e ON e.id = coalesce(i.view_id, i.event_id)"
	if withRemoved {
		events = "LEFT JOIN calendar_events AS e ON e.id = coalesce(i.view_id, i.event_id) AND i.visible"
	}
	return `SELECT i.id, i.feed_id, i.event_id, coalesce(i.view_id, i.event_id), i.source_id, i.source_type, i.added_at, ` + s.columns() + `, ` + total + `,
			coalesce(e.occurrence_ids, o.ids), coalesce(e.occurrence_instances, o.instances), coalesce(e.occurrence_starts, o.starts),
			coalesce(e.occurrence_ends, o.ends), coalesce(e.occurrence_statuses, o.statuses),
			coalesce(e.occurrence_instance_ends, o.instance_ends), i.change_commit, i.change_prepare, i.visible,
			i.relevance_score
		FROM page
		JOIN event_items AS i ON i.id = page.item_id
		` + events + `
		CROSS JOIN LATERAL (
			SELECT array_agg(occurrence_id) AS ids, array_agg(instance_id) AS instances, array_agg(starts_at) AS starts,
				array_agg(end_at) AS ends, array_agg(status) AS statuses, array_agg(instance_ends_at) AS instance_ends
			FROM event_item_occurrences WHERE item_id = page.item_id AND e.occurrence_ids IS NULL
		) AS o
		ORDER BY ` + order
}

func scanItems(rows pgx.Rows, total *int) ([]Item, error) {
	items := []Item{}
	for rows.Next() {
		var (
			it                    Item
			id, feed, event, src  [16]byte
			view                  [16]byte
			head, published, tail []byte
			source                []byte
			ids, instances        [][16]byte
			starts, instanceEnds  []time.Time
			ends                  []pgtype.Timestamptz
			statuses              []string
			commit, prepare       int64
			visible               bool
		)
		err := rows.Scan(&id, &feed, &event, &view, &src, &it.SourceType, &it.AddedAt, &head, &published, &tail, &source, total,
			&ids, &instances, &starts, &ends, &statuses, &instanceEnds, &commit, &prepare, &visible, &it.Relevance)
		if err != nil {
			return nil, err
		}
		it.ID, it.FeedID, it.HappeningID, it.ViewID, it.SourceID = id, feed, event, view, src
		it.Change = changes.Key{Commit: uint64(commit), Prepare: uint64(prepare), Item: id}
		if !visible {
			items = append(items, Item{ID: it.ID, FeedID: it.FeedID, HappeningID: it.HappeningID, Change: it.Change, Removed: true})
			continue
		}
		it.Static = shape.Static{Head: head, Published: published, Tail: tail}
		if len(source) > 0 {
			it.Source = source
		}
		it.Occurrences = make([]shape.Occurrence, len(ids))
		for k := range ids {
			o := shape.Occurrence{ID: ids[k], InstanceID: instances[k], Start: starts[k], Stated: statuses[k], InstanceEnds: instanceEnds[k]}
			if ends[k].Valid {
				end := ends[k].Time
				o.End = &end
			}
			it.Occurrences[k] = o
		}
		items = append(items, it)
	}
	return items, rows.Err()
}

// inWindow selects the occurrence rows of feed $1 going on in [$2, $3)
// (domain.Occurrence.Overlaps): the index range reaches back by the
// feed's longest occurrence, for those already under way at $2.
const inWindow = `feed_id = $1
	AND starts_at >= $2::timestamptz - coalesce((SELECT longest FROM event_feed_spans WHERE feed_id = $1), interval '0')
	AND starts_at < $3 AND (ends_at > $2 OR starts_at >= $2)`

// firstInWindow keeps, of those, each item's first one in the range: all
// its earlier occurrences are over before $2 and began before it.
const firstInWindow = ` AND prev_ends <= $2 AND prev_start < $2`

// candidates are the matching items, one row each (item_id, first_start,
// added_at), and the arguments after $1-$3.
func candidates(f Filter) (string, []any) {
	if f.Status == "" {
		matching, args := queryCondition(f, "event_item_occurrences.item_id", 4)
		return `SELECT item_id, starts_at AS first_start, added_at FROM event_item_occurrences WHERE ` + inWindow + firstInWindow + matching, args
	}
	cond, args := statusCondition(f.Status, f.Now, 4)
	matching, extra := queryCondition(f, "event_item_occurrences.item_id", 4+len(args))
	return `SELECT item_id, min(starts_at) AS first_start, max(added_at) AS added_at FROM event_item_occurrences
		WHERE ` + inWindow + cond + matching + ` GROUP BY item_id`, append(args, extra...)
}

// eventQuery is the filter's query as a tsquery of the bound parameter
// $n (its canonical form), in the configuration of the events' words.
func eventQuery(n int) string {
	return "websearch_to_tsquery('feedsvc_simple', $" + strconv.Itoa(n) + ")"
}

// queryCondition is " AND" the condition that the event of the item whose
// id is the column item matches the filter's query, with its argument as
// $first; nothing without a query.
func queryCondition(f Filter, item string, first int) (string, []any) {
	if f.Query.IsZero() {
		return "", nil
	}
	return ` AND (SELECT e.search @@ ` + eventQuery(first) + ` FROM event_items AS qi JOIN calendar_events AS e ON e.id = coalesce(qi.view_id, qi.event_id)
		WHERE qi.id = ` + item + `)`, []any{f.Query.String()}
}

// itemsSQL is the page of the filter (without After) and, with
// withTotal, the total on every row (0 otherwise).
func itemsSQL(feedID uuid.UUID, f Filter, withTotal bool) (string, []any) {
	m, extra := candidates(f)
	args := append([]any{feedID, f.Since, f.Until}, extra...)
	n := len(args)
	// Soonest first with no status filter, the page walks the index in
	// its order and stops, and the total is a second walk. Otherwise every
	// matching item is grouped or sorted anyway, so one walk feeds both.
	order, materialized := "first_start, item_id", "NOT MATERIALIZED"
	if f.OrderBy == OrderByCreated {
		order = "added_at DESC, item_id DESC"
	}
	ranked := "m.*"
	if f.OrderBy == OrderByRelevance && !f.Query.IsZero() {
		// Best match first, then soonest: the rank of the item's event
		// against the query, the same bound parameter the filter took.
		ranked = `m.*, (SELECT ts_rank_cd(e.search, ` + eventQuery(n) + `) FROM event_items AS qi
			JOIN calendar_events AS e ON e.id = coalesce(qi.view_id, qi.event_id) WHERE qi.id = m.item_id) AS rank`
		order = "rank DESC, first_start, item_id"
	}
	if f.OrderBy == OrderByCreated || f.OrderBy == OrderByRelevance || f.Status != "" {
		materialized = "MATERIALIZED"
	}
	args = append(args, f.Limit, f.Offset)
	total := "0"
	if withTotal {
		total = "(SELECT count(*) FROM m)"
	}
	return fmt.Sprintf(`WITH m AS %s (%s),
		page AS (SELECT %s FROM m ORDER BY %s LIMIT $%d OFFSET $%d) `, materialized, m, ranked, order, n+1, n+2) +
		itemsOfPage(f.Shape, total, "page."+strings.ReplaceAll(order, ", ", ", page."), false), args
}

// changesSQL pages through the changes of feed $1 after the key
// ($2, $3, $4), in change order, $5 at a time: the visible items the
// filter selects and, whatever the filter, the items removed. It walks the
// feed's change index from the key and stops after the page, so a poll
// that finds little reads little.
func changesSQL(feedID uuid.UUID, f Filter, limit int) (string, []any) {
	args := append(append([]any{feedID}, f.After.Args()...), limit)
	selected, extra := selectedByFilter(f, len(args)+1)
	return `WITH page AS (
			SELECT i.id AS item_id, i.change_commit, i.change_prepare FROM event_items AS i
			WHERE i.feed_id = $1 AND (i.change_commit, i.change_prepare, i.id) > ($2, $3, $4)
			  AND (NOT i.visible OR coalesce(` + selected + `, false))
			ORDER BY i.change_commit, i.change_prepare, i.id LIMIT $5
		) ` + itemsOfPage(f.Shape, "0", "page.change_commit, page.change_prepare, page.item_id", true), append(args, extra...)
}

// openRange is the range of a page of changes given without dates: every
// occurrence there can be. It starts after year 1, where the occurrence
// rows' "no earlier occurrence" lies (prev_start), so that an item's
// first occurrence is still its first in the range.
var openRange = struct{ since, until time.Time }{
	since: time.Date(2, 1, 1, 0, 0, 0, 0, time.UTC), until: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
}

// changesTotalSQL counts the items a page of changes selects by its
// filter, whatever the cursor: with dates or a status as a page read by
// offset counts them (on the occurrence index; a bound not given is
// open), without them the feed's visible items (fewer rows than all their
// occurrences). An item's happening is recorded before the item is added (in
// log order, as ingestion appends them), so every visible item is listed.
func changesTotalSQL(feedID uuid.UUID, f Filter) (string, []any) {
	if f.Since.IsZero() && f.Until.IsZero() && f.Status == "" && f.Query.IsZero() {
		return `SELECT count(*) FROM event_items WHERE feed_id = $1 AND visible`, []any{feedID}
	}
	f.Since, f.Until = cmp.Or(f.Since, openRange.since), cmp.Or(f.Until, openRange.until)
	return countSQL(feedID, f)
}

// selectedByFilter is the condition on a visible item (event_items AS i)
// of a page of changes, with its arguments from $first: its happening is
// known, and it has an occurrence in the range and of the status, when
// they are given.
func selectedByFilter(f Filter, first int) (string, []any) {
	var conds []string
	var args []any
	param := func(v any) int {
		args = append(args, v)
		return first + len(args) - 1
	}
	if !f.Since.IsZero() {
		conds = append(conds, fmt.Sprintf("(ends_at > $%d OR starts_at >= $%[1]d)", param(f.Since)))
	}
	if !f.Until.IsZero() {
		conds = append(conds, fmt.Sprintf("starts_at < $%d", param(f.Until)))
	}
	if f.Status != "" {
		cond, extra := statusCondition(f.Status, f.Now, first+len(args))
		conds = append(conds, strings.TrimPrefix(cond, " AND "))
		args = append(args, extra...)
	}
	// Scalar subqueries rather than EXISTS: the planner would turn an
	// EXISTS under the OR of the page's condition into a hash of every
	// happening (and every occurrence in the range), where a page needs a few
	// index probes.
	selected := "(SELECT true FROM calendar_events AS e WHERE e.id = coalesce(i.view_id, i.event_id))"
	if !f.Query.IsZero() {
		selected = "(SELECT e.search @@ " + eventQuery(param(f.Query.String())) + " FROM calendar_events AS e WHERE e.id = coalesce(i.view_id, i.event_id))"
	}
	if len(conds) > 0 {
		selected += " AND (SELECT true FROM event_item_occurrences WHERE item_id = i.id AND " + strings.Join(conds, " AND ") + " LIMIT 1)"
	}
	return selected, args
}

func countSQL(feedID uuid.UUID, f Filter) (string, []any) {
	m, extra := candidates(f)
	return `SELECT count(*) FROM (` + m + `) AS m`, append([]any{feedID, f.Since, f.Until}, extra...)
}

// statusCondition restates domain.HappeningInstance.StatusAt on the occurrence
// rows, with its arguments from $first: completed is an instance going
// ahead whose last occurrence has ended by now; scheduled and rescheduled
// ones have not.
func statusCondition(status string, now time.Time, first int) (string, []any) {
	a, b := "$"+strconv.Itoa(first), "$"+strconv.Itoa(first+1)
	switch status {
	case domain.StatusCompleted:
		return " AND status IN ('scheduled', 'rescheduled') AND instance_ends_at <= " + a, []any{now}
	case domain.StatusScheduled, domain.StatusRescheduled:
		return " AND status = " + a + " AND instance_ends_at > " + b, []any{status, now}
	default:
		return " AND status = " + a, []any{status}
	}
}

// withPgx runs f on a connection of the pgx pool behind q's database/sql
// handle: pgx decodes rows in binary without database/sql's conversions,
// sends several statements in one round trip, and prepares each statement
// text once per connection (bun would inline the arguments, making every
// request's SQL new text to parse and plan).
func (q *Queries) withPgx(ctx context.Context, f func(*pgx.Conn) error) error {
	var conn *sql.Conn
	var err error
	switch db := q.db.(type) {
	case *bun.DB:
		conn, err = db.DB.Conn(ctx)
	default:
		return fmt.Errorf("read event items: unsupported connection %T", q.db)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("read event items: the driver connection is a %T, not pgx's", driverConn)
		}
		return f(c.Conn())
	})
}

// HappeningDetails returns the current details of happenings, by id.
func (q *Queries) HappeningDetails(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]domain.HappeningDetails, error) {
	keys := make([][16]byte, len(ids))
	for i, id := range ids {
		keys[i] = id
	}
	out := make(map[uuid.UUID]domain.HappeningDetails, len(ids))
	err := q.withPgx(ctx, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `SELECT id, details FROM calendar_events WHERE id = ANY($1)`, keys)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id [16]byte
			var raw []byte
			if err := rows.Scan(&id, &raw); err != nil {
				return err
			}
			var d domain.HappeningDetails
			if err := json.Unmarshal(raw, &d); err != nil {
				return fmt.Errorf("decode event %s: %w", uuid.UUID(id), err)
			}
			out[id] = d
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read event details: %w", err)
	}
	return out, nil
}

// LatestChange is the latest change of a feed's items; the zero key
// (before every change) when it has none. A live item stream that names
// no cursor starts after it.
func (q *Queries) LatestChange(ctx context.Context, feedID uuid.UUID) (changes.Key, error) {
	return changes.Latest(ctx, q.db, "event_items", feedID)
}

// LatestChanges is LatestChange of many feeds in one statement; a feed
// without items is left out. The live item streams' poller asks it for
// every event feed with a stream open.
func (q *Queries) LatestChanges(ctx context.Context, feedIDs []uuid.UUID) (map[uuid.UUID]changes.Key, error) {
	return changes.LatestOf(ctx, q.db, "event_items", feedIDs)
}

// ItemRef is the reference commands take to a visible item of the
// organization's event feed (commands.Lookups, through readmodel.Lookups).
func (q *Queries) ItemRef(ctx context.Context, org, feedID, itemID uuid.UUID) (domain.ItemRef, error) {
	return q.itemRef(ctx, org, feedID, itemID, false)
}

// ItemOrigin is ItemRef for an item the feed ever had: an event item that
// left its feed (its last attachment detached) still has a history.
func (q *Queries) ItemOrigin(ctx context.Context, org, feedID, itemID uuid.UUID) (domain.ItemRef, error) {
	return q.itemRef(ctx, org, feedID, itemID, true)
}

func (q *Queries) itemRef(ctx context.Context, org, feedID, itemID uuid.UUID, hidden bool) (domain.ItemRef, error) {
	if _, err := q.feeds.Feed(ctx, domain.FeedHappenings, org, feedID); err != nil {
		return domain.ItemRef{}, err
	}
	var ref domain.ItemRef
	err := q.db.NewRaw(`SELECT feed_id, event_id, source_id FROM event_items WHERE id = ? AND feed_id = ? AND (visible OR ?)`, itemID, feedID, hidden).
		Scan(ctx, &ref.FeedID, &ref.HappeningID, &ref.SourceID)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.ItemRef{}, &domain.NotFoundError{Resource: "item", ID: itemID.String()}
	}
	if err != nil {
		return domain.ItemRef{}, fmt.Errorf("get event item %s: %w", itemID, err)
	}
	return ref, nil
}
