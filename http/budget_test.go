package http_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// A process holds at most FEEDSVC_DB_MAX_CONNS connections, all its pools
// together, while the API, the projectors and the webhook sender are all
// busy: every connection names the process in application_name, and
// pg_stat_activity is counted by it throughout the run.
func TestAProcessNeverHoldsMoreConnectionsThanItsBudgetUnderLoad(t *testing.T) {
	t.Parallel()
	const budget = 12
	h := servicetest.Start(t, func(c *config.Config) { c.DBMaxConns = budget })
	prefix := "feedsvc:" + h.Service.Instance + ":"
	if h.Service.Budget.Total != budget || h.Service.Budget.Sender == 0 || h.Service.Budget.Rebuild == 0 {
		t.Fatalf("budget %+v; want %d split among the main pool, the sender, its listener and rebuilds", h.Service.Budget, budget)
	}

	ctx, stop := context.WithCancel(context.Background())
	conn, err := pgx.Connect(ctx, h.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var mu sync.Mutex
	peak, peakPools := 0, ""
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for ctx.Err() == nil {
			var n int
			var pools string
			err := conn.QueryRow(ctx, `SELECT count(*), coalesce(string_agg(DISTINCT substr(application_name, length($1) + 1), ','), '')
				FROM pg_stat_activity WHERE starts_with(application_name, $1)`, prefix).Scan(&n, &pools)
			if err != nil {
				continue
			}
			mu.Lock()
			if n > peak {
				peak, peakPools = n, pools
			}
			mu.Unlock()
			time.Sleep(2 * time.Millisecond) // the sampling period of the peak
		}
	}()

	rc := newHookReceiver(t, http.StatusNoContent)
	org := orgOfKey(t, h, h.Key)
	feed := newEventFeedFor(t, h, org)
	c := as(h, h.Key)
	wantDataObject(t, c.do(t, "POST", "/webhooks", map[string]any{"url": rc.URL + "/in", "events": []string{"event.item_added"}, "eventFeedIds": []string{feed}}), http.StatusCreated)
	feedID := uuid.MustParse(feed)
	const workers, rounds = 24, 10
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				c.do(t, "POST", "/feeds/news", map[string]any{"name": fmt.Sprintf("n%d-%d", w, i), "description": "d"}).MustStatus(t, http.StatusCreated)
				c.do(t, "GET", "/feeds/news", nil).MustStatus(t, http.StatusOK)
				addEventItem(t, h, org, feedID, fmt.Sprintf("Event %d-%d", w, i))
			}
		}()
	}
	wg.Wait()
	wait.Within(60*time.Second, func() bool { return rc.count() >= workers*rounds })
	stop()
	<-sampled
	if got := rc.count(); got < workers*rounds {
		t.Fatalf("%d of %d deliveries arrived", got, workers*rounds)
	}
	mu.Lock()
	defer mu.Unlock()
	if peak > budget {
		t.Fatalf("the process held %d connections at once (pools %s); its budget is %d", peak, peakPools, budget)
	}
	if peak < 3 {
		t.Fatalf("at most %d connections named %q were seen: the count is not measuring the process", peak, prefix)
	}
	t.Logf("peak %d connections of a budget of %d (pools %s)", peak, budget, peakPools)
}
