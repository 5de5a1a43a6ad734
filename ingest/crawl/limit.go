package crawl

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/sync/semaphore"
)

// hostLimiter hands out at most n concurrent slots per host. Entries are
// dropped when no request holds or waits for them, so crawling many hosts
// does not grow the map forever.
type hostLimiter struct {
	n     int64
	mu    sync.Mutex
	hosts map[string]*hostSlots
}

type hostSlots struct {
	sem   *semaphore.Weighted
	users int
}

func newHostLimiter(n int) *hostLimiter {
	return &hostLimiter{n: int64(n), hosts: map[string]*hostSlots{}}
}

// acquire waits for a slot on host, giving up when ctx is done. The returned
// release func is idempotent.
func (l *hostLimiter) acquire(ctx context.Context, host string) (func(), error) {
	l.mu.Lock()
	s := l.hosts[host]
	if s == nil {
		s = &hostSlots{sem: semaphore.NewWeighted(l.n)}
		l.hosts[host] = s
	}
	s.users++
	l.mu.Unlock()

	if err := s.sem.Acquire(ctx, 1); err != nil {
		l.leave(host, s)
		return nil, fmt.Errorf("wait for a connection slot to %s: %w", host, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.sem.Release(1)
			l.leave(host, s)
		})
	}, nil
}

func (l *hostLimiter) leave(host string, s *hostSlots) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s.users--
	if s.users == 0 {
		delete(l.hosts, host)
	}
}

// politeTransport wraps every request, redirect hops included, in a per-host
// slot, held until the response body is closed, so a request counts as in
// flight while its body is still being read. It wraps safehttp's bounded
// transport, so each request's timeout starts only once the slot is
// granted: time spent queueing behind other requests to a slow host is
// bounded by the caller's context instead.
type politeTransport struct {
	base    http.RoundTripper
	limiter *hostLimiter
}

func (t *politeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	release, err := t.limiter.acquire(req.Context(), hostKey(req.URL.Hostname()))
	if err != nil {
		return nil, err
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		release()
		return nil, err
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
	return resp, nil
}

// hostKey groups requests by host name only: the same server on another
// scheme or port is still the same server to be polite to.
func hostKey(host string) string {
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

type releasingBody struct {
	io.ReadCloser
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}
