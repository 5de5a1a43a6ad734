package ingest_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

func TestASiteSourceAttachedThroughTheAPIFillsTheFeedWithItsRecentArticles(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	lead := &fakeArticle{Slug: "storm-hits-the-coast", Title: "Storm hits the coast", Desc: "Winds of 150 km/h.",
		Image: "/img/storm.jpg", Published: now.Add(-2 * time.Hour), Markup: jsonLD, In: inNewsSitemap}
	og := &fakeArticle{Slug: "markets-rally-after-vote", Title: "Markets rally after vote", Desc: "Stocks rose.",
		FeedDesc: "From the RSS feed", Image: "/img/markets.jpg", Published: now.Add(-3 * time.Hour), Markup: openGraph, In: inRSS}
	atom := &fakeArticle{Slug: "council-approves-new-park", Title: "Council approves new park",
		FeedDesc: "From the Atom feed", Published: now.Add(-4 * time.Hour), Markup: jsonLD, In: inAtom}
	undated := &fakeArticle{Slug: "mystery-of-the-missing-date", Title: "Mystery of the missing date", Desc: "Nobody knows when.",
		LastMod: now.Add(-5 * time.Hour), Markup: noDate, In: inPageSitemap}
	old := &fakeArticle{Slug: "archive-story-from-long-ago", Title: "Archive story", Published: now.Add(-20 * 24 * time.Hour),
		Markup: jsonLD, In: inNewsSitemap | inRSS}
	site := newFakeSite(t, lead, og, atom, undated, old)

	// The service's own crawler, as `feedsvc serve` wires it.
	h := servicetest.Start(t, withPollInterval(time.Hour), servicetest.WithCrawler())
	c := client{h, h.Key}
	feed := c.createFeed("local news")
	att := c.attach(feed, map[string]any{"sourceType": "site", "domain": site.domain()})

	wait.Until(t, 20*time.Second, "the recent articles", func() bool { return c.hasItems(feed, site, lead, og, atom, undated) })
	items := c.items(feed)
	if len(items) != 4 {
		t.Errorf("feed has %d items, want 4: %v", len(items), keys(items))
	}
	ms := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
	tests := []struct {
		name      string
		article   *fakeArticle
		desc      string
		image     string
		published string
	}{
		{"an article with JSON-LD keeps its date, description and image", lead, lead.Desc, site.URL + lead.Image, ms(lead.Published)},
		{"an article with only OpenGraph is read from its meta tags", og, og.Desc, site.URL + og.Image, ms(og.Published)},
		{"an article without a description takes the feed's", atom, atom.FeedDesc, "", ms(atom.Published)},
		{"an article without a date appears without publishedAt", undated, undated.Desc, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := items[site.URL+tt.article.path()]
			want := map[string]any{"title": tt.article.Title, "description": tt.desc, "imageUrl": tt.image, "publishedAt": tt.published}
			for k, v := range want {
				got, present := it[k]
				if v == "" {
					if present {
						t.Errorf("%s = %v, want it omitted", k, got)
					}
					continue
				}
				if got != v {
					t.Errorf("%s = %v, want %v", k, got, v)
				}
			}
			if id, _ := it["newsPageId"].(string); id == "" {
				t.Errorf("item has no newsPageId: %v", it)
			}
		})
	}

	t.Run("the article older than 14 days is neither added nor fetched", func(t *testing.T) {
		if _, ok := items[site.URL+old.path()]; ok {
			t.Errorf("the old article was added")
		}
		if n := site.hitCount(old.path()); n != 0 {
			t.Errorf("the old article was fetched %d times", n)
		}
	})
	t.Run("the undated article is judged by its sitemap lastmod", func(t *testing.T) {
		// The articles projection runs apart from the items one.
		var effective time.Time
		wait.Until(t, 5*time.Second, "the article in the articles read model", func() bool {
			return h.Service.DB.Bun.NewRaw(`SELECT effective_at FROM articles WHERE url = ?`, site.URL+undated.path()).
				Scan(context.Background(), &effective) == nil
		})
		if !effective.Equal(undated.LastMod.Truncate(time.Millisecond)) {
			t.Errorf("effective_at = %s, want the lastmod %s", effective, undated.LastMod)
		}
	})
	t.Run("the next crawl is scheduled one poll interval ahead", func(t *testing.T) {
		// Items show before the crawl that added them hands its lease back.
		waitIdle(t, h, att["sourceId"].(string))
		var next time.Time
		var failures int
		err := h.Service.DB.Bun.NewRaw(`SELECT next_at, failures FROM crawl_state WHERE source_id = ?`, att["sourceId"]).
			Scan(context.Background(), &next, &failures)
		if err != nil {
			t.Fatal(err)
		}
		if until := time.Until(next); until < 50*time.Minute || until > 67*time.Minute || failures != 0 {
			t.Errorf("next crawl in %s with %d failures, want about an hour and none", until, failures)
		}
	})
}

