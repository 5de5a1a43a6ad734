package changes_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/readmodel/changes"
	"github.com/feedsvc/feedsvc/readmodel/feeds"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// changeFeed is a feed of n items whose changes are spread over the log
// three to a position, as batches of crawls leave them.
type changeFeed struct {
	db        *database.DB
	org, feed uuid.UUID
	// half is the change key of the middle item.
	half       changes.Key
	news       *newsitems.Queries
	happenings *happeningitems.Queries
}

func newChangeFeed(b *testing.B, kind domain.FeedKind, n int) *changeFeed {
	b.Helper()
	db, _ := testdb.New(b)
	ctx := context.Background()
	f := &changeFeed{db: db, org: uuid.New(), feed: uuid.New(), news: newsitems.NewQueries(db.Bun), happenings: happeningitems.NewQueries(db.Bun)}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	if _, err := db.Bun.NewInsert().Model(&feeds.Feed{Kind: kind, ID: f.feed, OrganizationID: f.org,
		Name: "f", Enabled: true, CreatedAt: at, UpdatedAt: at}).Exec(ctx); err != nil {
		b.Fatal(err)
	}
	var stmts []string
	table := "news_items"
	if kind == domain.FeedNews {
		stmts = []string{`INSERT INTO news_items (id, feed_id, organization_id, news_page_id, version_id, source_id, attachment_id,
				source_type, url, title, description, created_at, updated_at, change_commit, change_prepare)
			SELECT gen_random_uuid(), ?0, ?1, gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(),
				'site', 'https://example.com/news/' || g, 'Title ' || g, 'A description of item ' || g,
				?2::timestamptz + g * interval '1 second', ?2::timestamptz + g * interval '1 second', 1000 + g / 3, g
			FROM generate_series(1, ?3) AS g`,
			`INSERT INTO news_feed_item_counts (feed_id, items) VALUES (?0, ?3)`}
	} else {
		table = "event_items"
		// Events with ten weekly occurrences from a day in the coming year.
		stmts = []string{`INSERT INTO calendar_events (id, source_id, details, current_head, current_published, current_tail,
				legacy_head, legacy_published, legacy_tail, source_block, discovered_at, updated_at)
			SELECT md5(?0::text || g)::uuid, gen_random_uuid(), '{}', '"title":"Event","description":"About it"', '',
				'"supportingImages":[],"urls":[],"geoLocations":[]', '"title":"Event","description":"About it"', '"publishedAt":null',
				'"supportingImages":[],"urls":[],"geoLocations":[]', '{"type":"site"}', ?2, ?2
			FROM generate_series(1, ?3) AS g`,
			`INSERT INTO event_items (id, feed_id, organization_id, event_id, source_id, source_type, added_at, visible, change_commit, change_prepare)
			SELECT gen_random_uuid(), ?0, ?1, e.id, e.source_id, 'site', ?2, true, 1000 + e.n / 3, e.n
			FROM (SELECT md5(?0::text || g)::uuid AS id, gen_random_uuid() AS source_id, g AS n FROM generate_series(1, ?3) AS g) AS e`,
			`INSERT INTO event_item_occurrences (feed_id, item_id, occurrence_id, instance_id, starts_at, end_at, ends_at,
				prev_ends, prev_start, status, instance_ends_at, added_at)
			SELECT i.feed_id, i.id, gen_random_uuid(), gen_random_uuid(), s.start, s.start + interval '2 hours', s.start + interval '2 hours',
				s.prev_ends, s.prev_start, 'scheduled', s.start + interval '2 hours', i.added_at
			FROM event_items AS i
			CROSS JOIN LATERAL (SELECT t.start,
					CASE WHEN t.k = 0 THEN '0001-01-01' ELSE t.start - interval '7 days' + interval '2 hours' END AS prev_ends,
					CASE WHEN t.k = 0 THEN '0001-01-01' ELSE t.start - interval '7 days' END AS prev_start
				FROM (SELECT k, now() + (i.change_prepare % 365) * interval '1 day' + k * interval '7 days' AS start
					FROM generate_series(0, 9) AS k) AS t) AS s`,
			`INSERT INTO event_feed_spans (feed_id, longest) VALUES (?0, interval '2 hours')`,
		}
	}
	for _, s := range stmts {
		if _, err := db.Bun.NewRaw(s, f.feed, f.org, at, n).Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.Bun.ExecContext(ctx, "VACUUM ANALYZE "+table); err != nil {
		b.Fatal(err)
	}
	var commit, prepare int64
	if err := db.Bun.NewRaw("SELECT change_commit, change_prepare, id FROM ? WHERE feed_id = ? ORDER BY change_commit, change_prepare, id OFFSET ? LIMIT 1",
		bun.Ident(table), f.feed, n/2).Scan(ctx, &commit, &prepare, &f.half.Item); err != nil {
		b.Fatal(err)
	}
	f.half.Commit, f.half.Prepare = uint64(commit), uint64(prepare)
	return f
}

// end is a key after every change.
var end = changes.Key{Commit: 1 << 40}

func BenchmarkNewsItemPages(b *testing.B) {
	f := newChangeFeed(b, domain.FeedNews, 100_000)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		filter newsitems.ItemFilter
	}{
		{"first page by offset", newsitems.ItemFilter{Limit: 50}},
		{"changes from the start", newsitems.ItemFilter{Limit: 50, After: &changes.Key{}}},
		{"changes from the middle", newsitems.ItemFilter{Limit: 50, After: &f.half}},
		{"a poll with nothing new", newsitems.ItemFilter{Limit: 50, After: &end}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := f.news.NewsItems(ctx, f.org, f.feed, c.filter); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEventItemPages(b *testing.B) {
	f := newChangeFeed(b, domain.FeedHappenings, 10_000)
	ctx := context.Background()
	now := time.Now()
	base := happeningitems.Filter{Now: now, OrderBy: happeningitems.OrderByOccurrence, Limit: 20}
	ranged := base
	ranged.Since, ranged.Until = now, now.Add(30*24*time.Hour)
	for _, c := range []struct {
		name  string
		apply func(happeningitems.Filter) happeningitems.Filter
	}{
		{"first page by offset, next 30 days", func(happeningitems.Filter) happeningitems.Filter { return ranged }},
		{"changes from the start", func(f happeningitems.Filter) happeningitems.Filter {
			f.After = &changes.Key{}
			return f
		}},
		{"changes from the middle", func(fl happeningitems.Filter) happeningitems.Filter { fl.After = &f.half; return fl }},
		{"changes from the middle, next 30 days", func(happeningitems.Filter) happeningitems.Filter {
			fl := ranged
			fl.After = &f.half
			return fl
		}},
		{"a poll with nothing new", func(f happeningitems.Filter) happeningitems.Filter { f.After = &end; return f }},
	} {
		filter := c.apply(base)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := f.happenings.Items(ctx, f.org, f.feed, filter); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAPollOfTheStreamedFeeds is the live item streams' poll
// (changes.LatestOf over every streamed feed in one statement) beside its
// peer, each stream polling its own feed (changes.Latest per feed): 500
// news feeds of 50 items each.
func BenchmarkAPollOfTheStreamedFeeds(b *testing.B) {
	const feeds, items = 500, 50
	db, _ := testdb.New(b)
	ctx := context.Background()
	if _, err := db.Bun.ExecContext(ctx, `INSERT INTO news_items (id, feed_id, organization_id, news_page_id, version_id, source_id, attachment_id,
			source_type, url, title, description, created_at, updated_at, change_commit, change_prepare)
		SELECT gen_random_uuid(), md5(f::text)::uuid, gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(),
			'site', 'https://example.com/' || f || '/' || g, 'T', 'D', now(), now(), 1000 + g, f
		FROM generate_series(1, ?) AS f, generate_series(1, ?) AS g`, feeds, items); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Bun.ExecContext(ctx, "VACUUM ANALYZE news_items"); err != nil {
		b.Fatal(err)
	}
	var ids []uuid.UUID
	if err := db.Bun.NewRaw("SELECT DISTINCT feed_id FROM news_items").Scan(ctx, &ids); err != nil {
		b.Fatal(err)
	}
	b.Run("one statement for every feed", func(b *testing.B) {
		for b.Loop() {
			latest, err := changes.LatestOf(ctx, db.Bun, "news_items", ids)
			if err != nil || len(latest) != feeds {
				b.Fatalf("%d feeds, %v", len(latest), err)
			}
		}
	})
	b.Run("one statement per feed", func(b *testing.B) {
		for b.Loop() {
			for _, id := range ids {
				if _, err := changes.Latest(ctx, db.Bun, "news_items", id); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
