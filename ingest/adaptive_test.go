package ingest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/internal/config"
	"github.com/feedsvc/feedsvc/internal/servicetest"
)

// feedSite is a small news site as feed readers see it: robots.txt, an RSS
// feed of its articles (one every gap, the newest an hour old) and the
// article pages. head is added to the feed's channel and headers to the
// feed's response, for what the site says about its own freshness.
type feedSite struct {
	*httptest.Server
	articles int
	gap      time.Duration
	newest   time.Time
	head     string
	headers  map[string]string
	mu       sync.Mutex
	feedHits int
}

func newFeedSite(t *testing.T, articles int, gap time.Duration, head string, headers map[string]string) *feedSite {
	t.Helper()
	s := &feedSite{articles: articles, gap: gap, newest: time.Now().Add(-time.Hour), head: head, headers: headers}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *feedSite) published(i int) time.Time { return s.newest.Add(-time.Duration(i) * s.gap) }

func (s *feedSite) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/robots.txt":
		_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
	case r.URL.Path == "/feed.xml":
		s.mu.Lock()
		s.feedHits++
		s.mu.Unlock()
		for k, v := range s.headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/rss+xml")
		var b strings.Builder
		fmt.Fprintf(&b, `<?xml version="1.0"?><rss version="2.0" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel><title>Site</title><link>%s/</link>%s`, s.URL, s.head)
		for i := 0; i < s.articles; i++ {
			fmt.Fprintf(&b, `<item><title>Story %d</title><link>%s/story/%d</link><pubDate>%s</pubDate></item>`,
				i, s.URL, i, s.published(i).UTC().Format(http.TimeFormat))
		}
		b.WriteString(`</channel></rss>`)
		_, _ = io.WriteString(w, b.String())
	case strings.HasPrefix(r.URL.Path, "/story/"):
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/story/%d", &i); err != nil || i >= s.articles {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Story %d</title>
<meta property="og:title" content="Story %d"><meta property="article:published_time" content="%s"></head>
<body><article><h1>Story %d</h1><p>What happened on day %d, told at length for the reader.</p></article></body></html>`,
			i, i, s.published(i).UTC().Format(time.RFC3339), i, i)
	default:
		http.NotFound(w, r)
	}
}

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
	busy := func(head string, headers map[string]string) *feedSite {
		return newFeedSite(t, 42, 4*time.Hour, head, headers)
	}
	tests := []struct {
		name     string
		site     *feedSite
		interval time.Duration
		observed time.Duration // zero: none
		// slack: Expires names a moment, which draws nearer between the
		// test's start and the poll.
		slack time.Duration
	}{
		{"a source publishing every 4 hours is polled every 4 hours", busy("", nil), 4 * time.Hour, 4 * time.Hour, 0},
		{"a source that published nothing for a week is polled at the ceiling",
			newFeedSite(t, 3, 24*time.Hour, "", nil).shifted(9 * 24 * time.Hour), ceiling, 0, 0},
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
			tt.site.mu.Lock()
			hits := tt.site.feedHits
			tt.site.mu.Unlock()
			if hits != 1 {
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
		site := newFeedSite(t, 2, time.Hour, "", nil)
		id := c.attach(feed, map[string]any{"sourceType": "sitemap", "url": site.URL + "/feed.xml",
			"siteId": c.siteRecord(strings.TrimPrefix(site.URL, "http://"))})["sourceId"].(string)
		eventually(t, 30*time.Second, func() bool { p := c.polling(id); return p != nil && p["lastPollAt"] != nil }, "the new source's first poll")
	})
}

// shifted moves every article back by d.
func (s *feedSite) shifted(d time.Duration) *feedSite {
	s.newest = s.newest.Add(-d)
	return s
}
