package main

import (
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/internal/crawltest"
)

// Issue 23: adaptive polling through `feedsvc serve`, configured by its
// environment, seen through the source's detail. ingest's
// TestEachSourceIsPolledAsOftenAsItChangesAndNoSoonerThanItSaysItStaysFresh
// covers every freshness signal in process; this one shows the schedule a
// real process gives and exposes.
func TestAServeProcessPollsEachSourceAsOftenAsItChangesAndNoSoonerThanItSaysItStaysFresh(t *testing.T) {
	// A floor of a second: a source given hours was read once in the test.
	const ceiling = 10 * time.Hour
	srv := startServed(t, "FEEDSVC_POLL_INTERVAL=1s", "FEEDSVC_MAX_POLL_INTERVAL="+ceiling.String())
	api := srv.api
	// 42 articles in the last week: one every 4 hours.
	busy := func(head string, headers map[string]string) *crawltest.FeedSite {
		return crawltest.NewFeedSite(t, 42, 4*time.Hour, head, headers)
	}
	tests := []struct {
		name     string
		site     *crawltest.FeedSite
		interval time.Duration
		observed time.Duration // zero: none
		fresh    time.Duration // zero: none
	}{
		{"a source publishing every 4 hours is polled every 4 hours", busy("", nil), 4 * time.Hour, 4 * time.Hour, 0},
		{"a source that published nothing for a week is polled at the ceiling",
			crawltest.NewFeedSite(t, 3, 24*time.Hour, "", nil).Shifted(9 * 24 * time.Hour), ceiling, 0, 0},
		{"Cache-Control max-age lengthens the interval", busy("", map[string]string{"Cache-Control": "public, max-age=18000"}),
			5 * time.Hour, 4 * time.Hour, 5 * time.Hour},
		{"Retry-After lengthens the interval", busy("", map[string]string{"Retry-After": "20000"}),
			20000 * time.Second, 4 * time.Hour, 20000 * time.Second},
		{"an RSS ttl lengthens the interval", busy("<ttl>360</ttl>", nil), 6 * time.Hour, 4 * time.Hour, 6 * time.Hour},
	}
	feed := api.post("/feeds/news", map[string]any{"name": "adaptive", "description": "adaptive polling"})["id"].(string)
	ids := make([]string, len(tests))
	for i, tt := range tests {
		site := api.post("/sources", map[string]any{"sourceType": "site", "domain": tt.site.Domain()})["id"].(string)
		ids[i] = api.post("/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "sitemap", "url": tt.site.FeedURL(), "siteId": site})["sourceId"].(string)
	}
	seconds := func(d time.Duration) any {
		if d == 0 {
			return nil
		}
		return d.Seconds()
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p map[string]any
			eventually(t, 30*time.Second, func() bool {
				p = api.polling(ids[i])
				return p != nil && p["lastPollAt"] != nil && p["intervalSeconds"] != nil
			}, "the first poll")
			if got := p["intervalSeconds"]; got != tt.interval.Seconds() {
				t.Errorf("intervalSeconds = %v, want %v", got, tt.interval.Seconds())
			}
			if got := p["observedIntervalSeconds"]; got != seconds(tt.observed) {
				t.Errorf("observedIntervalSeconds = %v, want %v", got, seconds(tt.observed))
			}
			if got := p["freshnessSeconds"]; got != seconds(tt.fresh) {
				t.Errorf("freshnessSeconds = %v, want %v", got, seconds(tt.fresh))
			}
			last, _ := time.Parse(time.RFC3339Nano, p["lastPollAt"].(string))
			next, _ := time.Parse(time.RFC3339Nano, p["nextPollAt"].(string))
			// ±10% jitter, and a second for the timestamps' rounding.
			if gap := next.Sub(last); gap < tt.interval*9/10-time.Second || gap > tt.interval*11/10+time.Second {
				t.Errorf("next poll %v after the last, want %v ±10%%", gap, tt.interval)
			}
			if hits := tt.site.FeedHits(); hits != 1 {
				t.Errorf("the feed was read %d times, want once (the floor is a second; the interval is hours)", hits)
			}
		})
	}
}
