package crawl

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

func TestPerHostConcurrency(t *testing.T) {
	tests := []struct {
		name    string
		perHost int
	}{
		{"one request at a time when PerHost is 1", 1},
		{"never more than two in flight by default", 0},
		{"never more than three in flight when PerHost is 3", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inFlight, maxInFlight atomic.Int32
			s := newSite(t, map[string]http.HandlerFunc{
				"/": func(w http.ResponseWriter, _ *http.Request) {
					n := inFlight.Add(1)
					defer inFlight.Add(-1)
					for {
						m := maxInFlight.Load()
						if n <= m || maxInFlight.CompareAndSwap(m, n) {
							break
						}
					}
					time.Sleep(30 * time.Millisecond) // a slow answer, so requests overlap
				},
			})
			c := localClient(Options{PerHost: tt.perHost})
			want := int32(c.opts.PerHost)
			var wg sync.WaitGroup
			for i := 0; i < 4*int(want)+2; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := c.Get(context.Background(), s.URL+"/", document.Validators{}); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if got := maxInFlight.Load(); got != want {
				t.Errorf("max in flight = %d, want exactly %d (never more, and the limit should be reached)", got, want)
			}
		})
	}
}

func TestWaitingForASlotRespectsTheContext(t *testing.T) {
	release := make(chan struct{})
	s := newSite(t, map[string]http.HandlerFunc{
		"/hold": func(w http.ResponseWriter, _ *http.Request) { <-release },
	})
	defer close(release)
	c := localClient(Options{PerHost: 1})
	started := make(chan struct{})
	go func() {
		close(started)
		_, _ = c.Get(context.Background(), s.URL+"/hold", document.Validators{})
	}()
	<-started
	wait.Until(t, 2*time.Second, "the held request to reach the server", func() bool { return s.hitCount("/hold") == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Get(ctx, s.URL+"/hold", document.Validators{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if n := s.hitCount("/hold"); n != 1 {
		t.Errorf("server saw %d requests, want 1: the second must wait for the slot", n)
	}
}

func TestHostLimiterForgetsIdleHosts(t *testing.T) {
	l := newHostLimiter(2)
	release, err := l.acquire(context.Background(), "example.com")
	if err != nil {
		t.Fatal(err)
	}
	release()
	release() // idempotent
	if len(l.hosts) != 0 {
		t.Errorf("limiter still tracks %d hosts", len(l.hosts))
	}
}
