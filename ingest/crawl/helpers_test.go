package crawl

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// site is a local test server with per-path handlers that counts hits, so
// tests can prove a URL was (or was never) requested.
type site struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newSite(t *testing.T, routes map[string]http.HandlerFunc) *site {
	t.Helper()
	s := &site{hits: map[string]int{}}
	s.Server = httptest.NewServer(s.handler(routes))
	t.Cleanup(s.Close)
	return s
}

func newTLSSite(t *testing.T, routes map[string]http.HandlerFunc) *site {
	t.Helper()
	s := &site{hits: map[string]int{}}
	s.Server = httptest.NewTLSServer(s.handler(routes))
	t.Cleanup(s.Close)
	return s
}

func (s *site) handler(routes map[string]http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		h, ok := routes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	})
}

func (s *site) hitCount(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// text serves body with a content type.
func text(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(body))
	}
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

func redirect(to string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) }
}

// localClient is a client for httptest servers, which listen on loopback
// and so need the SSRF guard off.
func localClient(opts Options) *Client {
	opts.AllowPrivateNetworks = true
	return New(opts)
}
