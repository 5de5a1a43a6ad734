package ingest_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// One site, every feed: what a crawl fetched for feeds of one kind fills
// feeds of the other kind attached later, in either order, for any
// organization. The venue site holds one news page, two event pages (one
// with a JSON-LD event, one linking to a calendar of two events): three
// articles and three events.

// venueArticles are the URLs of the site's pages that are articles.
func venueArticles(site *venueSite) []string {
	return []string{site.URL + "/events/quartet", site.URL + "/events/season", site.URL + "/news/new-season"}
}

var venueEvents = []string{"Choir evening", "Organ night", "String quartet"}

func (c client) createEventFeed(name string) string {
	c.h.T.Helper()
	return c.do("POST", "/feeds/events", map[string]any{"name": name, "description": "What's on"}).
		MustStatus(c.h.T, http.StatusCreated).Data()["id"].(string)
}

func (c client) attachEvents(feedID, sourceID string) {
	c.h.T.Helper()
	c.do("POST", "/feeds/events/"+feedID+"/sources", map[string]any{"sourceType": "site", "sourceId": sourceID}).
		MustStatus(c.h.T, http.StatusCreated)
}

// eventTitles are the titles of an event feed's items, sorted.
func (c client) eventTitles(feedID string) []string {
	c.h.T.Helper()
	r := c.do("GET", "/feeds/events/"+feedID+"/items?limit=100", nil).MustStatus(c.h.T, http.StatusOK)
	list, _ := r.Data()["items"].([]any)
	out := make([]string, 0, len(list))
	for _, v := range list {
		out = append(out, v.(map[string]any)["title"].(string))
	}
	slices.Sort(out)
	return out
}

// articleURLs are the URLs of a news feed's items, sorted.
func (c client) articleURLs(feedID string) []string {
	c.h.T.Helper()
	out := keys(c.items(feedID))
	slices.Sort(out)
	return out
}

func hostOf(site *venueSite) string { return strings.TrimPrefix(site.URL, "http://") }

// backfilledItems is how many items the backfill of the feed's one
// attachment added, -1 while it has not finished.
func backfilledItems(h *servicetest.Harness, feedID string) int {
	h.T.Helper()
	var n []int
	err := h.Service.DB.Bun.NewRaw(`SELECT b.items FROM ingest_backfills b JOIN ingest_attachments a USING (attachment_id)
		WHERE a.feed_id = ? AND b.done_at IS NOT NULL`, feedID).Scan(h.T.Context(), &n)
	if err != nil {
		h.T.Fatal(err)
	}
	if len(n) == 0 {
		return -1
	}
	return n[0]
}

// The sources are polled once an hour: only the first crawl and the
// backfills can bring the later feed anything within the test.
func TestAFeedOfTheOtherKindAttachedLaterFillsFromWhatTheFirstCrawlRead(t *testing.T) {
	t.Parallel()
	t.Run("news first, then events", func(t *testing.T) {
		t.Parallel()
		site := newVenueSite(t)
		h := servicetest.Start(t, withPollInterval(time.Hour), servicetest.WithCrawler())
		c := client{h, h.Key}
		news := c.createFeed("Hall news")
		source := c.attach(news, map[string]any{"sourceType": "site", "domain": hostOf(site)})["sourceId"].(string)
		wait.Until(t, 30*time.Second, "the news feed's three articles", func() bool { return slices.Equal(c.articleURLs(news), venueArticles(site)) })

		events := c.createEventFeed("Hall events")
		c.attachEvents(events, source)
		wait.Until(t, 30*time.Second, "the event feed attached later to get the three events the news crawl read", func() bool { return slices.Equal(c.eventTitles(events), venueEvents) })
	})
	t.Run("events first, then news", func(t *testing.T) {
		t.Parallel()
		site := newVenueSite(t)
		h := servicetest.Start(t, withPollInterval(time.Hour), servicetest.WithCrawler())
		c := client{h, h.Key}
		events := c.createEventFeed("Hall events")
		source := c.siteRecord(hostOf(site))
		c.attachEvents(events, source)
		wait.Until(t, 30*time.Second, "the event feed's three events", func() bool { return slices.Equal(c.eventTitles(events), venueEvents) })

		news := c.createFeed("Hall news")
		c.attach(news, map[string]any{"sourceType": "site", "domain": hostOf(site)})
		wait.Until(t, 30*time.Second, "the news feed attached later to get the three articles the event crawl read", func() bool { return slices.Equal(c.articleURLs(news), venueArticles(site)) })
		// The backfill records itself done after its items commit: the
		// items can be listed a moment before it is.
		wait.Until(t, 30*time.Second, "the news feed's backfill recorded done", func() bool { return backfilledItems(h, news) >= 0 })
		if n := backfilledItems(h, news); n != 3 {
			t.Fatalf("the news feed's backfill added %d items, want 3", n)
		}
	})
}

