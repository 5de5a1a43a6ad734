package ingest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/internal/config"
	"github.com/feedsvc/feedsvc/internal/crawltest"
	"github.com/feedsvc/feedsvc/internal/servicetest"
)

// withAdaptivePolling runs the service's crawler with adaptive polling
// between floor and ceiling.
func withAdaptivePolling(floor, ceiling time.Duration) servicetest.Option {
	return func(c *config.Config) {
		c.PollInterval, c.MaxPollInterval = floor, ceiling
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

func TestEachSourceIsPolledAsOftenAsItChangesAndNoSoonerThanItSaysItStaysFresh(t *testing.T) {
	t.Parallel()
	const ceiling = 10 * time.Hour
	// 42 articles in the last week: one every 4 hours.
	busy := func(head string, headers map[string]string) *crawltest.FeedSite {
		return crawltest.NewFeedSite(t, 42, 4*time.Hour, head, headers)
	}
	tests := []struct {
		name     string
		site     *crawltest.FeedSite
		interval time.Duration
		observed time.Duration // zero: none
		// slack: Expires names a moment, which draws nearer between the
		// test's start and the poll.
		slack time.Duration
	}{
		{"a source publishing every 4 hours is polled every 4 hours", busy("", nil), 4 * time.Hour, 4 * time.Hour, 0},
		{"a source that published nothing for a week is polled at the ceiling",
			crawltest.NewFeedSite(t, 3, 24*time.Hour, "", nil).Shifted(9 * 24 * time.Hour), ceiling, 0, 0},
		{"Cache-Control max-age lengthens the interval", busy("", map[string]string{"Cache-Control": "public, max-age=18000"}), 5 * time.Hour, 4 * time.Hour, 0},
		{"Expires lengthens the interval", busy("", map[string]string{"Expires": time.Now().Add(5*time.Hour + 30*time.Minute).UTC().Format(http.TimeFormat)}),
			5*time.Hour + 30*time.Minute, 4 * time.Hour, time.Minute},
		{"Retry-After lengthens the interval", busy("", map[string]string{"Retry-After": "20000"}), 20000 * time.Second, 4 * time.Hour, 0},
		{"an RSS ttl lengthens the interval", busy("<ttl>360</ttl>", nil), 6 * time.Hour, 4 * time.Hour, 0},
		{"sy:updatePeriod and sy:updateFrequency lengthen the interval",
			busy("<sy:updatePeriod>daily</sy:updatePeriod><sy:updateFrequency>3</sy:updateFrequency>", nil), 8 * time.Hour, 4 * time.Hour, 0},
		{"a source claiming more freshness than the ceiling is polled at the ceiling",
			busy("", map[string]string{"Cache-Control": "max-age=864000"}), ceiling, 4 * time.Hour, 0},
	}
	h := servicetest.Start(t, withAdaptivePolling(time.Second, ceiling))
	c := client{h, h.Key}
	feed := c.createFeed("adaptive")
	ids := make([]string, len(tests))
	for i, tt := range tests {
		site := c.siteRecord(strings.TrimPrefix(tt.site.URL, "http://"))
		ids[i] = c.attach(feed, map[string]any{"sourceType": "sitemap", "url": tt.site.URL + "/feed.xml", "siteId": site})["sourceId"].(string)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p map[string]any
			eventually(t, 60*time.Second, func() bool {
				p = c.polling(ids[i])
				return p != nil && p["lastPollAt"] != nil && p["intervalSeconds"] != nil
			}, "the first poll")
			if got := p["intervalSeconds"].(float64); got > tt.interval.Seconds() || got < (tt.interval-tt.slack).Seconds() {
				t.Errorf("intervalSeconds = %v, want %v", got, tt.interval.Seconds())
			}
			switch got := p["observedIntervalSeconds"]; {
			case tt.observed == 0 && got != nil:
				t.Errorf("observedIntervalSeconds = %v, want null", got)
			case tt.observed != 0 && got != tt.observed.Seconds():
				t.Errorf("observedIntervalSeconds = %v, want %v", got, tt.observed.Seconds())
			}
			last, _ := time.Parse(time.RFC3339, p["lastPollAt"].(string))
			next, _ := time.Parse(time.RFC3339, p["nextPollAt"].(string))
			if gap := next.Sub(last); gap < (tt.interval-tt.slack)*9/10-time.Second || gap > tt.interval*11/10+time.Second {
				t.Errorf("next poll %v after the last, want %v ±10%%", gap, tt.interval)
			}
			if hits := tt.site.FeedHits(); hits != 1 {
				t.Errorf("the feed was read %d times, want once (the floor is a second; the interval is hours)", hits)
			}
		})
	}
	t.Run("each source's interval is in the metrics", func(t *testing.T) {
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
			if tt.slack > 0 {
				continue // its interval is checked above, within its slack
			}
			want := fmt.Sprintf(`feedsvc_source_poll_interval_seconds{source_id=%q} %v`, ids[i], tt.interval.Seconds())
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
		if !strings.Contains(body, "feedsvc_crawl_due_sources ") {
			t.Errorf("metrics lack feedsvc_crawl_due_sources")
		}
	})
	t.Run("a newly attached source is polled at once, whatever the others' intervals", func(t *testing.T) {
		site := crawltest.NewFeedSite(t, 2, time.Hour, "", nil)
		id := c.attach(feed, map[string]any{"sourceType": "sitemap", "url": site.URL + "/feed.xml",
			"siteId": c.siteRecord(strings.TrimPrefix(site.URL, "http://"))})["sourceId"].(string)
		eventually(t, 30*time.Second, func() bool { p := c.polling(id); return p != nil && p["lastPollAt"] != nil }, "the new source's first poll")
	})
}
