package insights_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/readmodel/insights"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// BenchmarkFeedbackInsights reads one page of insights of an organization
// with 100,000 items over 20 feeds and 50 sources and 100,000 feedback
// entries given over 90 days, the insight tables filled directly with SQL
// (the query is what is measured, not the projector). Each grouping runs
// over all the organization's feedback, and over one feed's last 30 days.
func BenchmarkFeedbackInsights(b *testing.B) {
	db, _ := testdb.New(b)
	ctx := context.Background()
	org := uuid.New()
	start := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	for _, s := range []string{
		`INSERT INTO insight_items (item_id, organization_id, feed_id, feed_kind, source_id, added_at)
		SELECT gen_random_uuid(), ?0, f.id, 'news', s.id, ?1::timestamptz + (i * interval '1 minute')
		FROM generate_series(0, 99999) AS i
		JOIN (SELECT n, gen_random_uuid() AS id FROM generate_series(0, 19) AS n) AS f ON f.n = i % 20
		JOIN (SELECT n, gen_random_uuid() AS id FROM generate_series(0, 49) AS n) AS s ON s.n = i % 50`,
		`INSERT INTO insight_feedback (feedback_id, organization_id, feed_id, feed_kind, item_id, source_id, rating, comment, given_at, log_commit, log_prepare, item_added_at)
		SELECT gen_random_uuid(), ?0, it.feed_id, 'news', it.item_id, it.source_id,
			(ARRAY['positive', 'negative', 'neutral'])[1 + n % 3], CASE WHEN n % 4 = 0 THEN 'a comment' ELSE '' END,
			it.added_at + (n % 1440) * interval '1 minute', n, 0, it.added_at
		FROM (SELECT row_number() OVER () AS n, i.* FROM insight_items AS i) AS it`,
		`VACUUM (ANALYZE) insight_items, insight_feedback`,
	} {
		if _, err := db.Bun.NewRaw(s, org, start).Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	var feed uuid.UUID
	if err := db.Bun.NewRaw("SELECT feed_id FROM insight_items LIMIT 1").Scan(ctx, &feed); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Bun.NewRaw("INSERT INTO feeds (id, organization_id, kind, name, description, enabled, created_at, updated_at) VALUES (?, ?, 'news', 'f', 'd', true, now(), now())", feed, org).Exec(ctx); err != nil {
		b.Fatal(err)
	}
	q := insights.NewQueries(db.Bun)
	since := start.AddDate(0, 0, 40)
	for _, scope := range []struct {
		name string
		f    insights.FeedbackInsightFilter
	}{
		{"all", insights.FeedbackInsightFilter{}},
		{"one feed, 30 days", insights.FeedbackInsightFilter{FeedID: &feed, Since: &since}},
	} {
		for _, groupBy := range insights.InsightGroupings {
			b.Run(scope.name+"/"+groupBy, func(b *testing.B) {
				f := scope.f
				f.GroupBy, f.Limit = groupBy, 50
				for b.Loop() {
					page, err := q.FeedbackInsights(ctx, org, f)
					if err != nil || len(page.Groups) == 0 {
						b.Fatalf("%d groups, %v", len(page.Groups), err)
					}
				}
			})
		}
	}
}