func TestASourceSharedAcrossOrganizationsFillsTheLaterOrganizationsFeedOfTheOtherKind(t *testing.T) {
	t.Parallel()
	site := newVenueSite(t)
	h := servicetest.Start(t, withPollInterval(time.Hour), servicetest.WithCrawler())
	acme, globex := client{h, h.Key}, client{h, h.NewKey("globex")}
	news := acme.createFeed("Acme news")
	acme.attach(news, map[string]any{"sourceType": "site", "domain": hostOf(site)})
	wait.Until(t, 30*time.Second, "acme's three articles", func() bool { return slices.Equal(acme.articleURLs(news), venueArticles(site)) })

	events := globex.createEventFeed("Globex events")
	globex.attachEvents(events, globex.siteRecord(hostOf(site)))
	wait.Until(t, 30*time.Second, "globex's event feed to get the events acme's crawl read", func() bool { return slices.Equal(globex.eventTitles(events), venueEvents) })
}

// A feed attached after several polls of its source (the documents long
// marked seen) gets what the first feed of its kind got.
func TestTwoFeedsOfOneKindAttachedPollsApartGetTheSameItems(t *testing.T) {
	t.Parallel()
	site := newVenueSite(t)
	h := servicetest.Start(t, withPollInterval(300*time.Millisecond), servicetest.WithCrawler())
	c := client{h, h.Key}
	source := c.siteRecord(hostOf(site))
	// The site is crawled for an event feed first, so that both news
	// feeds come after the documents were first read.
	first := c.createEventFeed("First events")
	c.attachEvents(first, source)
	wait.Until(t, 30*time.Second, "the first event feed's events", func() bool { return slices.Equal(c.eventTitles(first), venueEvents) })
	// waitPolls waits for n more successful polls of the source.
	waitPolls := func(n int) {
		last := func() time.Time {
			var at time.Time
			if err := h.Service.DB.Bun.NewRaw(`SELECT last_success_at FROM crawl_state WHERE source_id = ?`, source).Scan(t.Context(), &at); err != nil {
				t.Fatal(err)
			}
			return at
		}
		for range n {
			before := last()
			wait.Until(t, 30*time.Second, "another poll of the source", func() bool { return last().After(before) })
		}
	}
	news1 := c.createFeed("First news")
	c.attach(news1, map[string]any{"sourceType": "site", "domain": hostOf(site)})
	wait.Until(t, 30*time.Second, "the first news feed's articles", func() bool { return slices.Equal(c.articleURLs(news1), venueArticles(site)) })
	waitPolls(3)
	news2 := c.createFeed("Second news")
	c.attach(news2, map[string]any{"sourceType": "site", "domain": hostOf(site)})
	wait.Until(t, 30*time.Second, "the second news feed to get the first's articles", func() bool { return slices.Equal(c.articleURLs(news2), c.articleURLs(news1)) })

	waitPolls(3)
	second := c.createEventFeed("Second events")
	c.attachEvents(second, source)
	wait.Until(t, 30*time.Second, "the second event feed to get the first's events", func() bool { return slices.Equal(c.eventTitles(second), c.eventTitles(first)) })
}

// While a source's event feed is disabled its crawls still read events;
// re-enabled, the feed gets the upcoming events the site published
// meanwhile, and the news feed got its articles all along.
func TestDisablingOneKindsFeedStopsNeitherTheOtherKindsItemsNorTheReadingOfItsFacts(t *testing.T) {
	t.Parallel()
	site := newVenueSite(t)
	h := servicetest.Start(t, withPollInterval(300*time.Millisecond), servicetest.WithCrawler())
	c := client{h, h.Key}
	source := c.siteRecord(hostOf(site))
	news, events := c.createFeed("Hall news"), c.createEventFeed("Hall events")
	c.attach(news, map[string]any{"sourceType": "site", "domain": hostOf(site)})
	c.attachEvents(events, source)
	wait.Until(t, 30*time.Second, "both feeds filled", func() bool {
		return slices.Equal(c.articleURLs(news), venueArticles(site)) && slices.Equal(c.eventTitles(events), venueEvents)
	})

	c.do("PATCH", "/feeds/events/"+events, map[string]any{"enabled": false}).MustStatus(t, http.StatusOK)
	site.publishEncore()
	more := append(venueArticles(site), site.URL+"/events/encore", site.URL+"/news/encore")
	slices.Sort(more)
	wait.Until(t, 30*time.Second, "the news feed to get the encore's pages", func() bool { return slices.Equal(c.articleURLs(news), more) })
	if got := c.eventTitles(events); !slices.Equal(got, venueEvents) {
		t.Fatalf("the disabled event feed lists %v", got)
	}

	c.do("PATCH", "/feeds/events/"+events, map[string]any{"enabled": true}).MustStatus(t, http.StatusOK)
	want := append(slices.Clone(venueEvents), "Encore")
	slices.Sort(want)
	wait.Until(t, 30*time.Second, "the re-enabled event feed to get the encore the site published while it was disabled", func() bool { return slices.Equal(c.eventTitles(events), want) })
}
