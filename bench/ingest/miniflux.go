package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/feedsvc/feedsvc/bench/internal/systems"
)

// runMiniflux measures Miniflux on the same site: started on a fresh
// database of the run's cluster, then subscribed to the site's RSS feed
// through its API (POST /v1/feeds, what a user's "subscribe" does: the
// feed is fetched and its entries processed and stored before the answer),
// with its crawler on or off. With the crawler ("fetch original content")
// every entry's page is fetched and extracted (readability) before it is
// stored, one page at a time, as feedsvc fetches every article; without
// it the entries are the RSS items alone. The run ends when its entries
// (GET /v1/entries?limit=1, total, polled as feedsvc's items are) reach
// the site's article count.
func (o options) runMiniflux(ctx context.Context, s *site, crawler bool) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	const db = "bench_ingest_miniflux"
	if err := systems.Recreate(ctx, o.admin, db); err != nil {
		return result{}, err
	}
	defer func() { _ = systems.Drop(context.Background(), o.admin, db) }()
	port, err := systems.FreePort()
	if err != nil {
		return result{}, err
	}
	// Its defaults otherwise: the scheduler polls no feed during the run
	// (the new feed is next due after POLLING_FREQUENCY, 60 minutes).
	m, err := systems.StartMiniflux(ctx, "miniflux", db, systems.MinifluxOptions{Bin: o.miniflux, DSN: systems.DSNOf(o.admin, db), Port: port})
	if err != nil {
		return result{}, err
	}
	defer m.Stop()
	// The subscription answers only once every page is fetched: no
	// client timeout but the run's.
	m.API.Client = &http.Client{}
	var categories []struct {
		ID int64 `json:"id"`
	}
	if err := m.API.Do(ctx, "GET", "/v1/categories", nil, &categories); err != nil || len(categories) == 0 {
		return result{}, fmt.Errorf("miniflux categories (%d): %w\n%s", len(categories), err, m.Output())
	}
	// Let its start-up jobs end, as feedsvc's projectors settle.
	time.Sleep(time.Second)

	cpu, err := systems.NewBackendCPU(ctx, o.admin, db)
	if err != nil {
		return result{}, err
	}
	defer cpu.Close()
	var r result
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		_, _ = fmt.Sscan(string(b), &r.Load)
	}
	txBase, err := cpu.Transactions(ctx)
	if err != nil {
		return result{}, err
	}
	meter, err := m.StartMeter(ctx, cpu, 200*time.Millisecond)
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	subscribed := make(chan error, 1)
	go func() {
		var feed struct {
			ID int64 `json:"feed_id"`
		}
		subscribed <- m.API.Do(ctx, "POST", "/v1/feeds", map[string]any{
			"feed_url": "http://" + s.host + "/rss.xml", "category_id": categories[0].ID, "crawler": crawler,
		}, &feed)
	}()
	listed := 0
	for listed < o.articles {
		select {
		case err := <-subscribed:
			if err != nil {
				_, _ = meter.Stop(ctx)
				return result{}, fmt.Errorf("subscribe: %w\n%s", err, m.Output())
			}
			subscribed = nil // answered; the count goes on
		case <-time.After(o.poll):
		}
		var page struct {
			Total int `json:"total"`
		}
		if err := m.API.Do(ctx, "GET", "/v1/entries?limit=1", nil, &page); err != nil {
			_, _ = meter.Stop(ctx)
			return result{}, fmt.Errorf("%d of %d entries listed: %w\n%s", listed, o.articles, err, m.Output())
		}
		if listed == 0 && page.Total > 0 {
			r.FirstItems = time.Since(start)
		}
		listed = page.Total
	}
	r.Elapsed = time.Since(start)
	use, err := meter.Stop(ctx)
	if err != nil {
		return result{}, err
	}
	r.Service, r.Postgres = use.Service, use.PG()
	_, r.Backends = cpu.Total()
	r.Site = s.stats()
	r.Crawled = r.Site.LastArticle.Sub(start)
	if r.Site.LastArticle.IsZero() {
		r.Crawled = 0
	}
	time.Sleep(1500 * time.Millisecond) // let the backends report their transactions
	txEnd, err := cpu.Transactions(ctx)
	if err != nil {
		return result{}, err
	}
	r.Transactions = txEnd - txBase
	return r, nil
}
