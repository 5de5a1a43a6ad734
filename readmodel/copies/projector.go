// Package copies owns the copies read model: the index that finds the item
// of a news feed an article is a copy of (table news_copy_index), each news
// item's copies (news_item_copies) and each event item's
// (event_item_copies), its projector and its queries. See
// domain/copies.go for what a copy is.
package copies

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/nearcopy"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/copies/migrations"
)

// Projector projects every news item and copy into the index, and the
// copies of each item.
type Projector struct{}

func (Projector) Name() string { return "copies" }
func (Projector) Version() int { return 1 }
func (Projector) Tables() []string {
	return []string{"news_copy_index", "news_copy_bands", "news_item_copies", "event_item_copies"}
}

// Migrations are its tables' migrations, in the package migrations beside
// it; the service's schema applies them with every other owner's.
func (Projector) Migrations() migrate.Owner { return migrations.Owner }

func (Projector) Handlers() []projections.Handler {
	return []projections.Handler{
		projections.On(projectItem), projections.On(projectCopy), projections.On(projectSplit), projections.On(projectHappeningCopy),
		projections.On(projectHappeningSplit),
	}
}

func projectItem(ctx context.Context, db bun.IDB, e domain.NewsItemAdded) error {
	return index(ctx, db, e.FeedID, e.NewsPageID, e.NewsPageID, e.Content, effectiveAt(e.Content, e.At))
}

func projectCopy(ctx context.Context, db bun.IDB, e domain.NewsItemCopyFound) error {
	if err := index(ctx, db, e.FeedID, e.NewsPageID, e.ItemNewsPageID, e.Content, effectiveAt(e.Content, e.At)); err != nil {
		return err
	}
	return projections.Exec(db.NewRaw(`INSERT INTO news_item_copies (item_id, feed_id, organization_id, news_page_id, attachment_id,
			source_id, source_type, url, title, decided_by, similarity, found_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (item_id, news_page_id) DO NOTHING`,
		e.ItemID, e.FeedID, e.OrganizationID, e.NewsPageID, e.AttachmentID, e.SourceID, string(e.SourceType),
		e.Content.URL, e.Content.Title, e.By, e.Similarity, e.At).Exec(ctx))
}

func projectHappeningCopy(ctx context.Context, db bun.IDB, e domain.HappeningItemCopyFound) error {
	return projections.Exec(db.NewRaw(`INSERT INTO event_item_copies (item_id, feed_id, organization_id, copy_event_id, attachment_id,
			source_id, source_type, url, title, found_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (item_id, copy_event_id) DO NOTHING`,
		e.ItemID, e.FeedID, e.OrganizationID, e.CopyID, e.AttachmentID, e.SourceID, string(e.SourceType), e.URL, e.Title, e.At).Exec(ctx))
}

// projectHappeningSplit forgets an event item's copy; the item it became
// (EventItemAdded in its own stream) is listed as any item.
func projectHappeningSplit(ctx context.Context, db bun.IDB, e domain.HappeningItemCopySplit) error {
	return projections.Exec(db.NewRaw(`DELETE FROM event_item_copies WHERE item_id = ? AND copy_event_id = ?`, e.ItemID, e.CopyID).Exec(ctx))
}

