package ingest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/crawltest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// withPolling runs the service's crawler with the interval and its bounds
// (zero: the default).
func withPolling(interval, least, most time.Duration) servicetest.Option {
	return func(c *config.Config) {
		c.PollInterval, c.MinPollInterval, c.MaxPollInterval = interval, least, most
		c.Roles[config.RoleCrawler] = true
	}
}

// polling is the schedule a source's detail shows, nil until it has one.
func (c client) polling(sourceID string) map[string]any {
	c.h.T.Helper()
	r := c.do("GET", "/sources/"+sourceID, nil).MustStatus(c.h.T, http.StatusOK)
	p, _ := r.Data()["polling"].(map[string]any)
	return p
}

// pollCase is a source whose first poll's schedule a test checks.
type pollCase struct {
	name string
	// url is what the sitemap source reads; site, when set, the site
	// whose feed reads are counted.
	url  string
	site *crawltest.FeedSite
	// interval is what the poll chose; want(observed) computes it when the
	// source's own pace decides it. observed, when set, is the observed
	// interval's least value (it grows by the time between the site's
	// start and the poll, over 19 gaps).
	interval time.Duration
	want     func(observed time.Duration) time.Duration
	observed time.Duration
	reason   string
	failures float64
	// slack: Expires names a moment, which draws nearer between the
	// test's start and the poll.
	slack time.Duration
}

// checkFirstPolls attaches each case's source to a feed of h and checks
// the schedule its first poll chose, as the source's detail shows it: the
// interval, why, and the next poll within the interval's jitter (down by
// up to 10%, never past it).
func checkFirstPolls(t *testing.T, h *servicetest.Harness, tests []pollCase) []string {
	c := client{h, h.Key}
	feed := c.createFeed("polling")
	ids := make([]string, len(tests))
	for i, tt := range tests {
		site := c.siteRecord(strings.TrimPrefix(strings.Split(tt.url, "/feed")[0], "http://"))
		ids[i] = c.attach(feed, map[string]any{"sourceType": "sitemap", "url": tt.url, "siteId": site})["sourceId"].(string)
	}
	seconds := func(v any) time.Duration {
		f, _ := v.(float64)
		return time.Duration(f * float64(time.Second))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p map[string]any
			wait.Until(t, 60*time.Second, "the first poll", func() bool {
				p = c.polling(ids[i])
				return p != nil && p["lastPollAt"] != nil && p["intervalReason"] != nil
			})
			observed := seconds(p["observedIntervalSeconds"])
			want := tt.interval
			if tt.want != nil {
				if observed < tt.observed || observed > tt.observed+time.Minute {
					t.Errorf("observedIntervalSeconds = %v, want %v (up to a minute more)", p["observedIntervalSeconds"], tt.observed.Seconds())
				}
				want = tt.want(observed)
			}
			if got := seconds(p["intervalSeconds"]); got > want+time.Millisecond || got < want-tt.slack-time.Millisecond {
				t.Errorf("intervalSeconds = %v, want %v", p["intervalSeconds"], want.Seconds())
			}
			if p["intervalReason"] != tt.reason {
				t.Errorf("intervalReason = %v, want %s", p["intervalReason"], tt.reason)
			}
			if p["consecutiveFailures"] != tt.failures {
				t.Errorf("consecutiveFailures = %v, want %v", p["consecutiveFailures"], tt.failures)
			}
			last, _ := time.Parse(time.RFC3339, p["lastPollAt"].(string))
			next, _ := time.Parse(time.RFC3339, p["nextPollAt"].(string))
			// A second for the timestamps' rounding.
			if gap := next.Sub(last); gap < (want-tt.slack)*9/10-time.Second || gap > want+time.Second {
				t.Errorf("next poll %v after the last, want %v jittered down by up to 10%%", gap, want)
			}
			if tt.site != nil {
				if hits := tt.site.FeedHits(); hits != 1 {
					t.Errorf("the feed was read %d times, want once (every interval is minutes or more)", hits)
				}
			}
		})
	}
	return ids
}

