package newsitems

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/newsitems/migrations"
)

// Projector projects the items of every news feed and their counts.
// Deleting a feed or a source keeps items (api.md 3): only the feed's
// visibility, checked at read time, hides them.
type Projector struct{}

func (Projector) Name() string { return "newsitems" }
func (Projector) Version() int { return 2 } // 2: items carry their change key
func (Projector) Tables() []string {
	return []string{"news_items", "news_feed_item_counts", "news_article_texts"}
}

// Migrations are its tables' migrations, in the package migrations
// beside it; the service's schema applies them with every other owner's.
func (Projector) Migrations() migrate.Owner { return migrations.Owner }

func (Projector) Handlers() []projections.Handler {
	return []projections.Handler{projections.On(projectArticleText), projections.OnEnvelope(projectNewsItem)}
}

// IndexesLast: a rebuild creates the list and change indexes after the
// catch-up (projections.IndexesLast).
func (Projector) IndexesLast() string {
	return "it only inserts; ON CONFLICT uses the primary keys and the unique (feed, page) index, and an item finds its article's text by the text's primary key"
}

// projectArticleText keeps an article's running text, which every item of
// the article is searched by (its words are worked out when the item is
// inserted, from this table: migrations, item_body_search). An article's
// discovery always precedes its items in the log; in a batch, the texts
// are written before the items.
func projectArticleText(ctx context.Context, db bun.IDB, e domain.ArticleDiscovered) error {
	if e.Content.Text == "" {
		return nil
	}
	t := articleText{page: e.NewsPageID, text: e.Content.Text}
	if w, ok := projections.Deferred(ctx, newsItemRowsKey{}, func() *newsItemRows { return &newsItemRows{} }); ok {
		w.texts = append(w.texts, t)
		return nil
	}
	return insertArticleTexts(ctx, db, []articleText{t})
}

// articleText is a row of news_article_texts.
type articleText struct {
	page uuid.UUID
	text string
}

func insertArticleTexts(ctx context.Context, db bun.IDB, texts []articleText) error {
	pages, bodies := make([][16]byte, len(texts)), make([]string, len(texts))
	for i, t := range texts {
		pages[i], bodies[i] = t.page, t.text
	}
	return projections.ExecArrays(ctx, db, `INSERT INTO news_article_texts (news_page_id, text)
		SELECT * FROM unnest($1::uuid[], $2::text[]) ON CONFLICT DO NOTHING`, pages, bodies)
}

// projectNewsItem defers the row to the end of the batch when it runs in one:
// inserting a batch's items with one statement is what lets a rebuild or a
// catch-up run at tens of thousands of events per second. The add's log
// position is the item's change key (changes.Key).
func projectNewsItem(ctx context.Context, db bun.IDB, e domain.NewsItemAdded, env projections.Envelope) error {
	row := NewsItem{
		ID: e.ItemID, FeedID: e.FeedID, OrganizationID: e.OrganizationID, NewsPageID: e.NewsPageID,
		VersionID: e.VersionID, SourceID: e.SourceID, AttachmentID: e.AttachmentID, SourceType: string(e.SourceType),
		URL: e.Content.URL, Title: e.Content.Title, Description: e.Content.Description, ImageURL: e.Content.ImageURL,
		PublishedAt: e.Content.PublishedAt, CreatedAt: e.At, UpdatedAt: e.At, Platform: e.Content.Platform, Language: e.Content.Language,
		ChangeCommit: int64(env.Position.Commit), ChangePrepare: int64(env.Position.Prepare),
	}
	block := e.Content.Block()
	row.Source = &block
	if w, ok := projections.Deferred(ctx, newsItemRowsKey{}, func() *newsItemRows { return &newsItemRows{} }); ok {
		w.rows = append(w.rows, row)
		return nil
	}
	return insertNewsItems(ctx, db, []NewsItem{row})
}

type newsItemRowsKey struct{}

// newsItemRows are a batch's article texts and items, in log order.
type newsItemRows struct {
	texts []articleText
	rows  []NewsItem
}

