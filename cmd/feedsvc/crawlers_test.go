package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/testkit/testdb"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// Issue 23: the crawler role in several `feedsvc serve` processes on one
// Postgres. Each is a child process (startServe) with the crawler role
// alone, so that one can be killed with SIGKILL: no lease is handed back,
// no release runs.

// startCrawler starts a `feedsvc serve` process with the crawler role
// alone.
func startCrawler(t *testing.T, env []string) *process {
	t.Helper()
	return startServe(t, append([]string{"FEEDSVC_ROLES=crawler", "FEEDSVC_LOG_LEVEL=error"}, env...))
}

// slowFeeds are n local sites, each with robots.txt and an RSS feed that
// takes delay to answer (so that polls overlap and a killed process
// holds leases), recording when each feed request arrived.
type slowFeeds struct {
	*httptest.Server
	delay time.Duration
	mu    sync.Mutex
	hits  map[int][]time.Time
}

func newSlowFeeds(t *testing.T, delay time.Duration) *slowFeeds {
	s := &slowFeeds{delay: delay, hits: map[int][]time.Time{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *slowFeeds) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
		return
	}
	var n int
	if _, err := fmt.Sscanf(r.URL.Path, "/site/%d/feed.xml", &n); err != nil {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.hits[n] = append(s.hits[n], time.Now())
	s.mu.Unlock()
	select {
	case <-time.After(s.delay):
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "application/rss+xml")
	_, _ = fmt.Fprintf(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>Site %d</title><link>%s/</link></channel></rss>`, n, s.URL)
}

func (s *slowFeeds) snapshot() map[int][]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int][]time.Time{}
	for k, v := range s.hits {
		out[k] = append([]time.Time(nil), v...)
	}
	return out
}

func TestSeveralCrawlerProcessesShareTheSourcesAndTakeOverThoseOfOneKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four processes for a minute")
	}
	const (
		sources  = 24
		interval = 4 * time.Second
		lease    = 3 * time.Second
		delay    = 1500 * time.Millisecond
	)
	t.Setenv("FEEDSVC_LOG_LEVEL", "error")
	t.Setenv("FEEDSVC_ROLES", "api,projections")
	t.Setenv("FEEDSVC_ALLOW_PRIVATE_NETWORKS", "true")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("FEEDSVC_ADDR", addr)
	in := &installation{url: testdb.NewURL(t)}
	if out, err := in.run(t, "migrate"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	out, err := in.run(t, "keys", "create", "--org", "acme")
	if err != nil {
		t.Fatalf("keys create: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := strings.TrimSpace(lines[len(lines)-1])
	in.serve(t)
	api := apiClient{t: t, base: "http://" + addr, key: key}
	api.waitReady()

	site := newSlowFeeds(t, delay)
	feed := api.post("/feeds/news", map[string]any{"name": "many", "description": "many sources"})["id"].(string)
	record := api.post("/sources", map[string]any{"sourceType": "site", "domain": strings.TrimPrefix(site.URL, "http://")})["id"].(string)
	for i := range sources {
		api.post("/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "sitemap",
			"url": fmt.Sprintf("%s/site/%d/feed.xml", site.URL, i), "siteId": record})
	}

	env := []string{"DATABASE_URL=" + in.url, "FEEDSVC_ALLOW_PRIVATE_NETWORKS=true",
		"FEEDSVC_POLL_INTERVAL=" + interval.String(), "FEEDSVC_MAX_POLL_INTERVAL=" + interval.String(),
		"FEEDSVC_CRAWL_LEASE=" + lease.String(), "FEEDSVC_CRAWL_CONCURRENCY=4"}
	crawlers := []*process{startCrawler(t, env), startCrawler(t, env)}
	db, err := database.Open(context.Background(), in.url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Who held each lease, sampled: every process should get a share.
	owners := map[string]int{}
	var ownersMu sync.Mutex
	sample := func(ctx context.Context) {
		for ctx.Err() == nil {
			var held []string
			_ = db.Bun.NewRaw(`SELECT lease_owner FROM crawl_state WHERE lease_owner IS NOT NULL`).Scan(ctx, &held)
			ownersMu.Lock()
			for _, o := range held {
				owners[o]++
			}
			ownersMu.Unlock()
			time.Sleep(100 * time.Millisecond) // the sampling period
		}
	}
	sampleCtx, stopSampling := context.WithCancel(context.Background())
	defer stopSampling()
	go sample(sampleCtx)

	// The crawlers run for some intervals while the sampler watches: a
	// span of time observed, not a condition awaited.
	time.Sleep(4 * interval)
	crawlers = append(crawlers, startCrawler(t, env))
	time.Sleep(4 * interval)

	// Kill the process holding the most leases, mid-poll.
	var victim *process
	var victimSources []string
	wait.Until(t, 30*time.Second, "a crawler holding leases", func() bool {
		for _, c := range crawlers {
			var held []string
			if err := db.Bun.NewRaw(`SELECT source_id::text FROM crawl_state WHERE lease_owner LIKE ? AND leased_until > now()`,
				c.owner()+"%").Scan(context.Background(), &held); err != nil {
				t.Fatal(err)
			}
			if len(held) > len(victimSources) {
				victim, victimSources = c, held
			}
		}
		return victim != nil
	})
	victim.kill()
	killedAt := time.Now()
	t.Logf("killed crawler %d holding %d sources", victim.cmd.Process.Pid, len(victimSources))

	t.Run("a killed process's sources are taken over within one lease period", func(t *testing.T) {
		// Its leases end at most one lease after the kill (renewed each
		// third of it); another process claims them on its next tick (1 s).
		deadline := killedAt.Add(lease + time.Second + 2*time.Second)
		for _, id := range victimSources {
			taken := wait.Within(time.Until(deadline.Add(30*time.Second)), func() bool {
				var owner string
				var crawled time.Time
				err := db.Bun.NewRaw(`SELECT coalesce(lease_owner, ''), coalesce(last_crawl_at, 'epoch') FROM crawl_state WHERE source_id = ?`, id).
					Scan(context.Background(), &owner, &crawled)
				if err != nil {
					t.Fatal(err)
				}
				return (owner != "" && !strings.HasPrefix(owner, victim.owner())) || crawled.After(killedAt)
			})
			if !taken {
				t.Errorf("source %s was never taken over", id)
			} else if at := time.Now(); at.After(deadline) {
				t.Errorf("source %s was taken over %v after the kill, want within %v", id, at.Sub(killedAt).Round(100*time.Millisecond), lease)
			}
		}
	})
	time.Sleep(2 * interval) // two more intervals observed after the takeover
	stopSampling()

	t.Run("no source is polled twice in one interval", func(t *testing.T) {
		for n, hits := range site.snapshot() {
			for i := 1; i < len(hits); i++ {
				gap := hits[i].Sub(hits[i-1])
				// A poll of the killed process that never finished is retried
				// once its lease expires; any other gap is the poll's own
				// length plus the interval (-10% jitter).
				if hits[i-1].Before(killedAt) && hits[i].After(killedAt) {
					continue
				}
				if gap < delay+interval*9/10-200*time.Millisecond {
					t.Errorf("site %d was polled twice %v apart, want at least %v", n, gap.Round(time.Millisecond), delay+interval*9/10)
				}
			}
		}
	})
	t.Run("every source keeps being polled and every process took a share", func(t *testing.T) {
		// The machine is shared and loaded, so how many polls fit in the
		// run varies; every source polled again after the kill is what
		// matters.
		for n := range sources {
			hits := site.snapshot()[n]
			if len(hits) < 2 || !hits[len(hits)-1].After(killedAt) {
				t.Errorf("site %d was polled %d times, want polls before and after the kill", n, len(hits))
			}
		}
		ownersMu.Lock()
		defer ownersMu.Unlock()
		for _, c := range crawlers {
			var n int
			for o, k := range owners {
				if strings.HasPrefix(o, c.owner()) {
					n += k
				}
			}
			if n == 0 {
				t.Errorf("crawler %d never held a lease", c.cmd.Process.Pid)
			}
		}
	})
}