func TestEverySourceIsCheckedWithinTheIntervalBusyOnesSoonerAndLaterOnlyWhenTheSiteAsks(t *testing.T) {
	t.Parallel()
	const interval = 10 * time.Hour
	// 42 articles, one every 4 hours, the newest an hour old: the newest
	// 20 span 77 hours and the time since, over 19 gaps, a little over 4h
	// 3m; twenty polls per article make it a little over 12 minutes.
	busy := func(head string, headers map[string]string) (string, *crawltest.FeedSite) {
		s := crawltest.NewFeedSite(t, 42, 4*time.Hour, head, headers)
		return s.FeedURL(), s
	}
	busyObserved := 77 * time.Hour / 19
	twentieth := func(observed time.Duration) time.Duration { return observed / ingest.PollsPerArticle }
	quiet := crawltest.NewFeedSite(t, 3, 24*time.Hour, "", nil).Shifted(9 * 24 * time.Hour)
	limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Retry-After", "7200")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(limited.Close)
	var tests []pollCase
	add := func(name string, url string, site *crawltest.FeedSite, c pollCase) {
		c.name, c.url, c.site = name, url, site
		tests = append(tests, c)
	}
	u, s := busy("", nil)
	add("a source publishing every 4 hours is checked about twenty times per article", u, s,
		pollCase{want: twentieth, observed: busyObserved, reason: "busy"})
	add("a source that published nothing for a week is checked at the interval", quiet.FeedURL(), quiet,
		pollCase{interval: interval, reason: "interval"})
	u, s = busy("", map[string]string{"Cache-Control": "public, max-age=1800"})
	add("Cache-Control max-age lengthens a busy source's interval", u, s,
		pollCase{interval: 30 * time.Minute, reason: "cacheControl"})
	u, s = busy("", map[string]string{"Cache-Control": "max-age=18000"})
	add("Cache-Control max-age is honoured up to an hour", u, s,
		pollCase{interval: time.Hour, reason: "cacheControl"})
	u, s = busy("", map[string]string{"Expires": time.Now().Add(50 * time.Minute).UTC().Format(http.TimeFormat)})
	add("Expires lengthens a busy source's interval", u, s,
		pollCase{interval: 50 * time.Minute, reason: "expires", slack: time.Minute})
	u, s = busy("<ttl>45</ttl>", nil)
	add("an RSS ttl lengthens a busy source's interval", u, s,
		pollCase{interval: 45 * time.Minute, reason: "feedTtl"})
	u, s = busy("<sy:updatePeriod>hourly</sy:updatePeriod><sy:updateFrequency>2</sy:updateFrequency>", nil)
	add("sy:updatePeriod and sy:updateFrequency lengthen a busy source's interval", u, s,
		pollCase{interval: 30 * time.Minute, reason: "feedUpdatePeriod"})
	u, s = busy("<ttl>1440</ttl>", nil)
	add("a ttl of a day is honoured up to an hour", u, s,
		pollCase{interval: time.Hour, reason: "feedTtl"})
	u, s = busy("", map[string]string{"Retry-After": "20000"})
	add("a Retry-After on a success lengthens the interval past the promise", u, s,
		pollCase{interval: 20000 * time.Second, reason: "retryAfter"})
	add("a 429's Retry-After lengthens the interval past the promise", limited.URL+"/feed.xml", nil,
		pollCase{interval: 2 * time.Hour, reason: "retryAfter", failures: 1})
	h := servicetest.Start(t, withPolling(interval, 0, 0))
	ids := checkFirstPolls(t, h, tests)
	t.Run("each source's interval and the reasons are in the metrics", func(t *testing.T) {
		resp, err := h.Test(httptest.NewRequest("GET", "/metrics", nil))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		body := string(raw)
		for i, tt := range tests {
			if tt.slack > 0 || tt.want != nil {
				continue // their intervals are checked above, within their slack
			}
			want := fmt.Sprintf(`feedsvc_source_poll_interval_seconds{source_id=%q} %v`, ids[i], tt.interval.Seconds())
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
		for _, want := range []string{`feedsvc_crawl_sources_by_interval_reason{reason="busy"} 1`,
			`feedsvc_crawl_sources_by_interval_reason{reason="cacheControl"} 2`, `feedsvc_crawl_sources_by_interval_reason{reason="retryAfter"} 2`,
			"feedsvc_crawl_due_sources "} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	})
	t.Run("a newly attached source is polled at once, whatever the others' intervals", func(t *testing.T) {
		c := client{h, h.Key}
		site := crawltest.NewFeedSite(t, 2, time.Hour, "", nil)
		id := c.attach(c.createFeed("new"), map[string]any{"sourceType": "sitemap", "url": site.URL + "/feed.xml",
			"siteId": c.siteRecord(strings.TrimPrefix(site.URL, "http://"))})["sourceId"].(string)
		wait.Until(t, 30*time.Second, "the new source's first poll", func() bool { p := c.polling(id); return p != nil && p["lastPollAt"] != nil })
	})
}

func TestAnOperatorMayLetQuietSourcesWaitLongerUpToTheMaximumInterval(t *testing.T) {
	t.Parallel()
	const interval, most = time.Hour, 10 * time.Hour
	quiet := crawltest.NewFeedSite(t, 3, 24*time.Hour, "", nil).Shifted(9 * 24 * time.Hour)
	// One article a day for the last ten days: the last week's seven (and
	// the eighth just outside it) span 6 days and 1 hour over 6 gaps, a
	// day and a few minutes: 2h 25m and some seconds at ten per article.
	daily := crawltest.NewFeedSite(t, 10, 24*time.Hour, "", nil)
	busy := crawltest.NewFeedSite(t, 42, 4*time.Hour, "", nil)
	h := servicetest.Start(t, withPolling(interval, 0, most))
	checkFirstPolls(t, h, []pollCase{
		{name: "a source that published nothing for a week waits the maximum", url: quiet.FeedURL(), site: quiet,
			interval: most, reason: "quiet"},
		{name: "a source publishing daily waits a twentieth of its pace, above the interval", url: daily.FeedURL(), site: daily,
			want: func(o time.Duration) time.Duration { return o / ingest.PollsPerArticle }, observed: (6*24*time.Hour + time.Hour) / 6, reason: "quiet"},
		{name: "a busy source is still checked sooner than the interval", url: busy.FeedURL(), site: busy,
			want: func(o time.Duration) time.Duration { return o / ingest.PollsPerArticle }, observed: 77 * time.Hour / 19, reason: "busy"},
	})
}
