package social_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest"
	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/ingest/platform"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// start runs the service with the platform settings, without its own
// crawler: tests that need one start it with startWorker.
func start(t *testing.T, s platform.Settings) *servicetest.Harness {
	t.Helper()
	return servicetest.Start(t, func(c *config.Config) { c.Platforms = s })
}

// workerConfig polls every pollInterval with fast ticks and short backoffs.
func workerConfig(poll time.Duration) ingest.Config {
	return ingest.Config{
		PollInterval: poll, Tick: 20 * time.Millisecond, Owner: "social-test",
		RetryBase: 100 * time.Millisecond, RetryMax: 400 * time.Millisecond, LeaseDuration: 5 * time.Second,
	}
}

// startWorker runs an ingestion worker of the service until the test ends.
func startWorker(t *testing.T, h *servicetest.Harness, cfg ingest.Config) {
	t.Helper()
	w, err := h.Service.NewIngestWorker(crawl.New(crawl.Options{AllowPrivateNetworks: true, Timeout: 5 * time.Second}), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
}

func newsFeed(t *testing.T, h *servicetest.Harness, name string) string {
	t.Helper()
	r := h.Do("POST", "/feeds/news", map[string]any{"name": name, "description": "feed " + name}).MustStatus(t, http.StatusCreated)
	return r.Data()["id"].(string)
}

func eventFeed(t *testing.T, h *servicetest.Harness, name string) string {
	t.Helper()
	r := h.Do("POST", "/feeds/events", map[string]any{"name": name, "description": "feed " + name}).MustStatus(t, http.StatusCreated)
	return r.Data()["id"].(string)
}

// items lists a news feed's items (current shape, with include), keyed by url.
func items(t *testing.T, h *servicetest.Harness, feedID, query string) map[string]map[string]any {
	t.Helper()
	r := h.Do("GET", "/feeds/news/"+feedID+"/items?limit=100"+query, nil).MustStatus(t, http.StatusOK)
	return byKey(t, r.Data()["items"], "url")
}

// legacyItems lists a news feed's v0 items, keyed by data.permalinkUrl.
func legacyItems(t *testing.T, h *servicetest.Harness, feedID string) map[string]map[string]any {
	t.Helper()
	r := h.Do("GET", "/v0/feeds/news/"+feedID+"/items?limit=100", nil).MustStatus(t, http.StatusOK)
	out := map[string]map[string]any{}
	for _, v := range r.Data()["items"].([]any) {
		it := v.(map[string]any)
		data, _ := it["data"].(map[string]any)
		key, _ := data["permalinkUrl"].(string)
		if key == "" {
			key, _ = data["facebookId"].(string)
		}
		out[key] = it
	}
	return out
}

func byKey(t *testing.T, list any, key string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	arr, _ := list.([]any)
	for _, v := range arr {
		it := v.(map[string]any)
		k, _ := it[key].(string)
		if _, dup := out[k]; dup {
			t.Errorf("%s %s is listed twice", key, k)
		}
		out[k] = it
	}
	return out
}

// wantJSON fails unless got, as JSON, equals want (a JSON text).
func wantJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	b, _ := json.Marshal(got)
	_ = json.Unmarshal(b, &g)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, b, compact(want))
	}
}

func compact(s string) string {
	var v any
	_ = json.Unmarshal([]byte(s), &v)
	b, _ := json.Marshal(v)
	return string(b)
}

// without returns m without the keys, for comparing the rest exactly.
func without(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// ms is a time as the API writes it: UTC, milliseconds.
func ms(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// wantError fails unless r is an error answer of status whose details or
// message mention each of words.
func wantError(t *testing.T, r servicetest.Response, status int, words ...string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Raw)
	}
	for _, w := range words {
		if !strings.Contains(r.Raw, w) {
			t.Errorf("answer %s does not mention %q", r.Raw, w)
		}
	}
}
