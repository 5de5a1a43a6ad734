package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/testkit/crawltest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// Issues 23 and 33: the schedule a real `feedsvc serve` gives each source,
// configured by its environment and seen through the source's detail:
// within the interval, sooner for a busy source, later only when the site
// asks, and why. ingest's
// TestEverySourceIsCheckedWithinTheIntervalBusyOnesSoonerAndLaterOnlyWhenTheSiteAsks
// covers every signal in process.
func TestAServeProcessChecksEverySourceWithinTheIntervalAndSaysWhyWhenNot(t *testing.T) {
	// An hour: a source given minutes or more was read once in the test.
	const interval = time.Hour
	srv := startServed(t, "FEEDSVC_POLL_INTERVAL="+interval.String())
	api := srv.api
	// 42 articles in the last week, one every 4 hours, the newest an
	// hour old: the newest 20 span 77 hours (and the seconds until the
	// poll) over 19 gaps; twenty polls per article make it a little over
	// 12 minutes.
	busy := func(head string, headers map[string]string) *crawltest.FeedSite {
		return crawltest.NewFeedSite(t, 42, 4*time.Hour, head, headers)
	}
	limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7200")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(limited.Close)
	tests := []struct {
		name string
		url  string
		site *crawltest.FeedSite
		// interval zero: a twentieth of the observed interval, which is at
		// least observed.
		interval, observed, fresh time.Duration
		reason                    string
		failures                  float64
	}{
		{name: "a busy source is checked sooner, and says so", site: busy("", nil), observed: 77 * time.Hour / 19, reason: "busy"},
		{name: "a source that published nothing for a week is checked at the interval",
			site: crawltest.NewFeedSite(t, 3, 24*time.Hour, "", nil).Shifted(9 * 24 * time.Hour), interval: interval, reason: "interval"},
		{name: "Cache-Control max-age lengthens a busy source's interval", site: busy("", map[string]string{"Cache-Control": "public, max-age=1800"}),
			interval: 30 * time.Minute, fresh: 30 * time.Minute, reason: "cacheControl"},
		{name: "an RSS ttl lengthens a busy source's interval", site: busy("<ttl>45</ttl>", nil),
			interval: 45 * time.Minute, fresh: 45 * time.Minute, reason: "feedTtl"},
		{name: "the site's Retry-After lengthens the interval past the promise, and the source says so",
			site: busy("", map[string]string{"Retry-After": "20000"}), interval: 20000 * time.Second, reason: "retryAfter"},
		{name: "a 429's Retry-After lengthens the interval past the promise, and the source says so",
			url: limited.URL + "/feed.xml", interval: 2 * time.Hour, reason: "retryAfter", failures: 1},
	}
	feed := api.post("/feeds/news", map[string]any{"name": "polling", "description": "schedules"})["id"].(string)
	ids := make([]string, len(tests))
	for i, tt := range tests {
		url, domain := tt.url, ""
		if tt.site != nil {
			url, domain = tt.site.FeedURL(), tt.site.Domain()
		} else {
			domain = limited.Listener.Addr().String()
		}
		site := api.post("/sources", map[string]any{"sourceType": "site", "domain": domain})["id"].(string)
		ids[i] = api.post("/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "sitemap", "url": url, "siteId": site})["sourceId"].(string)
	}
	seconds := func(v any) time.Duration {
		f, _ := v.(float64)
		return time.Duration(f * float64(time.Second))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p map[string]any
			wait.Until(t, 30*time.Second, "the first poll", func() bool {
				p = api.polling(ids[i])
				return p != nil && p["lastPollAt"] != nil && p["intervalReason"] != nil
			})
			want := tt.interval
			if want == 0 {
				observed := seconds(p["observedIntervalSeconds"])
				if observed < tt.observed || observed > tt.observed+time.Minute {
					t.Errorf("observedIntervalSeconds = %v, want %v (up to a minute more)", p["observedIntervalSeconds"], tt.observed.Seconds())
				}
				want = observed / 20 // polls per article
			}
			if got := seconds(p["intervalSeconds"]); got < want-time.Millisecond || got > want+time.Millisecond {
				t.Errorf("intervalSeconds = %v, want %v", p["intervalSeconds"], want.Seconds())
			}
			if p["intervalReason"] != tt.reason || p["consecutiveFailures"] != tt.failures {
				t.Errorf("intervalReason %v after %v failures, want %s after %v", p["intervalReason"], p["consecutiveFailures"], tt.reason, tt.failures)
			}
			if tt.fresh > 0 && p["freshnessSeconds"] != tt.fresh.Seconds() {
				t.Errorf("freshnessSeconds = %v, want %v", p["freshnessSeconds"], tt.fresh.Seconds())
			}
			last, _ := time.Parse(time.RFC3339Nano, p["lastPollAt"].(string))
			next, _ := time.Parse(time.RFC3339Nano, p["nextPollAt"].(string))
			// Jittered down by up to 10%, never later; a second for the
			// timestamps' rounding.
			if gap := next.Sub(last); gap < want*9/10-time.Second || gap > want+time.Second {
				t.Errorf("next poll %v after the last, want %v jittered down by up to 10%%", gap, want)
			}
			if tt.site != nil {
				if hits := tt.site.FeedHits(); hits != 1 {
					t.Errorf("the feed was read %d times, want once (the intervals are minutes or more)", hits)
				}
			}
		})
	}
}

