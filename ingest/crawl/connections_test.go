package crawl

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/document"
)

// An unchanged poll asks a site for its sitemap and then its feed; both
// answer 304 with no body, so the second request goes on the first one's
// connection: one TCP connection a poll, not one a request.
func TestThe304sOfOnePollShareOneConnection(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.WriteHeader(http.StatusNotModified)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := localClient(Options{})
	store := &memStore{m: map[string]document.Validators{
		srv.URL + "/sitemap.xml": {ETag: `"v1"`}, srv.URL + "/feed.xml": {ETag: `"v1"`},
	}}
	ctx := context.Background()
	if _, err := c.SitemapCandidates(ctx, srv.URL+"/sitemap.xml", time.Now().Add(-time.Hour), store); err != nil {
		t.Fatal(err)
	}
	if _, err := c.FeedCandidates(ctx, srv.URL+"/feed.xml", store); err != nil {
		t.Fatal(err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("the poll opened %d connections, want 1", n)
	}
}
