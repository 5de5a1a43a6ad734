package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/platform/platformtest"
	"github.com/feedsvc/feedsvc/testkit/crawltest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// Issue 33: the poll interval is a promise. With nothing but
// FEEDSVC_POLL_INTERVAL set, a source that published one article in the
// last 14 days is checked every interval like any other, so its next
// article is listed within about one interval, whatever kind of source it
// is; the crawler then records how long the article took from its stated
// publication to its item, for the articles published while it watched.
func TestWithOnlyThePollIntervalSetAQuietSourcePicksUpItsNextArticleWithinAboutOneInterval(t *testing.T) {
	const interval = 2 * time.Second
	const token = "quiet-bearer-token"
	x := platformtest.NewTwitter(t, token)
	x.AddUser(&platformtest.TwitterUser{ID: "4242", Username: "quietdesk", Name: "Quiet Desk",
		Tweets: []platformtest.Tweet{{ID: "9001", Text: "Our one post in a fortnight", CreatedAt: time.Now().Add(-10 * 24 * time.Hour)}}})
	srv := startServed(t, "FEEDSVC_POLL_INTERVAL="+interval.String(),
		"FEEDSVC_TWITTER_API_URL="+x.URL, "FEEDSVC_TWITTER_BEARER_TOKEN="+token)
	api := srv.api
	type source struct {
		name, sourceType string
		body             map[string]any
		first            string
		publish          func() string
		feed, id         string
	}
	site := func(name, sourceType string, body func(s *crawltest.NewsSite, siteID string) map[string]any) *source {
		s := crawltest.NewNewsSite(t, 10*24*time.Hour)
		siteID := api.post("/sources", map[string]any{"sourceType": "site", "domain": s.Domain()})["id"].(string)
		return &source{name: name, sourceType: sourceType, body: body(s, siteID), first: s.ArticleURL(0),
			publish: func() string { return s.Publish("The news of the fortnight") }}
	}
	sources := []*source{
		site("a site", "site", func(s *crawltest.NewsSite, _ string) map[string]any {
			return map[string]any{"sourceType": "site", "domain": s.Domain()}
		}),
		site("a sitemap", "sitemap", func(s *crawltest.NewsSite, siteID string) map[string]any {
			return map[string]any{"sourceType": "sitemap", "url": s.SitemapURL(), "siteId": siteID}
		}),
		site("an index page", "siteIndexPage", func(s *crawltest.NewsSite, siteID string) map[string]any {
			return map[string]any{"sourceType": "siteIndexPage", "url": s.IndexURL(), "siteId": siteID}
		}),
		{name: "a platform account", sourceType: "twitter", body: map[string]any{"sourceType": "twitter", "username": "quietdesk"},
			first: "https://x.com/quietdesk/status/9001", publish: func() string {
				x.Post("4242", platformtest.Tweet{ID: "9002", Text: "And now, the news", CreatedAt: time.Now()})
				return "https://x.com/quietdesk/status/9002"
			}},
	}
	for _, s := range sources {
		s.feed = api.post("/feeds/news", map[string]any{"name": s.name, "description": "a quiet source"})["id"].(string)
		s.id = api.post("/feeds/news/"+s.feed+"/sources", s.body)["sourceId"].(string)
	}
	for _, s := range sources {
		wait.Until(t, 60*time.Second, s.name+"'s article of ten days ago", func() bool { return api.lists(s.feed, s.first) })
	}
	for _, s := range sources {
		t.Run(s.name+" is checked at the interval", func(t *testing.T) {
			// The first poll's schedule is written after its items show.
			var p map[string]any
			wait.Until(t, 10*time.Second, "the first poll's schedule", func() bool { p = api.polling(s.id); return p != nil && p["intervalReason"] != nil })
			if p["intervalReason"] != "interval" || p["intervalSeconds"] != interval.Seconds() {
				t.Errorf("intervalSeconds %v for %v, want %v for interval", p["intervalSeconds"], p["intervalReason"], interval.Seconds())
			}
		})
	}
	published := time.Now()
	urls := make([]string, len(sources))
	for i, s := range sources {
		urls[i] = s.publish()
	}
	for i, s := range sources {
		t.Run(s.name+" lists its next article within about one interval", func(t *testing.T) {
			// An interval, the poll itself and the projection: a quiet
			// source waited two hours here before (FEEDSVC_MAX_POLL_INTERVAL).
			wait.Until(t, interval+15*time.Second, "the new article", func() bool { return api.lists(s.feed, urls[i]) })
			t.Logf("listed %v after it was published", time.Since(published).Round(100*time.Millisecond))
		})
	}
	t.Run("each new item's delay since its publication is recorded, the articles from before attaching are not", func(t *testing.T) {
		for _, s := range sources {
			count := fmt.Sprintf(`feedsvc_item_publication_delay_seconds_count{source_type=%q}`, s.sourceType)
			if got := api.metric(count); got != 1 {
				t.Errorf("%s = %v, want 1 (the new article's item only)", count, got)
			}
			// Every delay is within the test's own wait.
			within := fmt.Sprintf(`feedsvc_item_publication_delay_seconds_bucket{source_type=%q,le="30"}`, s.sourceType)
			if got := api.metric(within); got != 1 {
				t.Errorf("%s = %v, want 1", within, got)
			}
		}
	})
}
