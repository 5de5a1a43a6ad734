package ingest_test

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// sourceState is a source's row in crawl_state.
type sourceState struct {
	Failures    int
	LastError   string
	NextAt      time.Time
	LastCrawlAt time.Time
}

// crawlStateOf reads a source's crawl_state, zero before its first lease.
func crawlStateOf(t *testing.T, h *servicetest.Harness, sourceID string) sourceState {
	t.Helper()
	var s sourceState
	var last *time.Time
	err := h.Service.DB.Bun.NewRaw(`SELECT failures, last_error, next_at, last_crawl_at FROM crawl_state WHERE source_id = ?`, sourceID).
		Scan(context.Background(), &s.Failures, &s.LastError, &s.NextAt, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return s
	}
	if err != nil {
		t.Fatalf("read crawl state of source %s: %v", sourceID, err)
	}
	if last != nil {
		s.LastCrawlAt = *last
	}
	return s
}

// failureRecords is what the crawler holds against a source's URLs: how many
// it gave up on and how many failures it counted.
func failureRecords(t *testing.T, h *servicetest.Harness, sourceID string) (givenUp, counted int) {
	t.Helper()
	ctx := context.Background()
	db := h.Service.DB.Bun
	if err := db.NewRaw(`SELECT count(*) FROM crawl_seen WHERE source_id = ? AND article_id IS NULL`, sourceID).Scan(ctx, &givenUp); err != nil {
		t.Fatal(err)
	}
	if err := db.NewRaw(`SELECT coalesce(sum(failures), 0) FROM crawl_failures WHERE source_id = ?`, sourceID).Scan(ctx, &counted); err != nil {
		t.Fatal(err)
	}
	return givenUp, counted
}

func backfillDone(h *servicetest.Harness, attachmentID string) bool {
	var done bool
	err := h.Service.DB.Bun.NewRaw(`SELECT done_at IS NOT NULL FROM ingest_backfills WHERE attachment_id = ?`, attachmentID).
		Scan(context.Background(), &done)
	return err == nil && done
}

func TestAnOutageCostsNoArticlesAndTheSourceBacksOffUntilTheSiteRecovers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fail func(*fakeSite)
		heal func(*fakeSite)
		// articlePages: the listings are served and the article pages fail,
		// so it is the article fetches that must fail the source.
		articlePages bool
		// retryAfter is what the site asked for; the source must wait that
		// long rather than its own (100-400ms) backoff.
		retryAfter time.Duration
	}{
		{
			name: "when everything but robots.txt answers 503",
			fail: func(s *fakeSite) { s.setDown(true) },
			heal: func(s *fakeSite) { s.setDown(false) },
		},
		{
			name:         "when the listings are served but every article page answers 503",
			fail:         func(s *fakeSite) { s.setArticlesFailing(http.StatusServiceUnavailable, "") },
			heal:         func(s *fakeSite) { s.setArticlesFailing(0, "") },
			articlePages: true,
		},
		{
			name:         "when the article pages answer 429 with Retry-After",
			fail:         func(s *fakeSite) { s.setArticlesFailing(http.StatusTooManyRequests, "1") },
			heal:         func(s *fakeSite) { s.setArticlesFailing(0, "") },
			articlePages: true,
			retryAfter:   time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			now := time.Now()
			articles := []*fakeArticle{
				{Slug: "listed-during-the-outage", Title: "During", Published: now.Add(-time.Hour), Markup: jsonLD, In: inNewsSitemap},
				{Slug: "also-listed-during-the-outage", Title: "Also during", Published: now.Add(-2 * time.Hour), Markup: openGraph, In: inNewsSitemap | inRSS},
				{Slug: "undated-story-listed-meanwhile", Title: "Undated", Markup: noDate, In: inIndex | inNewsSitemap},
			}
			site := newFakeSite(t, articles...)
			tt.fail(site)
			h := servicetest.Start(t, withoutCrawler())
			startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, testWorker("w1"))
			c := client{h, h.Key}
			feed := c.createFeed("patient")
			src := c.attach(feed, map[string]any{"sourceType": "site", "domain": site.domain()})["sourceId"].(string)

			// Two failed crawls, many more polls than the three that used
			// to give a URL up when a 429 does not stretch the wait.
			wait.Until(t, 10*time.Second, "two failed crawls", func() bool { return crawlStateOf(t, h, src).Failures >= 2 })
			during := crawlStateOf(t, h, src)
			givenUp, counted := failureRecords(t, h, src)
			tt.heal(site)

			t.Run("the source's failures went up with what failed", func(t *testing.T) {
				if !strings.Contains(during.LastError, "HTTP") {
					t.Errorf("last error %q does not say what failed", during.LastError)
				}
			})
			if tt.articlePages {
				t.Run("the article pages were requested, so their failures failed the source", func(t *testing.T) {
					n := 0
					for _, a := range articles {
						n += site.hitCount(a.path())
					}
					if n == 0 {
						t.Error("no article page was requested")
					}
				})
			}
			if tt.retryAfter > 0 {
				t.Run("the source waits as long as the site asked", func(t *testing.T) {
					if wait := during.NextAt.Sub(during.LastCrawlAt); wait < tt.retryAfter-50*time.Millisecond {
						t.Errorf("the next crawl was %s after the last, want at least %s", wait, tt.retryAfter)
					}
				})
			}
			t.Run("no URL was given up or counted against during the outage", func(t *testing.T) {
				if givenUp != 0 || counted != 0 {
					t.Errorf("%d URLs given up and %d failures counted, want none", givenUp, counted)
				}
			})

			wait.Until(t, 10*time.Second, "every article once the site is back", func() bool { return c.hasItems(feed, site, articles...) })
			waitIdle(t, h, src)
			t.Run("the source's failures are reset once the site answers", func(t *testing.T) {
				if s := crawlStateOf(t, h, src); s.Failures != 0 || s.LastError != "" {
					t.Errorf("%d failures, last error %q; want them cleared", s.Failures, s.LastError)
				}
				if givenUp, counted := failureRecords(t, h, src); givenUp != 0 || counted != 0 {
					t.Errorf("%d URLs given up and %d failures counted, want none", givenUp, counted)
				}
			})
		})
	}
}