// A busy source is not only scheduled sooner: the process checks it again
// and again within one interval, while a quiet one waits for the interval.
func TestAServeProcessChecksABusySourceSeveralTimesWithinOneInterval(t *testing.T) {
	const interval = time.Minute
	srv := startServed(t, "FEEDSVC_POLL_INTERVAL="+interval.String(), "FEEDSVC_MIN_POLL_INTERVAL=1s")
	api := srv.api
	// Twenty articles half a minute apart, the newest just out: a gap of
	// about 30 seconds, checked every 1.5 (twenty polls per article).
	var ago []time.Duration
	for i := range 20 {
		ago = append(ago, time.Duration(i)*30*time.Second)
	}
	busy := crawltest.NewNewsSite(t, ago...)
	quiet := crawltest.NewNewsSite(t, 10*24*time.Hour)
	feed := api.post("/feeds/news", map[string]any{"name": "busy and quiet", "description": "two paces"})["id"].(string)
	attach := func(s *crawltest.NewsSite) string {
		site := api.post("/sources", map[string]any{"sourceType": "site", "domain": s.Domain()})["id"].(string)
		return api.post("/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "sitemap", "url": s.SitemapURL(), "siteId": site})["sourceId"].(string)
	}
	busyID, quietID := attach(busy), attach(quiet)
	start := time.Now()
	wait.Until(t, interval/2, "four reads of the busy site's sitemap within half an interval", func() bool { return busy.Hits("/sitemap.xml") >= 4 })
	t.Logf("the busy sitemap was read 4 times in %v", time.Since(start).Round(100*time.Millisecond))
	if p := api.polling(busyID); p["intervalReason"] != "busy" {
		t.Errorf("the busy source's polling says %v, want busy", p["intervalReason"])
	}
	if n := quiet.Hits("/sitemap.xml"); n != 1 {
		t.Errorf("the quiet site's sitemap was read %d times meanwhile, want once", n)
	}
	if p := api.polling(quietID); p["intervalReason"] != "interval" {
		t.Errorf("the quiet source's polling says %v, want interval", p["intervalReason"])
	}
}

// A busy site is checked through its feed between the polls that keep the
// promise: its sitemap, which names every article, is read once per
// interval, not at every check, and a new article still shows at the
// next check.
func TestABusySitesQuickChecksReadItsFeedAndItsSitemapOncePerInterval(t *testing.T) {
	const interval = 16 * time.Second
	srv := startServed(t, "FEEDSVC_POLL_INTERVAL="+interval.String(), "FEEDSVC_MIN_POLL_INTERVAL=1s")
	api := srv.api
	// Twenty articles half a minute apart, the newest just out: checked
	// every 1.5 s (twenty polls per article).
	var ago []time.Duration
	for i := range 20 {
		ago = append(ago, time.Duration(i)*30*time.Second)
	}
	busy := crawltest.NewNewsSite(t, ago...)
	feed := api.post("/feeds/news", map[string]any{"name": "busy", "description": "a busy site"})["id"].(string)
	api.post("/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "site", "domain": busy.Domain()})

	// The sitemap's reads, timed as the test sees them (every 20 ms).
	var reads []time.Time
	watch := func(until func() bool, within time.Duration, what string) {
		t.Helper()
		deadline := time.Now().Add(within)
		for !until() {
			if n := busy.Hits("/sitemap.xml"); n > len(reads) {
				for range n - len(reads) {
					reads = append(reads, time.Now())
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v (feed read %d times, sitemap %d)", what, within, busy.Hits("/feed.xml"), busy.Hits("/sitemap.xml"))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	watch(func() bool { return len(reads) >= 1 }, 30*time.Second, "the first whole read")
	feedAtFirst := busy.Hits("/feed.xml")

	// The quick checks read the feed again and again, the sitemap not.
	watch(func() bool { return busy.Hits("/feed.xml") >= feedAtFirst+5 }, interval, "five quick checks of the feed")
	if len(reads) != 1 {
		t.Errorf("the sitemap was read %d times within five checks of the feed, want once", len(reads))
	}
	// A new article shows at the next check, through the feed.
	url := busy.Publish("Breaking on the busy site")
	published := time.Now()
	watch(func() bool { return api.lists(feed, url) }, 10*time.Second, "the new article listed")
	t.Logf("a new article listed %v after its publication", time.Since(published).Round(100*time.Millisecond))

	// The promise holds for the sitemap: read again within one interval
	// of its last read (and a poll's length), twice over.
	watch(func() bool { return len(reads) >= 3 }, 3*interval, "two more whole reads")
	for i := 1; i < len(reads); i++ {
		if gap := reads[i].Sub(reads[i-1]); gap > interval+2*time.Second {
			t.Errorf("the sitemap's read %d came %v after the one before, want within the interval %v", i+1, gap.Round(100*time.Millisecond), interval)
		}
	}
	t.Logf("feed read %d times, sitemap %d, in %v", busy.Hits("/feed.xml"), len(reads), time.Since(reads[0]).Round(time.Second))
}