func TestSitemapAndIndexPageSourcesFillTheirFeedsWithWhatTheyList(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	both := &fakeArticle{Slug: "bridge-reopens-after-repairs", Title: "Bridge reopens", Published: now.Add(-time.Hour), Markup: jsonLD, In: inNewsSitemap | inIndex}
	sitemapOnly := &fakeArticle{Slug: "school-year-starts-early", Title: "School year starts early", Published: now.Add(-2 * time.Hour), Markup: jsonLD, In: inNewsSitemap}
	indexOnly := &fakeArticle{Slug: "local-team-wins-final", Title: "Local team wins final", Markup: noDate, In: inIndex}
	site := newFakeSite(t, both, sitemapOnly, indexOnly)

	h := servicetest.Start(t, withoutCrawler())
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, testWorker("w1"))
	c := client{h, h.Key}
	siteID := c.siteRecord(site.domain())

	tests := []struct {
		name string
		body map[string]any
		want []*fakeArticle
	}{
		{"a sitemap source adds the sitemap's articles", map[string]any{"sourceType": "sitemap", "url": site.URL + "/news-sitemap.xml", "siteId": siteID},
			[]*fakeArticle{both, sitemapOnly}},
		{"an index page source adds the linked articles, undated ones too", map[string]any{"sourceType": "siteIndexPage", "url": site.URL + "/sections/latest", "siteId": siteID},
			[]*fakeArticle{both, indexOnly}},
	}
	feeds := map[string]string{}
	for _, tt := range tests {
		feeds[tt.name] = c.createFeed(tt.name)
		c.attach(feeds[tt.name], tt.body)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			feed := feeds[tt.name]
			wait.Until(t, 10*time.Second, "the listed articles", func() bool { return c.hasItems(feed, site, tt.want...) })
			got := keys(c.items(feed))
			if want := urls(site, tt.want...); !sameSet(got, want) {
				t.Errorf("items %v, want %v", got, want)
			}
		})
	}
	t.Run("the article both list is one article in both feeds", func(t *testing.T) {
		a := c.items(feeds[tests[0].name])[site.URL+both.path()]
		b := c.items(feeds[tests[1].name])[site.URL+both.path()]
		if a["newsPageId"] != b["newsPageId"] || a["id"] == b["id"] {
			t.Errorf("items %v and %v: want one newsPageId and two item ids", a, b)
		}
		if n := site.hitCount(both.path()); n != 2 {
			// Each source record fetches its candidates once.
			t.Errorf("the shared article was fetched %d times, want once per source", n)
		}
	})
}

