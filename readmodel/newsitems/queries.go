// Package newsitems owns the news items read model: the items of every
// news feed and each feed's count (tables news_items and
// news_feed_item_counts), its projector, and the queries the API pages
// through a feed's items with.
package newsitems

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/search"
	"github.com/feedsvc/feedsvc/readmodel/changes"
	"github.com/feedsvc/feedsvc/readmodel/feeds"
)

// NewsItem is a row of news_items: one article in one feed.
type NewsItem struct {
	bun.BaseModel `bun:"table:news_items"`

	ID             uuid.UUID  `bun:"id,pk,type:uuid"`
	FeedID         uuid.UUID  `bun:"feed_id,type:uuid"`
	OrganizationID uuid.UUID  `bun:"organization_id,type:uuid"`
	NewsPageID     uuid.UUID  `bun:"news_page_id,type:uuid"`
	VersionID      uuid.UUID  `bun:"version_id,type:uuid"`
	SourceID       uuid.UUID  `bun:"source_id,type:uuid"`
	AttachmentID   uuid.UUID  `bun:"attachment_id,type:uuid"`
	SourceType     string     `bun:"source_type"`
	URL            string     `bun:"url"`
	Title          string     `bun:"title"`
	Description    string     `bun:"description"`
	ImageURL       string     `bun:"image_url"`
	PublishedAt    *time.Time `bun:"published_at"`
	CreatedAt      time.Time  `bun:"created_at"`
	UpdatedAt      time.Time  `bun:"updated_at"`
	// Source is the item's source block; NULL in rows projected before
	// blocks were stored (see Block).
	Source *domain.SourceBlock `bun:"source,type:jsonb"`
	// Platform is a platform post's own ids; NULL for web pages.
	Platform *domain.PlatformIDs `bun:"platform,type:jsonb"`
	// ChangeCommit and ChangePrepare are the log position of the event
	// that added the item (news items never change after): see changes.Key.
	ChangeCommit  int64 `bun:"change_commit"`
	ChangePrepare int64 `bun:"change_prepare"`
	// Language is the primary subtag of the page's language; empty when
	// unknown. The generated column search holds the item's words, stemmed
	// in its language (migrations, item_search).
	Language string `bun:"language"`
}

// Change is the item's change key.
func (it NewsItem) Change() changes.Key {
	return changes.Key{Commit: uint64(it.ChangeCommit), Prepare: uint64(it.ChangePrepare), Item: it.ID}
}

// Block is the item's source block (api.md 2.4).
func (it NewsItem) Block() domain.SourceBlock {
	if it.Source != nil {
		return *it.Source
	}
	return domain.SiteBlock(it.URL)
}

// Queries answers reads of the news items read model.
type Queries struct {
	db    bun.IDB
	feeds *feeds.Queries
}

// NewQueries returns the news items' query side over db.
func NewQueries(db bun.IDB) *Queries { return &Queries{db: db, feeds: feeds.NewQueries(db)} }

// ItemFilter selects a page of a feed's items.
type ItemFilter struct {
	Limit  int
	Offset int
	Since  *time.Time
	Until  *time.Time
	// After, when set, pages through the changes after it instead of by
	// offset: the items added after it, in change order.
	After *changes.Key
	// Query, unless zero, keeps the items whose title, description or
	// body text match it (full-text search, in each item's language).
	Query search.Query
	// ByRelevance orders the items that match Query by how well they
	// match, best first, then in the list's order; only with a Query and
	// without After.
	ByRelevance bool
}

// ItemPage is a page of items and how many match in all.
type ItemPage struct {
	Items []NewsItem
	Total int
	changes.Changes
}

