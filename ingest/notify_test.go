package ingest_test

import (
	"context"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/internal/pgnotify"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// runListener runs l until the test ends.
func runListener(t *testing.T, l *pgnotify.Listener) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// articlesProjected reports whether every article the crawls recorded is
// in the articles read model: a backfill waits for it (errArticlesBehind)
// until the next tick, which these tests make an hour away.
func articlesProjected(t *testing.T, h *servicetest.Harness) bool {
	t.Helper()
	var ok bool
	if err := h.Service.DB.Pool.QueryRow(context.Background(), `SELECT NOT EXISTS (SELECT 1 FROM crawl_seen s
		WHERE s.article_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM articles a WHERE a.id = s.article_id))`).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// With a tick of an hour and the full scan a minute away, only the
// notification of the attachments' projector can make the worker look for
// the new source and the second feed's backfill within seconds; a worker
// whose listener cannot connect looks every tick, as before notifications.
func TestANewAttachmentIsPolledAndBackfilledAtOnceWhenToldAndEveryTickWhenNot(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		tick time.Duration
		// reachable: the listener's database answers; else it never listens.
		reachable bool
	}{
		{"a listening worker is told of new attachments and backfills", time.Hour, true},
		{"a worker whose listener does not listen looks every tick", 50 * time.Millisecond, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			now := time.Now()
			a1 := &fakeArticle{Slug: "harbour-reopens-after-storm", Title: "Harbour reopens", Published: now.Add(-time.Hour), Markup: jsonLD, In: inNewsSitemap}
			a2 := &fakeArticle{Slug: "school-wins-chess-final", Title: "Chess final", Published: now.Add(-2 * time.Hour), Markup: openGraph, In: inRSS}
			site := newFakeSite(t, a1, a2)
			h := servicetest.Start(t, withoutCrawler())
			dsn := h.DSN
			if !tt.reachable {
				dsn = "postgres://postgres@127.0.0.1:1/nothing?sslmode=disable&connect_timeout=1"
			}
			l := pgnotify.New(dsn, nil)
			cfg := testWorker("told-" + tt.name)
			cfg.Tick, cfg.PollInterval = tt.tick, time.Hour
			startToldWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, cfg, l)
			runListener(t, l)
			if tt.reachable {
				wait.Until(t, 5*time.Second, "the listener to listen", l.Listening)
			}

			acme := client{h, h.Key}
			feed1 := acme.createFeed("first")
			acme.attach(feed1, map[string]any{"sourceType": "site", "domain": site.domain()})
			wait.Until(t, 5*time.Second, "the new source's first poll", func() bool { return acme.hasItems(feed1, site, a1, a2) })

			wait.Until(t, 5*time.Second, "the articles read model", func() bool { return articlesProjected(t, h) })
			feed2 := acme.createFeed("second")
			acme.attach(feed2, map[string]any{"sourceType": "site", "domain": site.domain()})
			wait.Until(t, 5*time.Second, "the second feed's backfill", func() bool { return acme.hasItems(feed2, site, a1, a2) })
		})
	}
}