func TestMonitoringPicksUpAnArticlePublishedAfterTheFirstCrawl(t *testing.T) {
	t.Parallel()
	first := &fakeArticle{Slug: "first-story-of-the-day", Title: "First story", Published: time.Now().Add(-time.Hour), Markup: jsonLD, In: inNewsSitemap}
	site := newFakeSite(t, first)
	h := servicetest.Start(t, withoutCrawler())
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, testWorker("w1"))
	c := client{h, h.Key}
	feed := c.createFeed("monitored")
	c.attach(feed, map[string]any{"sourceType": "site", "domain": site.domain()})
	wait.Until(t, 10*time.Second, "the first article", func() bool { return c.hasItems(feed, site, first) })

	later := &fakeArticle{Slug: "breaking-story-arrives-later", Title: "Breaking", Published: time.Now(), Markup: openGraph, In: inRSS}
	site.add(later)
	wait.Until(t, 10*time.Second, "the article published later", func() bool { return c.hasItems(feed, site, later) })

	if n := site.hitCount(first.path()); n != 1 {
		t.Errorf("the first article was fetched %d times, want once", n)
	}
	if n := site.hitCount("/robots.txt"); n != 1 {
		t.Errorf("robots.txt was read %d times; the discovery should be cached", n)
	}
}

func TestWhatIsPublishedWhileDisabledIsNotAddedAfterReenabling(t *testing.T) {
	t.Parallel()
	setSource := func(c client, feed, att string, enabled bool) {
		c.do("PATCH", "/feeds/news/"+feed+"/sources/"+att, map[string]any{"enabled": enabled}).MustStatus(c.h.T, http.StatusOK)
	}
	setFeed := func(c client, feed, _ string, enabled bool) {
		c.do("PATCH", "/feeds/news/"+feed, map[string]any{"enabled": enabled}).MustStatus(c.h.T, http.StatusOK)
	}
	tests := []struct {
		name   string
		toggle func(c client, feed, attachment string, enabled bool)
		// shared: a second feed keeps the source crawled, so only the
		// toggled attachment's own window excludes what was published
		// while it was disabled.
		shared bool
	}{
		{"when the source is disabled", setSource, false},
		{"when the feed is disabled", setFeed, false},
		{"when the source is disabled in one of two feeds", setSource, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := &fakeArticle{Slug: "published-before-disabling", Title: "Before", Published: time.Now().Add(-time.Hour), Markup: jsonLD, In: inNewsSitemap}
			site := newFakeSite(t, before)
			h := servicetest.Start(t, withoutCrawler())
			startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, testWorker("w1"))
			c := client{h, h.Key}
			feed := c.createFeed("toggled")
			att := c.attach(feed, map[string]any{"sourceType": "site", "domain": site.domain()})
			var other string
			if tt.shared {
				other = c.createFeed("always on")
				c.attach(other, map[string]any{"sourceType": "site", "domain": site.domain()})
			}
			wait.Until(t, 10*time.Second, "the first article", func() bool { return c.hasItems(feed, site, before) })

			tt.toggle(c, feed, att["id"].(string), false)
			during := &fakeArticle{Slug: "published-while-disabled", Title: "During", Published: time.Now(), Markup: jsonLD, In: inNewsSitemap}
			if tt.shared {
				// The site lists the article only after re-enabling, so the
				// crawler fetches it for both feeds and must judge it by date.
				time.Sleep(5 * time.Millisecond) // the article is dated before re-enabling
				tt.toggle(c, feed, att["id"].(string), true)
				site.add(during)
				wait.Until(t, 10*time.Second, "the other feed to get the article", func() bool { return c.hasItems(other, site, during) })
			} else {
				waitIdle(t, h, att["sourceId"].(string))
				sitemapHits := site.hitCount("/news-sitemap.xml")
				site.add(during)
				time.Sleep(600 * time.Millisecond) // three poll intervals, to show nobody looks
				if n := site.hitCount("/news-sitemap.xml"); n != sitemapHits {
					t.Errorf("the sitemap was read %d times while disabled", n-sitemapHits)
				}
			}

			if !tt.shared {
				tt.toggle(c, feed, att["id"].(string), true)
			}
			after := &fakeArticle{Slug: "published-after-reenabling", Title: "After", Published: time.Now().Add(time.Millisecond), Markup: jsonLD, In: inNewsSitemap}
			site.add(after)
			wait.Until(t, 10*time.Second, "the article published after re-enabling", func() bool { return c.hasItems(feed, site, after) })
			if got, want := keys(c.items(feed)), urls(site, before, after); !sameSet(got, want) {
				t.Errorf("items %v, want %v", got, want)
			}
			if tt.shared {
				wait.Until(t, 10*time.Second, "the other feed to get everything", func() bool { return c.hasItems(other, site, before, during, after) })
				return
			}
			if n := site.hitCount(during.path()); n != 0 {
				t.Errorf("the article published while disabled was fetched %d times; its date alone excludes it", n)
			}
		})
	}
}

