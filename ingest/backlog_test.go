package ingest_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

func TestASiteListingMoreThanACrawlFetchesIsCrawledAgainAtOnceUntilItsBacklogIsDone(t *testing.T) {
	t.Parallel()
	now := time.Now()
	var stories []*fakeArticle
	for i := range 12 {
		stories = append(stories, &fakeArticle{Slug: fmt.Sprintf("backlog-story-number-%02d", i), Title: fmt.Sprintf("Story %d", i),
			Published: now.Add(-time.Duration(i+1) * time.Hour), Markup: jsonLD, In: inNewsSitemap})
	}
	broken := &fakeArticle{Slug: "backlog-story-that-breaks", Title: "Broken", Published: now.Add(-30 * time.Minute),
		Status: http.StatusInternalServerError, In: inNewsSitemap}
	site := newFakeSite(t, append(stories, broken)...)
	h := servicetest.Start(t, withoutCrawler())
	cfg := testWorker("w1")
	// The next poll is an hour away (however busy the site looks), so
	// every crawl during the test is one the backlog asked for: 13
	// candidates take three crawls of 5.
	cfg.PollInterval, cfg.MinPollInterval, cfg.MaxFetchesPerCrawl = time.Hour, time.Hour, 5
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, cfg)
	c := client{h, h.Key}
	feed := c.createFeed("backlog")
	src := c.attach(feed, map[string]any{"sourceType": "site", "domain": site.domain()})["sourceId"].(string)

	wait.Until(t, 15*time.Second, "every story, without waiting a poll", func() bool { return c.hasItems(feed, site, stories...) })
	t.Run("once the backlog is done the source waits for its next poll", func(t *testing.T) {
		wait.Until(t, 5*time.Second, "the next crawl an hour away", func() bool { return crawlStateOf(t, h, src).NextAt.After(time.Now().Add(30 * time.Minute)) })
	})
	t.Run("each story is fetched once", func(t *testing.T) {
		for _, a := range stories {
			if n := site.hitCount(a.path()); n != 1 {
				t.Errorf("%s was fetched %d times, want once", a.Slug, n)
			}
		}
	})
	t.Run("a page that failed is retried at the next poll, not by every crawl of the backlog", func(t *testing.T) {
		if n := site.hitCount(broken.path()); n != 1 {
			t.Errorf("the broken page was fetched %d times, want once", n)
		}
	})
}

func TestACrawlGoingOnWithABacklogTakesWhatTheFirstCrawlListedAndTheNextPollAsksWithThatReadsValidators(t *testing.T) {
	t.Parallel()
	now := time.Now()
	var stories []*fakeArticle
	for i := range 12 {
		stories = append(stories, &fakeArticle{Slug: fmt.Sprintf("listed-once-story-%02d", i), Title: fmt.Sprintf("Story %d", i),
			Published: now.Add(-time.Duration(i+1) * time.Hour), Markup: jsonLD, In: inNewsSitemap})
	}
	site := newFakeSite(t, stories...)
	h := servicetest.Start(t, withoutCrawler())
	cfg := testWorker("w1")
	// 12 candidates take three crawls of 5; polls follow every ~half second.
	cfg.PollInterval, cfg.MaxFetchesPerCrawl = 500*time.Millisecond, 5
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, cfg)
	c := client{h, h.Key}
	feed, _ := sitemapSource(c, site, "listed-once")

	wait.Until(t, 15*time.Second, "every story", func() bool { return c.hasItems(feed, site, stories...) })
	t.Run("the sitemap is read once for the three crawls of the backlog", func(t *testing.T) {
		if full, _ := site.listingAnswers(newsSitemap); full != 1 {
			t.Errorf("the sitemap was sent in full %d times, want once", full)
		}
	})
	t.Run("the poll after the backlog gets 304 for the sitemap read before it", func(t *testing.T) {
		wait.Until(t, 10*time.Second, "a 304", func() bool { _, nm := site.listingAnswers(newsSitemap); return nm >= 1 })
		if full, _ := site.listingAnswers(newsSitemap); full != 1 {
			t.Errorf("the unchanged sitemap was sent in full %d times, want once", full)
		}
	})
	t.Run("each story is fetched once", func(t *testing.T) {
		for _, a := range stories {
			if n := site.hitCount(a.path()); n != 1 {
				t.Errorf("%s was fetched %d times, want once", a.Slug, n)
			}
		}
	})
}
