package ingest_test

import (
	"context"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// A successful poll's lease is handed back at the schedule loop's next
// turn, not when the poll ends. Until then the lease must stay alive: an
// expired one on a row still due lets another process poll the source
// again (seen as double polls in the multi-process test on a loaded
// machine, where the loop's turn came after a 3 s lease).
func TestALeaseOutlivesTheWaitForItsRelease(t *testing.T) {
	t.Parallel()
	first := &fakeArticle{Slug: "the-only-story", Title: "Only", Published: time.Now().Add(-time.Hour), Markup: jsonLD, In: inNewsSitemap}
	site := newFakeSite(t, first)
	h := servicetest.Start(t, withoutCrawler())
	cfg := testWorker("w1")
	// The loop turns every 3 s; the lease, renewed every 200 ms while it is
	// kept, would lapse 600 ms after its last renewal.
	cfg.Tick, cfg.LeaseDuration, cfg.PollInterval = 3*time.Second, 600*time.Millisecond, time.Hour
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, cfg)
	c := client{h, h.Key}
	_, att := sitemapSource(c, site, "release wait")
	src := att["sourceId"].(string)

	// Until the first poll's release is written, every look at the row
	// must find its lease live.
	wait.Until(t, 15*time.Second, "the first poll's release to be written", func() bool {
		var owned, live, released bool
		err := h.Service.DB.Bun.NewRaw(`SELECT lease_owner IS NOT NULL, coalesce(leased_until > now(), false), last_crawl_at IS NOT NULL
			FROM crawl_state WHERE source_id = ?`, src).Scan(context.Background(), &owned, &live, &released)
		if err != nil {
			return false
		}
		if owned && !live {
			t.Fatal("the source's lease expired while its release waited for the schedule loop")
		}
		return released && !owned
	})
}