func TestOneArticleInTwoOrganizationsFeedsKeepsOneNewsPageIDAndTheLaterFeedIsBackfilled(t *testing.T) {
	t.Parallel()
	now := time.Now()
	a1 := &fakeArticle{Slug: "city-budget-passes-vote", Title: "Budget passes", Published: now.Add(-time.Hour), Markup: jsonLD, In: inNewsSitemap}
	a2 := &fakeArticle{Slug: "new-library-opens-downtown", Title: "Library opens", Published: now.Add(-48 * time.Hour), Markup: openGraph, In: inRSS}
	site := newFakeSite(t, a1, a2)
	h := servicetest.Start(t, withoutCrawler())
	cfg := testWorker("w1")
	cfg.PollInterval = time.Hour // only the backfill can bring the articles to the second feed
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, cfg)

	acme := client{h, h.Key}
	globex := client{h, h.NewKey("globex")}
	feed1 := acme.createFeed("acme news")
	att1 := acme.attach(feed1, map[string]any{"sourceType": "site", "domain": site.domain()})
	wait.Until(t, 10*time.Second, "the first feed's items", func() bool { return acme.hasItems(feed1, site, a1, a2) })

	feed2 := globex.createFeed("globex news")
	att2 := globex.attach(feed2, map[string]any{"sourceType": "site", "domain": site.domain()})
	if att1["sourceId"] != att2["sourceId"] {
		t.Fatalf("the same domain gave two source records: %v and %v", att1["sourceId"], att2["sourceId"])
	}
	wait.Until(t, 10*time.Second, "the second feed's backfill", func() bool { return globex.hasItems(feed2, site, a1, a2) })

	items1, items2 := acme.items(feed1), globex.items(feed2)
	for _, u := range urls(site, a1, a2) {
		i1, i2 := items1[u], items2[u]
		if i1["newsPageId"] != i2["newsPageId"] {
			t.Errorf("%s has newsPageIds %v and %v, want one", u, i1["newsPageId"], i2["newsPageId"])
		}
		if i1["id"] == i2["id"] {
			t.Errorf("%s has one item id %v in two feeds", u, i1["id"])
		}
	}
	for _, a := range []*fakeArticle{a1, a2} {
		if n := site.hitCount(a.path()); n != 1 {
			t.Errorf("%s was fetched %d times, want once: the backfill reuses what is known", a.path(), n)
		}
	}
	// The items can be visible a moment before the backfill records itself.
	var backfilled int
	wait.Until(t, 5*time.Second, "the second attachment's backfill to finish", func() bool {
		return h.Service.DB.Bun.NewRaw(`SELECT items FROM ingest_backfills WHERE attachment_id = ? AND done_at IS NOT NULL`, att2["id"]).
			Scan(context.Background(), &backfilled) == nil
	})
	if backfilled != 2 {
		t.Errorf("the second attachment's backfill added %d items, want 2", backfilled)
	}
}

