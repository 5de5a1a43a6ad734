package crawl

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/document"
)

func TestAResponseSaysHowLongItStaysFreshAndHowLongToLeaveItsSiteAloneByItsHeaders(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	date := now.Format(http.TimeFormat)
	cc := func(d time.Duration) document.Hint { return document.Hint{For: d, By: document.ByCacheControl} }
	tests := []struct {
		name            string
		headers         map[string]string
		fresh, throttle document.Hint
	}{
		{"nothing says nothing", nil, document.Hint{}, document.Hint{}},
		{"max-age is read among other directives", map[string]string{"Cache-Control": "public, max-age=600, must-revalidate"}, cc(10 * time.Minute), document.Hint{}},
		{"no-cache says nothing whatever the max-age", map[string]string{"Cache-Control": "no-cache, max-age=600"}, document.Hint{}, document.Hint{}},
		{"Expires counts from the response's Date", map[string]string{"Date": date, "Expires": now.Add(time.Hour).Format(http.TimeFormat)},
			document.Hint{For: time.Hour, By: document.ByExpires}, document.Hint{}},
		{"Expires in the past says nothing", map[string]string{"Date": date, "Expires": now.Add(-time.Hour).Format(http.TimeFormat)}, document.Hint{}, document.Hint{}},
		{"Cache-Control overrides Expires", map[string]string{"Cache-Control": "max-age=60", "Date": date, "Expires": now.Add(time.Hour).Format(http.TimeFormat)},
			cc(time.Minute), document.Hint{}},
		{"Retry-After in seconds is a throttle, not freshness", map[string]string{"Retry-After": "900"},
			document.Hint{}, document.Hint{For: 15 * time.Minute, By: document.ByRetryAfter}},
		{"Retry-After counts beside no-cache", map[string]string{"Retry-After": "900", "Cache-Control": "no-cache"},
			document.Hint{}, document.Hint{For: 15 * time.Minute, By: document.ByRetryAfter}},
		{"a year is bounded to a week", map[string]string{"Cache-Control": "max-age=31536000"}, cc(maxFreshness), document.Hint{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			if fresh, throttle := headerFreshness(h, now); fresh != tt.fresh || throttle != tt.throttle {
				t.Errorf("headerFreshness = %+v, %+v, want %+v, %+v", fresh, throttle, tt.fresh, tt.throttle)
			}
		})
	}
}

func TestAFeedSaysHowOftenToReadItByTTLOrTheSyndicationModule(t *testing.T) {
	ttl := func(d time.Duration) document.Hint { return document.Hint{For: d, By: document.ByFeedTTL} }
	period := func(d time.Duration) document.Hint { return document.Hint{For: d, By: document.ByFeedUpdatePeriod} }
	rss := func(head string) []byte {
		return []byte(`<?xml version="1.0"?><rss version="2.0" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel><title>T</title>` +
			head + `<item><title>x</title><ttl>999</ttl></item></channel></rss>`)
	}
	tests := []struct {
		name string
		body []byte
		want document.Hint
	}{
		{"a channel without either says nothing (an item's ttl is not the channel's)", rss(""), document.Hint{}},
		{"ttl is minutes", rss("<ttl>45</ttl>"), ttl(45 * time.Minute)},
		{"updatePeriod alone is once per period", rss("<sy:updatePeriod>hourly</sy:updatePeriod>"), period(time.Hour)},
		{"updateFrequency divides the period", rss("<sy:updatePeriod>daily</sy:updatePeriod><sy:updateFrequency>4</sy:updateFrequency>"), period(6 * time.Hour)},
		{"the longer of ttl and the period wins", rss("<ttl>30</ttl><sy:updatePeriod>hourly</sy:updatePeriod>"), period(time.Hour)},
		{"a longer ttl wins over the period", rss("<ttl>90</ttl><sy:updatePeriod>hourly</sy:updatePeriod>"), ttl(90 * time.Minute)},
		{"an Atom feed says nothing", []byte(`<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry/></feed>`), document.Hint{}},
		{"a yearly period is bounded to a week", rss("<sy:updatePeriod>yearly</sy:updatePeriod>"), period(maxFreshness)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := feedFreshness(tt.body); got != tt.want {
				t.Errorf("feedFreshness = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAListingCarriesTheCrawlDelayItsSitesRobotsTxtAsksOfUs(t *testing.T) {
	const feed = `<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><title>a</title><link>/a</link></item></channel></rss>`
	robots := "User-agent: *\nCrawl-delay: 5\n\nUser-agent: feedsvc\nCrawl-delay: 120\nAllow: /\n"
	s := newSite(t, map[string]http.HandlerFunc{
		"/robots.txt": text("text/plain", robots),
		"/feed.xml":   text("application/rss+xml", feed),
		"/latest/":    text("text/html", `<html><body><a href="/news/2026/11/story">x</a></body></html>`),
	})
	c := localClient(Options{UserAgent: "feedsvc/1.0 (+https://example.com)"})
	ctx := context.Background()
	t.Run("not before the file was read: a feed is not checked against robots.txt", func(t *testing.T) {
		store := &memStore{}
		if _, err := c.FeedCandidates(ctx, s.URL+"/feed.xml", store); err != nil {
			t.Fatal(err)
		}
		if v := store.Validators(s.URL + "/feed.xml"); v.Throttle != (document.Hint{}) {
			t.Errorf("throttle %+v before robots.txt was read, want none", v.Throttle)
		}
	})
	t.Run("once it was read, the group of our user agent's delay", func(t *testing.T) {
		store := &memStore{}
		if _, err := c.IndexPageCandidates(ctx, s.URL+"/latest/", store); err != nil {
			t.Fatal(err)
		}
		if _, err := c.FeedCandidates(ctx, s.URL+"/feed.xml", store); err != nil {
			t.Fatal(err)
		}
		want := document.Hint{For: 2 * time.Minute, By: document.ByCrawlDelay}
		for _, u := range []string{s.URL + "/latest/", s.URL + "/feed.xml"} {
			if v := store.Validators(u); v.Throttle != want {
				t.Errorf("%s: throttle %+v, want %+v", u, v.Throttle, want)
			}
		}
	})
}