// projectSplit forgets the copy; the item it became (NewsItemAdded in its
// own stream) indexes itself.
func projectSplit(ctx context.Context, db bun.IDB, e domain.NewsItemCopySplit) error {
	if err := flushIndex(ctx, db); err != nil {
		return err
	}
	res, err := db.NewRaw(`DELETE FROM news_copy_index WHERE feed_id = ? AND news_page_id = ? AND item_news_page_id = ?`,
		e.FeedID, e.NewsPageID, e.ItemNewsPageID).Exec(ctx)
	if err != nil {
		return projections.Exec(nil, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		if err := projections.Exec(db.NewRaw(`DELETE FROM news_copy_bands WHERE feed_id = ? AND news_page_id = ?`, e.FeedID, e.NewsPageID).Exec(ctx)); err != nil {
			return err
		}
	}
	return projections.Exec(db.NewRaw(`DELETE FROM news_item_copies WHERE item_id = ? AND news_page_id = ?`, e.ItemID, e.NewsPageID).Exec(ctx))
}

// effectiveAt is when the article counts as published for the copy window.
func effectiveAt(c domain.ArticleContent, added time.Time) time.Time {
	if c.PublishedAt != nil {
		return *c.PublishedAt
	}
	return added
}

// index writes the article's row of the feed's index and its bands: in a
// batch, with the batch's others at its end (indexRows), two statements
// for the batch where each item took two.
func index(ctx context.Context, db bun.IDB, feedID, newsPageID, itemNewsPageID uuid.UUID, c domain.ArticleContent, at time.Time) error {
	r := indexRow{feedID: feedID, newsPageID: newsPageID, itemNewsPageID: itemNewsPageID,
		address: nearcopy.NormalAddress(c.URL), title: c.Title, at: at}
	if c.Signature != nil {
		r.signature, r.bands = c.Signature.String(), c.Signature.Bands(feedID[:])
	}
	if w, ok := projections.Deferred(ctx, indexRowsKey{}, func() *indexRows { return &indexRows{} }); ok {
		w.rows = append(w.rows, r)
		return nil
	}
	return (&indexRows{rows: []indexRow{r}}).Flush(ctx, db)
}

// flushIndex writes what the batch has deferred to the index, before a
// handler that reads or deletes its rows.
func flushIndex(ctx context.Context, db bun.IDB) error {
	if w, ok := projections.Deferred(ctx, indexRowsKey{}, func() *indexRows { return &indexRows{} }); ok {
		return w.Flush(ctx, db)
	}
	return nil
}

type indexRowsKey struct{}

// indexRows are a batch's index rows, in the order of their events.
type indexRows struct{ rows []indexRow }

type indexRow struct {
	feedID, newsPageID, itemNewsPageID uuid.UUID
	address, title, signature          string
	at                                 time.Time
	bands                              []int64
}

// Flush writes the rows and their bands, and forgets them. A page indexed
// twice in the batch (an item, then a copy naming another item) gets what
// one upsert per event left: its first row, with the item its last one
// names (the upsert's conflict changes only that); its bands are one set
// either way.
func (w *indexRows) Flush(ctx context.Context, db bun.IDB) error {
	rows := w.rows
	w.rows = nil
	type key struct{ feed, page uuid.UUID }
	first, item := make(map[key]int, len(rows)), make(map[key]uuid.UUID, len(rows))
	for i, r := range rows {
		k := key{r.feedID, r.newsPageID}
		if _, ok := first[k]; !ok {
			first[k] = i
		}
		item[k] = r.itemNewsPageID
	}
	var (
		feeds, pages, items     [][16]byte
		addresses, titles, sigs []string
		ats                     []time.Time
		bands                   []int64
		bandFeeds, bandPages    [][16]byte
	)
	flushRows := func() error {
		if len(feeds) == 0 {
			return nil
		}
		err := projections.ExecArrays(ctx, db, `INSERT INTO news_copy_index (feed_id, news_page_id, item_news_page_id, address, title, signature, effective_at)
			SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
			ON CONFLICT (feed_id, news_page_id) DO UPDATE SET item_news_page_id = EXCLUDED.item_news_page_id`,
			feeds, pages, items, addresses, titles, sigs, ats)
		feeds, pages, items, addresses, titles, sigs, ats = feeds[:0], pages[:0], items[:0], addresses[:0], titles[:0], sigs[:0], ats[:0]
		return err
	}
	flushBands := func() error {
		if len(bands) == 0 {
			return nil
		}
		err := projections.ExecArrays(ctx, db, `INSERT INTO news_copy_bands (band, feed_id, news_page_id)
			SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::uuid[]) ON CONFLICT DO NOTHING`, bands, bandFeeds, bandPages)
		bands, bandFeeds, bandPages = bands[:0], bandFeeds[:0], bandPages[:0]
		return err
	}
	for i, r := range rows {
		if k := (key{r.feedID, r.newsPageID}); first[k] == i {
			feeds, pages, items = append(feeds, r.feedID), append(pages, r.newsPageID), append(items, item[k])
			addresses, titles, sigs, ats = append(addresses, r.address), append(titles, r.title), append(sigs, r.signature), append(ats, r.at)
			if len(feeds) == projections.MaxRowsPerInsert {
				if err := flushRows(); err != nil {
					return err
				}
			}
		}
		for _, b := range r.bands {
			bands, bandFeeds, bandPages = append(bands, b), append(bandFeeds, r.feedID), append(bandPages, r.newsPageID)
		}
		if len(bands) >= projections.MaxRowsPerInsert {
			if err := flushBands(); err != nil {
				return err
			}
		}
	}
	if err := flushRows(); err != nil {
		return err
	}
	return flushBands()
}