func (w *newsItemRows) Flush(ctx context.Context, db bun.IDB) error {
	for texts := w.texts; len(texts) > 0; {
		n := min(len(texts), projections.MaxRowsPerInsert)
		if err := insertArticleTexts(ctx, db, texts[:n]); err != nil {
			return err
		}
		texts = texts[n:]
	}
	for rows := w.rows; len(rows) > 0; {
		n := min(len(rows), projections.MaxRowsPerInsert)
		if err := insertNewsItems(ctx, db, rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// insertNewsItems inserts rows in order, skipping those already present
// (by id, or an article already in its feed; also within rows, where the
// first wins, as with one insert per event), and adds what was inserted to
// the feeds' counts: one statement, one round trip. The rows travel as
// array parameters of a statement the connection prepares once, rather
// than as a VALUES list Postgres would parse anew for every batch.
func insertNewsItems(ctx context.Context, db bun.IDB, rows []NewsItem) error {
	n := len(rows)
	// Plain [16]byte and pgtype values: pgx encodes them directly, where
	// uuid.UUID and *time.Time elements would go through slower fallbacks.
	var (
		ids, feeds, orgs, pages = make([][16]byte, n), make([][16]byte, n), make([][16]byte, n), make([][16]byte, n)
		versions, sources, atts = make([][16]byte, n), make([][16]byte, n), make([][16]byte, n)
		types, urls, titles     = make([]string, n), make([]string, n), make([]string, n)
		descs, images           = make([]string, n), make([]string, n)
		published               = make([]pgtype.Timestamptz, n)
		blocks, platforms       = make([]string, n), make([]*string, n)
		created, updated        = make([]time.Time, n), make([]time.Time, n)
		commits, prepares       = make([]int64, n), make([]int64, n)
		languages               = make([]string, n)
	)
	for i, r := range rows {
		ids[i], feeds[i], orgs[i], pages[i] = r.ID, r.FeedID, r.OrganizationID, r.NewsPageID
		versions[i], sources[i], atts[i] = r.VersionID, r.SourceID, r.AttachmentID
		types[i], urls[i], titles[i], descs[i], images[i] = r.SourceType, r.URL, r.Title, r.Description, r.ImageURL
		if r.PublishedAt != nil {
			published[i] = pgtype.Timestamptz{Time: *r.PublishedAt, Valid: true}
		}
		created[i], updated[i] = r.CreatedAt, r.UpdatedAt
		commits[i], prepares[i] = r.ChangeCommit, r.ChangePrepare
		languages[i] = r.Language
		block, err := json.Marshal(r.Block())
		if err != nil {
			return fmt.Errorf("encode source block of item %s: %w", r.ID, err)
		}
		blocks[i] = string(block)
		if r.Platform != nil {
			raw, err := json.Marshal(r.Platform)
			if err != nil {
				return fmt.Errorf("encode platform ids of item %s: %w", r.ID, err)
			}
			s := string(raw)
			platforms[i] = &s
		}
	}
	return projections.ExecArraysUnlessConflict(ctx, db, insertNewItemsSQL, insertNewsItemsSQL, ids, feeds, orgs, pages, versions, sources, atts, types, urls, titles, descs, images, published, created, updated, blocks, platforms, commits, prepares, languages)
}

// insertNewItemsSQL is insertNewsItemsSQL for rows that are all new:
// what a rebuild or a catch-up inserts, more cheaply
// (projections.ExecArraysUnlessConflict).
var insertNewItemsSQL = strings.Replace(insertNewsItemsSQL, "ON CONFLICT DO NOTHING\n", "", 1)

// Unqualified names, so that a rebuild's search_path sends the rows to
// its shadow tables.
const insertNewsItemsSQL = `
WITH ins AS (
    INSERT INTO news_items (id, feed_id, organization_id, news_page_id, version_id, source_id, attachment_id,
        source_type, url, title, description, image_url, published_at, created_at, updated_at, source, platform,
        change_commit, change_prepare, language, search)
    SELECT r.id, r.feed_id, r.organization_id, r.news_page_id, r.version_id, r.source_id, r.attachment_id,
        r.source_type, r.url, r.title, r.description, r.image_url, r.published_at, r.created_at, r.updated_at, r.source, r.platform,
        r.change_commit, r.change_prepare, r.language, feedsvc_news_search(r.language, r.title, r.description, t.text)
    FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::uuid[],
        $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
        $13::timestamptz[], $14::timestamptz[], $15::timestamptz[], $16::jsonb[], $17::jsonb[], $18::bigint[], $19::bigint[], $20::text[])
        WITH ORDINALITY AS r(id, feed_id, organization_id, news_page_id, version_id, source_id, attachment_id,
            source_type, url, title, description, image_url, published_at, created_at, updated_at, source, platform,
            change_commit, change_prepare, language, ord)
    LEFT JOIN news_article_texts AS t ON t.news_page_id = r.news_page_id
    ORDER BY ord
    ON CONFLICT DO NOTHING
    RETURNING feed_id
)
INSERT INTO news_feed_item_counts (feed_id, items)
SELECT feed_id, count(*) FROM ins GROUP BY feed_id
ON CONFLICT (feed_id) DO UPDATE SET items = news_feed_item_counts.items + EXCLUDED.items`
