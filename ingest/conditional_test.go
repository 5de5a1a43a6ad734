package ingest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// sitemapSource attaches the fake site's news sitemap to a new feed.
func sitemapSource(c client, site *fakeSite, feedName string) (feed string, att map[string]any) {
	feed = c.createFeed(feedName)
	att = c.attach(feed, map[string]any{"sourceType": "sitemap", "url": site.URL + "/news-sitemap.xml", "siteId": c.siteRecord(site.domain())})
	return feed, att
}

// hitsBesides is how often each path but except was requested.
func (s *fakeSite) hitsBesides(except string) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for p, n := range s.hits {
		if p != except {
			out[p] = n
		}
	}
	return out
}

const newsSitemap = "/news-sitemap.xml"

func TestAnUnchangedSitemapCostsA304PerPollAndAChangedOneIsReadAgain(t *testing.T) {
	t.Parallel()
	first := &fakeArticle{Slug: "first-story-in-the-sitemap", Title: "First", Published: time.Now().Add(-time.Hour), Markup: jsonLD, In: inNewsSitemap}
	site := newFakeSite(t, first)
	h := servicetest.Start(t, withoutCrawler())
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, testWorker("w1"))
	c := client{h, h.Key}
	feed, _ := sitemapSource(c, site, "conditional")
	wait.Until(t, 10*time.Second, "the first article", func() bool { return c.hasItems(feed, site, first) })

	t.Run("the polls after the first get 304 and fetch nothing else", func(t *testing.T) {
		wait.Until(t, 10*time.Second, "two polls answered 304", func() bool { _, nm := site.listingAnswers(newsSitemap); return nm >= 2 })
		if full, _ := site.listingAnswers(newsSitemap); full != 1 {
			t.Errorf("the unchanged sitemap was sent in full %d times, want once", full)
		}
		// robots.txt (for the article) and the article, once each.
		for p, n := range site.hitsBesides(newsSitemap) {
			if n != 1 {
				t.Errorf("%s was requested %d times, want once", p, n)
			}
		}
	})
	t.Run("a changed sitemap is read in full and yields its new article", func(t *testing.T) {
		second := &fakeArticle{Slug: "second-story-in-the-sitemap", Title: "Second", Published: time.Now(), Markup: openGraph, In: inNewsSitemap}
		site.add(second)
		wait.Until(t, 10*time.Second, "the new article", func() bool { return c.hasItems(feed, site, second) })
		full, nm := site.listingAnswers(newsSitemap)
		if full != 2 {
			t.Errorf("the sitemap was sent in full %d times, want twice", full)
		}
		wait.Until(t, 10*time.Second, "a 304 for the new version", func() bool { _, n := site.listingAnswers(newsSitemap); return n > nm })
		if full, _ := site.listingAnswers(newsSitemap); full != 2 {
			t.Errorf("the sitemap was sent in full %d times after its change was read, want twice", full)
		}
		if a, b := site.hitCount(first.path()), site.hitCount(second.path()); a != 1 || b != 1 {
			t.Errorf("the articles were fetched %d and %d times, want once each", a, b)
		}
	})
}

func TestAnArticleThatFailedIsRetriedWhileItsSitemapAnswers304(t *testing.T) {
	t.Parallel()
	now := time.Now()
	fine := &fakeArticle{Slug: "story-whose-page-loads", Title: "Fine", Published: now.Add(-time.Hour), Markup: jsonLD, In: inNewsSitemap}
	flaky := &fakeArticle{Slug: "story-whose-page-fails-for-now", Title: "Flaky", Published: now.Add(-2 * time.Hour), Markup: jsonLD,
		In: inNewsSitemap, Status: http.StatusServiceUnavailable}
	site := newFakeSite(t, fine, flaky)
	h := servicetest.Start(t, withoutCrawler())
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, testWorker("w1"))
	c := client{h, h.Key}
	feed, _ := sitemapSource(c, site, "retrying")
	wait.Until(t, 10*time.Second, "the article that loads", func() bool { return c.hasItems(feed, site, fine) })

	wait.Until(t, 10*time.Second, "polls answered 304 that still retry the failing article", func() bool {
		_, nm := site.listingAnswers(newsSitemap)
		return nm >= 2 && site.hitCount(flaky.path()) >= 3
	})
	site.setStatus(flaky, 0)
	wait.Until(t, 10*time.Second, "the failing article once it loads", func() bool { return c.hasItems(feed, site, flaky) })
	if full, _ := site.listingAnswers(newsSitemap); full != 1 {
		t.Errorf("the unchanged sitemap was sent in full %d times, want once", full)
	}
	if n := site.hitCount(fine.path()); n != 1 {
		t.Errorf("the article that loaded was fetched %d times, want once", n)
	}
}

func TestAnAttachmentReachingFurtherBackThanTheCrawlsDidReadsTheListingsInFull(t *testing.T) {
	t.Parallel()
	early := &fakeArticle{Slug: "story-before-everything", Title: "Early", Published: time.Now().Add(-time.Hour), Markup: jsonLD, In: inNewsSitemap}
	site := newFakeSite(t, early)
	h := servicetest.Start(t, withoutCrawler())
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, testWorker("w1"))
	c := client{h, h.Key}
	feed, att := sitemapSource(c, site, "re-enabled")
	wait.Until(t, 10*time.Second, "the first article", func() bool { return c.hasItems(feed, site, early) })

	// Re-enabled, the attachment takes only what is dated from now on, and
	// so do the crawls, which store the sitemap's validators for that
	// window.
	setSource := func(enabled bool) {
		c.do("PATCH", "/feeds/news/"+feed+"/sources/"+att["id"].(string), map[string]any{"enabled": enabled}).MustStatus(t, http.StatusOK)
	}
	setSource(false)
	older := &fakeArticle{Slug: "story-dated-before-re-enabling", Title: "Older", Published: time.Now(), Markup: jsonLD, In: inNewsSitemap}
	time.Sleep(5 * time.Millisecond) // the article is dated before re-enabling
	setSource(true)
	site.add(older)
	wait.Until(t, 10*time.Second, "the changed sitemap read", func() bool { full, _ := site.listingAnswers(newsSitemap); return full == 2 })
	_, nm := site.listingAnswers(newsSitemap)
	wait.Until(t, 10*time.Second, "a 304 for it", func() bool { _, n := site.listingAnswers(newsSitemap); return n > nm })
	if n := site.hitCount(older.path()); n != 0 {
		t.Fatalf("the article dated before the window was fetched %d times", n)
	}

	// A new attachment takes 14 days back: its backfill brings a crawl
	// forward, which must not take the sitemap's 304 for "nothing new".
	other := c.createFeed("reaching back")
	att2 := c.attach(other, map[string]any{"sourceType": "sitemap", "url": site.URL + newsSitemap, "siteId": c.siteRecord(site.domain())})
	if att2["sourceId"] != att["sourceId"] {
		t.Fatalf("the second attachment has source %v, want %v", att2["sourceId"], att["sourceId"])
	}
	wait.Until(t, 10*time.Second, "both articles in the new feed", func() bool { return c.hasItems(other, site, early, older) })
	if full, _ := site.listingAnswers(newsSitemap); full != 3 {
		t.Errorf("the sitemap was sent in full %d times, want 3", full)
	}
	if _, ok := c.items(feed)[site.URL+older.path()]; ok {
		t.Error("the re-enabled feed got an article dated before it was re-enabled")
	}
}