func TestBadPagesAreGivenUpByHowTheyFailWhileEverythingElseArrives(t *testing.T) {
	t.Parallel()
	now := time.Now()
	good1 := &fakeArticle{Slug: "good-news-for-everyone", Title: "Good news", Published: now.Add(-time.Hour), Markup: jsonLD, In: inNewsSitemap}
	good2 := &fakeArticle{Slug: "more-good-news-today", Title: "More good news", Published: now.Add(-2 * time.Hour), Markup: openGraph, In: inRSS}
	broken := &fakeArticle{Slug: "server-breaks-on-this-story", Title: "500", Published: now.Add(-time.Hour), Status: http.StatusInternalServerError, In: inNewsSitemap}
	slow := &fakeArticle{Slug: "very-slow-story-page", Title: "Slow", Published: now.Add(-time.Hour), Delay: 3 * time.Second, In: inNewsSitemap}
	huge := &fakeArticle{Slug: "enormous-story-page-here", Title: "Huge", Published: now.Add(-time.Hour), Size: 256 << 10, In: inNewsSitemap}
	private := &fakeArticle{Slug: "members-only-story-page", Dir: "private", Title: "Disallowed", Published: now.Add(-time.Hour), In: inNewsSitemap}
	site := newFakeSite(t, good1, good2, broken, slow, huge, private)
	h := servicetest.Start(t, withoutCrawler())
	cfg := testWorker("w1")
	// Ten polls of 200ms: the pages failing transiently are given up long
	// after the permanent ones, and soon enough for a test.
	cfg.GiveUpAfter = 2 * time.Second
	const transientLimit = 10
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true, Timeout: 300 * time.Millisecond, MaxBodyBytes: 64 << 10}, cfg)
	c := client{h, h.Key}
	feed := c.createFeed("resilient")
	att := c.attach(feed, map[string]any{"sourceType": "site", "domain": site.domain()})
	wait.Until(t, 10*time.Second, "the good articles", func() bool { return c.hasItems(feed, site, good1, good2) })

	db := h.Service.DB.Bun
	ctx := context.Background()
	givenUp := func(a *fakeArticle) bool {
		var n int
		err := db.NewRaw(`SELECT count(*) FROM crawl_seen WHERE source_id = ? AND url = ? AND article_id IS NULL`,
			att["sourceId"], site.URL+a.path()).Scan(ctx, &n)
		return err == nil && n == 1
	}
	failures := func(a *fakeArticle) (int, string) {
		var n int
		var lastErr string
		_ = db.NewRaw(`SELECT failures, last_error FROM crawl_failures WHERE source_id = ? AND url = ?`, att["sourceId"], site.URL+a.path()).
			Scan(ctx, &n, &lastErr)
		return n, lastErr
	}
	sourceFailures := func() int {
		var n int
		_ = db.NewRaw(`SELECT failures FROM crawl_state WHERE source_id = ?`, att["sourceId"]).Scan(ctx, &n)
		return n
	}

	wait.Until(t, 10*time.Second, "the crawler to give up on the permanently bad pages", func() bool { return givenUp(huge) && givenUp(private) })
	// Read at once, before the transient pages reach their limit.
	type state struct {
		givenUp  bool
		failures int
	}
	early := map[*fakeArticle]state{}
	for _, a := range []*fakeArticle{broken, slow} {
		n, _ := failures(a)
		early[a] = state{givenUp(a), n}
	}
	for _, a := range []*fakeArticle{huge, private} {
		t.Run("the "+a.Title+" page fails permanently and is given up after three failures", func(t *testing.T) {
			if n, lastErr := failures(a); n != 3 || lastErr == "" {
				t.Errorf("failures = %d, last error %q; want 3 and a reason", n, lastErr)
			}
		})
	}
	t.Run("the disallowed page is never requested", func(t *testing.T) {
		if n := site.hitCount(private.path()); n != 0 {
			t.Errorf("requested %d times", n)
		}
	})
	for _, a := range []*fakeArticle{broken, slow} {
		t.Run("the "+a.Title+" page fails transiently and is still tried after three failures", func(t *testing.T) {
			if st := early[a]; st.givenUp || st.failures < 3 {
				t.Errorf("when the permanently bad pages were given up, it had %d failures and given up %v; want 3 or more and false",
					st.failures, st.givenUp)
			}
		})
	}

	wait.Until(t, 15*time.Second, "the crawler to give up on the transiently bad pages", func() bool { return givenUp(broken) && givenUp(slow) })
	for _, a := range []*fakeArticle{broken, slow} {
		t.Run("the "+a.Title+" page is given up after GiveUpAfter of polls", func(t *testing.T) {
			if n, lastErr := failures(a); n != transientLimit || lastErr == "" {
				t.Errorf("failures = %d, last error %q; want %d and a reason", n, lastErr, transientLimit)
			}
		})
	}
	t.Run("the 500 page was requested once per poll until given up, and no more", func(t *testing.T) {
		polls := site.hitCount("/news-sitemap.xml")
		wait.Until(t, 5*time.Second, "three more polls", func() bool { return site.hitCount("/news-sitemap.xml") >= polls+3 })
		if n := site.hitCount(broken.path()); n != transientLimit {
			t.Errorf("the 500 page was requested %d times, want %d", n, transientLimit)
		}
	})
	t.Run("the source itself does not fail", func(t *testing.T) {
		if n := sourceFailures(); n != 0 {
			t.Errorf("source failures = %d, want 0", n)
		}
		if got := keys(c.items(feed)); !sameSet(got, urls(site, good1, good2)) {
			t.Errorf("items %v", got)
		}
	})
}