func TestTheArticlesOfASiteWhoseRobotsTxtCannotBeReadAreWaitedForNotGivenUp(t *testing.T) {
	t.Parallel()
	now := time.Now()
	articles := []*fakeArticle{
		{Slug: "story-behind-unreadable-robots", Title: "One", Published: now.Add(-time.Hour), Markup: jsonLD, In: inNewsSitemap},
		{Slug: "another-story-behind-robots", Title: "Two", Published: now.Add(-2 * time.Hour), Markup: jsonLD, In: inNewsSitemap},
	}
	site := newFakeSite(t, articles...)
	site.setRobotsStatus(http.StatusServiceUnavailable)
	h := servicetest.Start(t, withoutCrawler())
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, testWorker("w1"))
	c := client{h, h.Key}
	// A sitemap source reads its listing without robots.txt, so only the
	// article fetches meet the unreadable robots.txt.
	siteID := c.siteRecord(site.domain())
	feed := c.createFeed("blocked")
	src := c.attach(feed, map[string]any{"sourceType": "sitemap", "url": site.URL + "/news-sitemap.xml", "siteId": siteID})["sourceId"].(string)

	wait.Until(t, 10*time.Second, "four failed crawls", func() bool { return crawlStateOf(t, h, src).Failures >= 4 })
	if s := crawlStateOf(t, h, src); !strings.Contains(s.LastError, "robots.txt") {
		t.Errorf("last error %q does not name robots.txt", s.LastError)
	}
	if givenUp, counted := failureRecords(t, h, src); givenUp != 0 || counted != 0 {
		t.Errorf("%d URLs given up and %d failures counted, want none", givenUp, counted)
	}
	for _, a := range articles {
		if n := site.hitCount(a.path()); n != 0 {
			t.Errorf("%s was requested %d times without robots.txt", a.path(), n)
		}
	}
}

