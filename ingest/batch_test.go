package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// Articles that are ready while the crawl is storing others wait and are
// stored together: one commit for their article events, one for their
// items, where each article took its own before. To make them wait
// deterministically, the test holds the event log's table locked against
// inserts until every page has been fetched: the first article's append
// waits, and the others queue behind it.
func TestArticlesReadyWhileOthersAreStoredCommitTogether(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	var articles []*fakeArticle
	for i := range 6 { // fewer than a crawl fetches at once, so all are in flight
		articles = append(articles, &fakeArticle{Slug: fmt.Sprintf("story-%d", i), Title: fmt.Sprintf("Story %d", i),
			Published: now.Add(-time.Duration(i+1) * time.Hour), Markup: jsonLD, In: inNewsSitemap})
	}
	site := newFakeSite(t, articles...)
	h := servicetest.Start(t, withPollInterval(time.Hour), servicetest.WithCrawler())
	c := client{h, h.Key}
	feed := c.createFeed("batched")
	ctx := context.Background()

	c.attach(feed, map[string]any{"sourceType": "site", "domain": site.domain()})
	// The attach's events are stored (it answers once they are
	// projected); the crawl's first article is not yet, a second away.
	lock, err := h.Service.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(ctx) //nolint:errcheck // a no-op once rolled back below
	// SHARE blocks inserts but not reads, and takes no transaction id, so
	// it holds no reader of the log back.
	if _, err := lock.Exec(ctx, `LOCK TABLE events IN SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 20*time.Second, "every article fetched", func() bool {
		for _, a := range articles {
			if site.hitCount(a.path()) == 0 {
				return false
			}
		}
		return true
	})
	// Parsing is quick; give the last pages time to join the queue.
	time.Sleep(500 * time.Millisecond)
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 20*time.Second, "every article listed", func() bool { return c.hasItems(feed, site, articles...) })

	for _, typ := range []string{"ArticleDiscovered", "NewsItemAdded"} {
		var events, commits int
		if err := h.Service.DB.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT transaction_id) FROM events WHERE event_type = $1`, typ).
			Scan(&events, &commits); err != nil {
			t.Fatal(err)
		}
		// The first article is stored alone (it took the lock's wait);
		// the five that queued meanwhile go together, a straggler late.
		if events != len(articles) || commits > 3 {
			t.Errorf("%d %s events in %d commits, want %d in at most 3", events, typ, commits, len(articles))
		}
	}
	// A batch's seen URLs are marked distributed once its items' call
	// returns, which, with the feed's copy lock, is after the copies read
	// model shows them: the list can show the items a moment before.
	var pending int
	wait.Until(t, 20*time.Second, "every seen URL distributed with its article", func() bool {
		if err := h.Service.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM crawl_seen WHERE distributed_at IS NULL OR article_id IS NULL`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		return pending == 0
	})
}