func TestTwoWorkersNeverCrawlOneSourceAtOnceNorAddAnArticleTwice(t *testing.T) {
	t.Parallel()
	now := time.Now()
	articles := []*fakeArticle{
		{Slug: "shared-story-number-one", Title: "One", Published: now.Add(-time.Hour), Markup: jsonLD, In: inNewsSitemap},
		{Slug: "shared-story-number-two", Title: "Two", Published: now.Add(-2 * time.Hour), Markup: openGraph, In: inNewsSitemap},
		{Slug: "shared-story-number-three", Title: "Three", Markup: noDate, In: inNewsSitemap},
	}
	site := newFakeSite(t, articles...)
	site.sitemapDelay = 40 * time.Millisecond
	h := servicetest.Start(t, withoutCrawler())
	for _, owner := range []string{"a", "b"} {
		cfg := testWorker("worker-" + owner)
		cfg.PollInterval = 100 * time.Millisecond
		startWorker(t, h, crawl.Options{AllowPrivateNetworks: true, UserAgent: "feedsvc-" + owner + "/1.0"}, cfg)
	}
	c := client{h, h.Key}
	siteID := c.siteRecord(site.domain())
	feeds := []string{c.createFeed("first"), c.createFeed("second")}
	const sources = 4
	for i := range sources {
		for _, f := range feeds {
			c.attach(f, map[string]any{"sourceType": "sitemap", "url": fmt.Sprintf("%s/sitemaps/%d.xml", site.URL, i), "siteId": siteID})
		}
	}
	wait.Until(t, 20*time.Second, "both workers to crawl every source many times", func() bool {
		for i := range sources {
			if site.hitCount(fmt.Sprintf("/sitemaps/%d.xml", i)) < 10 {
				return false
			}
		}
		return site.agentHits("feedsvc-a/1.0") > 0 && site.agentHits("feedsvc-b/1.0") > 0
	})

	for i := range sources {
		if n := site.maxConcurrent(fmt.Sprintf("/sitemaps/%d.xml", i)); n != 1 {
			t.Errorf("source %d was crawled %d times at once", i, n)
		}
	}
	for _, f := range feeds {
		wait.Until(t, 5*time.Second, "every article in every feed", func() bool { return c.hasItems(f, site, articles...) })
		if got := keys(c.items(f)); len(got) != len(articles) {
			t.Errorf("feed %s has %d items, want %d", f, len(got), len(articles))
		}
	}
	db := h.Service.DB.Bun
	ctx := context.Background()
	var dupStreams, discovered int
	if err := db.NewRaw(`SELECT count(*) FROM (SELECT stream_id FROM events WHERE event_type = 'NewsItemAdded'
		GROUP BY stream_id HAVING count(*) > 1) d`).Scan(ctx, &dupStreams); err != nil {
		t.Fatal(err)
	}
	if err := db.NewRaw(`SELECT count(*) FROM events WHERE event_type = 'ArticleDiscovered'`).Scan(ctx, &discovered); err != nil {
		t.Fatal(err)
	}
	if dupStreams != 0 || discovered != len(articles) {
		t.Errorf("%d items were added twice and %d articles discovered; want 0 and %d", dupStreams, discovered, len(articles))
	}
}