// NewsItems pages through a feed's items, newest first (D7), or through
// its changes after f.After. The feed must be the organization's.
func (q *Queries) NewsItems(ctx context.Context, org, feedID uuid.UUID, f ItemFilter) (ItemPage, error) {
	if f.After != nil {
		return q.newsItemChanges(ctx, org, feedID, f)
	}
	if !f.Query.IsZero() {
		return q.searchItems(ctx, org, feedID, f)
	}
	total, err := q.feedItemCount(ctx, org, feedID, f)
	if err != nil {
		return ItemPage{}, err
	}
	// Read before the page, so that the page holds every change up to it.
	latest, err := q.LatestChange(ctx, feedID)
	if err != nil {
		return ItemPage{}, err
	}
	items := []NewsItem{}
	if f.Offset < deepOffset {
		sel := q.db.NewSelect().Model(&items).Where("feed_id = ?", feedID)
		applyRange(sel, f)
		err = sel.OrderExpr(itemOrder("")).Limit(int64(f.Limit)).Offset(int64(f.Offset)).Scan(ctx)
	} else {
		// Deep pages: walk the offset in the ordering index alone (an
		// index-only scan of its keys), then fetch just the page's rows,
		// instead of reading every skipped row from the table.
		page := q.db.NewSelect().Model((*NewsItem)(nil)).Column("id", "created_at", "published_at").Where("feed_id = ?", feedID)
		applyRange(page, f)
		page.OrderExpr(itemOrder("")).Limit(int64(f.Limit)).Offset(int64(f.Offset))
		err = q.db.NewSelect().Model(&items).
			Join("JOIN (?) AS page ON page.id = news_item.id", page).
			OrderExpr(itemOrder("page")).
			Scan(ctx)
	}
	if err != nil {
		return ItemPage{}, fmt.Errorf("list items of feed %s: %w", feedID, err)
	}
	return ItemPage{Items: items, Total: total, Changes: changes.Changes{Next: latest}}, nil
}

// searchItems is NewsItems with a Query. The query's reading in every
// language (feedsvc_websearch_exact) is exact in the (feed, words) index,
// so the total is a count of the index's matches that reads no item's
// words (and, on pages the visibility map marks all-visible, no item at
// all). The page is then read the cheaper of two ways, as the count says:
// when matches are dense enough that walking the list's order index finds
// the page within walkBudget items, that walk (testing each item's words
// on the way); otherwise the matches are found in the index, and ordered
// from there. Ordered by relevance, the rank is worked out for the
// matches only.
func (q *Queries) searchItems(ctx context.Context, org, feedID uuid.UUID, f ItemFilter) (ItemPage, error) {
	if _, err := q.feeds.Feed(ctx, domain.FeedNews, org, feedID); err != nil {
		return ItemPage{}, err
	}
	latest, err := q.LatestChange(ctx, feedID)
	if err != nil {
		return ItemPage{}, err
	}
	out := ItemPage{Items: []NewsItem{}, Changes: changes.Changes{Next: latest}}
	// Without JIT: Postgres estimates a tsquery's matches poorly and then
	// compiles the statement, which costs more than running it (at
	// 1,000,000 items, a rare word's page took 450 ms with JIT and 40-110
	// ms without; bench/docs/search.md).
	err = q.db.RunInTx(ctx, &sql.TxOptions{ReadOnly: true}, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL jit = off"); err != nil {
			return err
		}
		count := tx.NewSelect().Model((*NewsItem)(nil)).Where("feed_id = ?", feedID)
		applyRange(count, f)
		n, err := count.Count(ctx)
		if err != nil {
			return fmt.Errorf("count: %w", err)
		}
		if out.Total = int(n); n == 0 || f.Offset >= out.Total {
			return nil
		}
		var all int
		if err := tx.NewRaw("SELECT coalesce((SELECT items FROM news_feed_item_counts WHERE feed_id = ?), 0)", feedID).Scan(ctx, &all); err != nil {
			return fmt.Errorf("count the feed: %w", err)
		}
		if !f.ByRelevance && walkFinds(f.Offset+f.Limit, out.Total, all) {
			// The planner cannot know the matches are dense (it estimates a
			// tsquery's matches poorly): it is kept to the order index.
			if _, err := tx.ExecContext(ctx, "SET LOCAL enable_bitmapscan = off"); err != nil {
				return err
			}
			sel := tx.NewSelect().Model(&out.Items).Where("feed_id = ?", feedID)
			applyRange(sel, f)
			return sel.OrderExpr(itemOrder("")).Limit(int64(f.Limit)).Offset(int64(f.Offset)).Scan(ctx)
		}
		matches := tx.NewSelect().Model((*NewsItem)(nil)).Column("id", "created_at", "published_at").Where("feed_id = ?", feedID)
		applyRange(matches, f)
		order := itemOrder
		if f.ByRelevance {
			matches.ColumnExpr("ts_rank_cd(search, websearch_to_tsquery(feedsvc_search_config(language), ?)) AS rank", f.Query.String())
			order = func(alias string) string { return alias + ".rank DESC, " + itemOrder(alias) }
		}
		// OFFSET 0 keeps the matches a subquery of their own, found in the
		// words index, rather than letting the planner walk the order
		// index testing every item for a rare word (a rare word's page took
		// 0.7 s so at 1,000,000 items, and seconds under load).
		page := tx.NewSelect().TableExpr("(? OFFSET 0) AS matches", matches).ColumnExpr("matches.*").
			OrderExpr(order("matches")).Limit(int64(f.Limit)).Offset(int64(f.Offset))
		return tx.NewSelect().Model(&out.Items).ColumnExpr(itemColumns(q.db)).
			Join("JOIN (?) AS page ON page.id = news_item.id", page).
			OrderExpr(order("page")).Scan(ctx)
	})
	if err != nil {
		return ItemPage{}, fmt.Errorf("search items of feed %s: %w", feedID, err)
	}
	return out, nil
}

