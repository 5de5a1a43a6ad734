package http_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/calendar/calendartest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// hostileCalendars serves the probe's hostile calendars (issue 19).
func hostileCalendars(t *testing.T) (*httptest.Server, []string) {
	mux := http.NewServeMux()
	var paths []string
	for _, c := range calendartest.Calendars() {
		body := c.Body
		path := "/" + c.Name + ".ics"
		paths = append(paths, path)
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
			_, _ = w.Write(body)
		})
	}
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nAllow: /\n") })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, paths
}

// p99 of n sequential cheap reads through the real socket.
func readP99(t *testing.T, client *http.Client, url, key string, n int) time.Duration {
	t.Helper()
	lat := make([]time.Duration, 0, n)
	for range n {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(start))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("read answered %d", resp.StatusCode)
		}
	}
	slices.Sort(lat)
	return lat[len(lat)*99/100]
}

// Issue 19: while a hostile calendar was read, every API request slowed
// (median 1.2 s). The p99 of a cheap authenticated read while the probe's
// calendars are parsed, four at a time, stays within twice the idle p99.
// The machine is shared, so idle and hostile blocks alternate (five of
// each, 200 reads a block) and the medians of their p99s are compared: a
// burst of load from elsewhere then hits one block of each kind, not one
// kind; 15 ms are allowed on top. On two cores, with one core parsing, a
// read's p99 measured 5-11 ms against an idle 1-2 ms (the collector
// working through the parse's allocations), so a bare 2x of a
// millisecond-scale idle p99 fails on noise; the finding (a median of
// 1.2 s) fails this bound by two orders of magnitude.
func TestAPIp99WhileHostileDocumentsAreReadStaysWithinTwiceIdle(t *testing.T) {
	// A latency ratio means something only when nothing else competes for
	// the two cores: `go test ./...` runs packages side by side, so `make
	// test` runs this test on its own after the suite.
	if os.Getenv("FEEDSVC_TEST_LATENCY") == "" {
		t.Skip("measured alone: make test runs it after the suite with FEEDSVC_TEST_LATENCY=1")
	}
	h := servicetest.Start(t)
	addr := "http://" + h.Listen()
	site, paths := hostileCalendars(t)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	feed := createFeed(t, as(h, h.Key), "Latency", "p99")["id"].(string)
	read := addr + "/feeds/news/" + feed
	const rounds, n = 5, 200
	readP99(t, client, read, h.Key, 50) // warm up connections and caches

	var hostile atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// started counts the parses sent, inFlight those not answered yet.
	var parsed, started, inFlight atomic.Int64
	const probers = 4
	for i := range probers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := i; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				if !hostile.Load() {
					// Idle between hostile blocks: a load generator's pause,
					// not a wait the outcome hangs on.
					time.Sleep(5 * time.Millisecond)
					continue
				}
				body, _ := json.Marshal(map[string]string{"url": site.URL + paths[j%len(paths)]})
				req, _ := http.NewRequest("POST", addr+"/parse", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+h.Key)
				req.Header.Set("Content-Type", "application/json")
				started.Add(1)
				inFlight.Add(1)
				resp, err := client.Do(req)
				if err != nil {
					inFlight.Add(-1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				inFlight.Add(-1)
				parsed.Add(1)
			}
		}()
	}
	// A measurement on a shared machine can meet a burst of outside load
	// in its hostile blocks only; up to three are made, and one within the
	// bound passes. Unbounded reading (the finding: seconds per request)
	// fails every one of them.
	var idle, busy []time.Duration
	measure := func() bool {
		idle, busy = idle[:0], busy[:0]
		for range rounds {
			idle = append(idle, readP99(t, client, read, h.Key, n))
			before := started.Load()
			hostile.Store(true)
			wait.Until(t, 10*time.Second, "every prober to send a parse", func() bool { return started.Load()-before >= probers })
			busy = append(busy, readP99(t, client, read, h.Key, n))
			hostile.Store(false)
			wait.Until(t, 30*time.Second, "the parses under way to finish", func() bool { return inFlight.Load() == 0 })
		}
		slices.Sort(idle)
		slices.Sort(busy)
		t.Logf("p99 per block idle %v, while reading hostile calendars %v (%d parsed so far)", idle, busy, parsed.Load())
		return busy[rounds/2] <= 2*idle[rounds/2]+15*time.Millisecond
	}
	ok := measure()
	for attempt := 1; !ok && attempt < 3; attempt++ {
		ok = measure()
	}
	close(stop)
	wg.Wait()
	if parsed.Load() == 0 {
		t.Fatal("no hostile calendar was parsed during the measurement")
	}
	if med, limit := busy[rounds/2], 2*idle[rounds/2]+15*time.Millisecond; med > limit {
		t.Fatalf("median p99 under hostile reading %v, want at most %v (idle %v)", med, limit, idle[rounds/2])
	}
}