func TestASourceThatFailsBacksOffAndRecoversWhenTheSiteDoes(t *testing.T) {
	t.Parallel()
	// Only the RSS feed lists the story, and the feed is only known from the
	// home page, which the outage hides: the recovery needs a fresh
	// discovery, not the one cached during the outage.
	story := &fakeArticle{Slug: "back-online-after-outage", Title: "Back online", Published: time.Now().Add(-time.Hour), Markup: jsonLD, In: inRSS}
	site := newFakeSite(t, story)
	site.setDown(true)
	h := servicetest.Start(t, withoutCrawler())
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, testWorker("w1"))
	c := client{h, h.Key}
	feed := c.createFeed("patient")
	att := c.attach(feed, map[string]any{"sourceType": "site", "domain": site.domain()})

	state := func() (failures int, lastErr string) {
		_ = h.Service.DB.Bun.NewRaw(`SELECT failures, last_error FROM crawl_state WHERE source_id = ?`, att["sourceId"]).
			Scan(context.Background(), &failures, &lastErr)
		return failures, lastErr
	}
	wait.Until(t, 10*time.Second, "three failed crawls", func() bool { n, _ := state(); return n >= 3 })
	if _, lastErr := state(); !strings.Contains(lastErr, "503") {
		t.Errorf("last error %q does not say what failed", lastErr)
	}
	site.setDown(false)
	wait.Until(t, 10*time.Second, "the article once the site is back", func() bool { return c.hasItems(feed, site, story) })
	waitIdle(t, h, att["sourceId"].(string))
	if n, lastErr := state(); n != 0 || lastErr != "" {
		t.Errorf("after recovering: %d failures, last error %q; want them cleared", n, lastErr)
	}
}

func TestACrawlerThatRefusesPrivateNetworksNeverReachesALoopbackSite(t *testing.T) {
	t.Parallel()
	site := newFakeSite(t, &fakeArticle{Slug: "internal-only-story-here", Title: "Internal", Published: time.Now(), Markup: jsonLD, In: inNewsSitemap})
	h := servicetest.Start(t, withoutCrawler())
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: false}, testWorker("w1"))
	c := client{h, h.Key}
	feed := c.createFeed("guarded")
	att := c.attach(feed, map[string]any{"sourceType": "site", "domain": site.domain()})

	var failures int
	var lastErr string
	var next time.Time
	wait.Until(t, 10*time.Second, "the source to fail twice", func() bool {
		err := h.Service.DB.Bun.NewRaw(`SELECT failures, last_error, next_at FROM crawl_state WHERE source_id = ?`, att["sourceId"]).
			Scan(context.Background(), &failures, &lastErr, &next)
		return err == nil && failures >= 2
	})
	if !strings.Contains(lastErr, "prohibited IP address") {
		t.Errorf("last error %q does not name the refused address", lastErr)
	}
	if n := site.totalHits(); n != 0 {
		t.Errorf("the loopback site was reached %d times", n)
	}
	if items := c.items(feed); len(items) != 0 {
		t.Errorf("feed has items %v", keys(items))
	}
}

// waitIdle waits until no worker holds the source's lease, so that a test
// knows no crawl that started before a change is still running.
func waitIdle(t *testing.T, h *servicetest.Harness, sourceID string) {
	t.Helper()
	wait.Until(t, 10*time.Second, "the source's lease to be released", func() bool {
		var held bool
		err := h.Service.DB.Bun.NewRaw(`SELECT coalesce(bool_or(lease_owner IS NOT NULL), false) FROM crawl_state WHERE source_id = ?`, sourceID).
			Scan(context.Background(), &held)
		return err == nil && !held
	})
}

func keys(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