// walkBudget is how many items a page of a search may test on its way
// down the list's order index; past it, the matches are found in the
// words index instead. An item's words are tested in microseconds, a
// match found in the index costs a read of its row: at 1,000,000 items,
// 5,000 tests took about as long as ordering 50,000 matches found in the
// index (bench/docs/search.md).
const walkBudget = 5000

// walkFinds is whether walking a list of all items, of which matches
// match, is expected to reach the end of a page ending at upTo within
// walkBudget items (matches spread evenly over the list).
func walkFinds(upTo, matches, all int) bool {
	return matches > 0 && int64(upTo)*int64(max(all, matches)) <= int64(walkBudget)*int64(matches)
}

// itemColumns are a NewsItem's columns of news_items AS news_item (not
// its words, which no reader reads back).
func itemColumns(db bun.IDB) string {
	var cols []string
	for _, f := range db.Dialect().Tables().Get(reflect.TypeFor[NewsItem]()).Fields {
		cols = append(cols, "news_item."+f.Name)
	}
	return strings.Join(cols, ", ")
}

// newsItemChanges pages through the items added to a feed after f.After
// that the date filter selects, in change order; its total, as on a page
// read by offset, counts the feed's items the filter selects. News items
// never change once added and never leave a feed (a deleted feed answers
// not found), so nothing is ever removed.
func (q *Queries) newsItemChanges(ctx context.Context, org, feedID uuid.UUID, f ItemFilter) (ItemPage, error) {
	total, err := q.feedItemCount(ctx, org, feedID, f)
	if err != nil {
		return ItemPage{}, err
	}
	latest, err := q.LatestChange(ctx, feedID)
	if err != nil {
		return ItemPage{}, err
	}
	items := []NewsItem{}
	sel := q.db.NewSelect().Model(&items).
		Where("feed_id = ?", feedID).Where("(change_commit, change_prepare, id) > (?, ?, ?)", f.After.Args()...)
	applyRange(sel, f)
	// One more than the page: whether more changes follow.
	if err := sel.OrderExpr("change_commit, change_prepare, id").Limit(int64(f.Limit) + 1).Scan(ctx); err != nil {
		return ItemPage{}, fmt.Errorf("list changes of feed %s: %w", feedID, err)
	}
	more := len(items) > f.Limit
	items = items[:min(len(items), f.Limit)]
	var last *changes.Key
	if len(items) > 0 {
		k := items[len(items)-1].Change()
		last = &k
	}
	return ItemPage{Items: items, Total: total, Changes: changes.Changes{
		Next: changes.NextAfter(*f.After, latest, last, more), HasMore: more, Removed: []uuid.UUID{},
	}}, nil
}

// LatestChange is the latest change of a feed's items; the zero key
// (before every change) when it has none. A live item stream that names
// no cursor starts after it.
func (q *Queries) LatestChange(ctx context.Context, feedID uuid.UUID) (changes.Key, error) {
	return changes.Latest(ctx, q.db, "news_items", feedID)
}

// LatestChanges is LatestChange of many feeds in one statement; a feed
// without items is left out. The live item streams' poller asks it for
// every news feed with a stream open.
func (q *Queries) LatestChanges(ctx context.Context, feedIDs []uuid.UUID) (map[uuid.UUID]changes.Key, error) {
	return changes.LatestOf(ctx, q.db, "news_items", feedIDs)
}

