package ingest_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest"
	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/internal/pgnotify"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// withPollInterval has the service's own crawler poll every source at d,
// however busy (FEEDSVC_MIN_POLL_INTERVAL as FEEDSVC_POLL_INTERVAL).
func withPollInterval(d time.Duration) servicetest.Option {
	return func(c *config.Config) { c.PollInterval, c.MinPollInterval = d, d }
}

// withoutCrawler starts the service without its crawler, for tests that run
// workers of their own (with a short tick, timeouts and size limits).
func withoutCrawler() servicetest.Option {
	return func(c *config.Config) { delete(c.Roles, config.RoleCrawler) }
}

// testWorker is the worker configuration most tests use: fast ticks and
// polls, so that a test waits milliseconds, not minutes.
func testWorker(owner string) ingest.Config {
	return ingest.Config{
		PollInterval: 200 * time.Millisecond, Tick: 20 * time.Millisecond, Owner: owner,
		RetryBase: 100 * time.Millisecond, RetryMax: 400 * time.Millisecond, LeaseDuration: 5 * time.Second,
	}
}

// startWorker runs a worker against the harness's database until the test
// ends, and fails the test if it stops early.
func startWorker(t *testing.T, h *servicetest.Harness, opts crawl.Options, cfg ingest.Config) {
	t.Helper()
	startToldWorker(t, h, opts, cfg, nil)
}

// startToldWorker is startWorker with a worker that notifications tell of
// crawlable attachments (nil: none).
func startToldWorker(t *testing.T, h *servicetest.Harness, opts crawl.Options, cfg ingest.Config, notifications *pgnotify.Listener) {
	t.Helper()
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	w, err := h.Service.NewIngestWorker(crawl.New(opts), cfg, notifications)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		select {
		case err := <-done:
			t.Errorf("worker %s stopped before the test ended: %v", cfg.Owner, err)
			return
		default:
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker %s: %v", cfg.Owner, err)
		}
	})
}

// client calls the API with one organization's key.
type client struct {
	h   *servicetest.Harness
	key string
}

func (c client) do(method, path string, body any) servicetest.Response {
	c.h.T.Helper()
	return c.h.DoWith(method, path, body, map[string]string{"Authorization": "Bearer " + c.key})
}

func (c client) createFeed(name string) string {
	c.h.T.Helper()
	r := c.do("POST", "/feeds/news", map[string]any{"name": name, "description": "feed " + name}).MustStatus(c.h.T, http.StatusCreated)
	return r.Data()["id"].(string)
}

// attach adds a source to a feed and returns the attachment.
func (c client) attach(feedID string, body map[string]any) map[string]any {
	c.h.T.Helper()
	return c.do("POST", "/feeds/news/"+feedID+"/sources", body).MustStatus(c.h.T, http.StatusCreated).Data()
}

// siteRecord registers a site source record without attaching it to a
// feed (D4), to give sitemap and index-page sources their siteId.
func (c client) siteRecord(domain string) string {
	c.h.T.Helper()
	r := c.do("POST", "/sources", map[string]any{"sourceType": "site", "domain": domain})
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		c.h.T.Fatalf("register site: %d %s", r.Status, r.Raw)
	}
	return r.Data()["id"].(string)
}

// items lists a feed's items, keyed by URL.
func (c client) items(feedID string) map[string]map[string]any {
	c.h.T.Helper()
	r := c.do("GET", "/feeds/news/"+feedID+"/items?limit=100", nil).MustStatus(c.h.T, http.StatusOK)
	list, _ := r.Data()["items"].([]any)
	out := map[string]map[string]any{}
	for _, v := range list {
		it := v.(map[string]any)
		url, _ := it["url"].(string)
		if _, dup := out[url]; dup {
			c.h.T.Errorf("feed %s lists %s twice", feedID, url)
		}
		out[url] = it
	}
	return out
}

// hasItems reports whether the feed lists every one of the articles.
func (c client) hasItems(feedID string, site *fakeSite, articles ...*fakeArticle) bool {
	items := c.items(feedID)
	for _, a := range articles {
		if _, ok := items[site.URL+a.path()]; !ok {
			return false
		}
	}
	return true
}

// urls of the articles on a site, for comparing with a feed's items.
func urls(site *fakeSite, articles ...*fakeArticle) []string {
	out := make([]string, len(articles))
	for i, a := range articles {
		out[i] = site.URL + a.path()
	}
	return out
}