func TestAPageCannotClaimTheURLOfAnotherSite(t *testing.T) {
	t.Parallel()
	now := time.Now()
	real := &fakeArticle{Slug: "harbour-reopens-after-storm", Title: "Harbour reopens", Desc: "What really happened.",
		Published: now.Add(-2 * time.Hour), Markup: jsonLD, In: inNewsSitemap}
	tracked := &fakeArticle{Slug: "story-shared-in-the-newsletter", Title: "Newsletter story", Query: "?utm_source=newsletter",
		Published: now.Add(-3 * time.Hour), Markup: jsonLD, In: inNewsSitemap}
	victim := newFakeSite(t, real, tracked)
	fake := &fakeArticle{Slug: "harbour-closed-for-good", Title: "Harbour closed for good", Desc: "Lies.",
		Published: now.Add(-time.Hour), Markup: openGraph, In: inNewsSitemap, Canonical: victim.URL + real.path()}
	attacker := newFakeSite(t, fake)

	h := servicetest.Start(t, withoutCrawler())
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, testWorker("w1"))
	c := client{h, h.Key}
	// The attacker's page is crawled first: with first-writer-wins article
	// identities, that is when a claim would stick.
	attackerFeed := c.createFeed("follows the attacker")
	c.attach(attackerFeed, map[string]any{"sourceType": "site", "domain": attacker.domain()})
	wait.Until(t, 10*time.Second, "the attacker's page", func() bool { return len(c.items(attackerFeed)) > 0 })
	victimFeed := c.createFeed("follows the victim")
	c.attach(victimFeed, map[string]any{"sourceType": "site", "domain": victim.domain()})
	wait.Until(t, 10*time.Second, "the victim's articles", func() bool { return c.hasItems(victimFeed, victim, real, tracked) })

	t.Run("the claiming page is filed under the URL it was fetched from", func(t *testing.T) {
		if got := keys(c.items(attackerFeed)); !sameSet(got, urls(attacker, fake)) {
			t.Errorf("items %v, want %v", got, urls(attacker, fake))
		}
	})
	t.Run("the claimed article keeps its own title and description", func(t *testing.T) {
		it := c.items(victimFeed)[victim.URL+real.path()]
		if it["title"] != real.Title || it["description"] != real.Desc {
			t.Errorf("title %v, description %v; want %q and %q", it["title"], it["description"], real.Title, real.Desc)
		}
	})
	t.Run("a canonical URL on the same site still replaces the listed one", func(t *testing.T) {
		if got := keys(c.items(victimFeed)); !sameSet(got, urls(victim, real, tracked)) {
			t.Errorf("items %v, want %v", got, urls(victim, real, tracked))
		}
	})
}

func TestABackfillBringsACrawlForwardOnlyWhenTheSourceIsNotBackingOff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		down      bool
		wantCrawl bool
	}{
		{"a source backing off keeps its backoff", true, false},
		{"a healthy source whose crawls looked back less far is crawled at once", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			site := newFakeSite(t, &fakeArticle{Slug: "story-for-the-backfill-test", Title: "Story", Published: time.Now().Add(-time.Hour),
				Markup: jsonLD, In: inNewsSitemap})
			site.setDown(tt.down)
			h := servicetest.Start(t, withoutCrawler())
			cfg := testWorker("w1")
			// Polls and retries are an hour away, so a crawl during the test
			// is one a backfill brought forward.
			cfg.PollInterval, cfg.RetryBase, cfg.RetryMax = time.Hour, time.Hour, time.Hour
			startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, cfg)
			c := client{h, h.Key}
			attach := func(name string) map[string]any {
				return c.attach(c.createFeed(name), map[string]any{"sourceType": "site", "domain": site.domain()})
			}

			first := attach("first")
			src := first["sourceId"].(string)
			wait.Until(t, 10*time.Second, "the first crawl and the first attachment's backfill", func() bool {
				return backfillDone(h, first["id"].(string)) && !crawlStateOf(t, h, src).LastCrawlAt.IsZero()
			})
			waitIdle(t, h, src)
			before := crawlStateOf(t, h, src)
			if tt.down {
				// Also proves the first attachment's own backfill left the
				// backoff alone, whichever finished first.
				if before.Failures != 1 {
					t.Fatalf("the source failed %d times, want once", before.Failures)
				}
			} else {
				// As if the last crawl had looked back only to now (for an
				// attachment re-enabled just now, say): the next attachment
				// reaches further back than any crawl did.
				if _, err := h.Service.DB.Bun.NewRaw(`UPDATE crawl_state SET covered_since = now() WHERE source_id = ?`, src).
					Exec(context.Background()); err != nil {
					t.Fatal(err)
				}
			}

			second := attach("second")
			wait.Until(t, 10*time.Second, "the second attachment's backfill", func() bool { return backfillDone(h, second["id"].(string)) })
			if tt.wantCrawl {
				wait.Until(t, 10*time.Second, "the crawl the backfill asked for", func() bool { return crawlStateOf(t, h, src).LastCrawlAt.After(before.LastCrawlAt) })
				return
			}
			time.Sleep(10 * testWorker("").Tick) // ten ticks in which a due source would be leased
			after := crawlStateOf(t, h, src)
			if !after.NextAt.Equal(before.NextAt) || !after.LastCrawlAt.Equal(before.LastCrawlAt) || after.Failures != 1 {
				t.Errorf("after the backfill: next crawl %s (was %s), last crawl %s (was %s), %d failures; want them unchanged",
					after.NextAt, before.NextAt, after.LastCrawlAt, before.LastCrawlAt, after.Failures)
			}
		})
	}
}