// feedItemCount checks that the feed is the organization's and counts the
// items the filter selects. Without a date filter both come from one
// query: the check and the projected count.
func (q *Queries) feedItemCount(ctx context.Context, org, feedID uuid.UUID, f ItemFilter) (int, error) {
	if f.Since != nil || f.Until != nil || !f.Query.IsZero() {
		if _, err := q.feeds.Feed(ctx, domain.FeedNews, org, feedID); err != nil {
			return 0, err
		}
		return q.countItems(ctx, feedID, f)
	}
	var (
		visible bool
		n       int
	)
	err := q.db.NewRaw(`SELECT EXISTS (SELECT 1 FROM feeds WHERE id = ? AND organization_id = ? AND kind = 'news'),
		coalesce((SELECT items FROM news_feed_item_counts WHERE feed_id = ?), 0)`, feedID, org, feedID).Scan(ctx, &visible, &n)
	if err != nil {
		return 0, fmt.Errorf("get news feed %s: %w", feedID, err)
	}
	if !visible {
		return 0, &domain.NotFoundError{Resource: "feed", ID: feedID.String()}
	}
	return n, nil
}

// itemOrder is newest first, then by publish time, then id (D7), with the
// columns qualified by alias when one is given; news_items_feed_order_idx
// serves it.
func itemOrder(alias string) string {
	if alias != "" {
		alias += "."
	}
	return alias + "created_at DESC, " + alias + "published_at DESC NULLS LAST, " + alias + "id DESC"
}

// deepOffset is where paging switches to the two-step query: below it the
// plain query reads fewer pages than the key walk plus the lookups.
const deepOffset = 500

// countItems counts the items a date filter selects. (Without one, the
// projected count answers, so a large feed's first page does not count
// 100,000 rows on every request: see feedItemCount.)
func (q *Queries) countItems(ctx context.Context, feedID uuid.UUID, f ItemFilter) (int, error) {
	sel := q.db.NewSelect().Model((*NewsItem)(nil)).Where("feed_id = ?", feedID)
	applyRange(sel, f)
	n, err := sel.Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("count items of feed %s: %w", feedID, err)
	}
	return int(n), nil
}

// applyRange applies the filter's dates and its query.
func applyRange(sel *bun.SelectQuery, f ItemFilter) {
	if f.Since != nil {
		sel.Where("created_at > ?", *f.Since)
	}
	if f.Until != nil {
		sel.Where("created_at < ?", *f.Until)
	}
	if !f.Query.IsZero() {
		// The query travels as a bound parameter, in its canonical form,
		// read in every language, each reading for the items of its
		// language (feedsvc_websearch_exact): one test, which the (feed,
		// search) index answers exactly.
		sel.Where("search @@ feedsvc_websearch_exact(?)", f.Query.String())
	}
}

// NewsItem returns one item of an organization's feed.
// One query when the item is there; only a miss asks which of feed and
// item is missing, for the error.
func (q *Queries) NewsItem(ctx context.Context, org, feedID, itemID uuid.UUID) (NewsItem, error) {
	var it NewsItem
	err := q.db.NewSelect().Model(&it).
		Where("news_item.id = ? AND news_item.feed_id = ?", itemID, feedID).
		Where("EXISTS (SELECT 1 FROM feeds AS f WHERE f.id = news_item.feed_id AND f.organization_id = ? AND f.kind = 'news')", org).
		Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := q.feeds.Feed(ctx, domain.FeedNews, org, feedID); err != nil {
			return NewsItem{}, err
		}
		return NewsItem{}, &domain.NotFoundError{Resource: "item", ID: itemID.String()}
	}
	if err != nil {
		return NewsItem{}, fmt.Errorf("get item %s: %w", itemID, err)
	}
	return it, nil
}

// ItemRef is the reference commands take to an item of the organization's
// news feed (commands.Lookups, through readmodel.Lookups).
func (q *Queries) ItemRef(ctx context.Context, org, feedID, itemID uuid.UUID) (domain.ItemRef, error) {
	it, err := q.NewsItem(ctx, org, feedID, itemID)
	if err != nil {
		return domain.ItemRef{}, err
	}
	return domain.ItemRef{FeedID: it.FeedID, NewsPageID: it.NewsPageID, SourceID: it.SourceID}, nil
}
