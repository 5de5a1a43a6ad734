package crawl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
)

const homeHTML = `<html><head>
<link rel="alternate" type="application/rss+xml" href="/feed.xml">
<link rel="alternate" type="application/atom+xml" href="/atom.xml">
</head><body>Home</body></html>`

const tinySitemap = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/a-b-c</loc></url></urlset>`

// trustingClient trusts a TLS test server's certificate.
func trustingClient(s *site) *Client {
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return newClient(Options{AllowPrivateNetworks: true}, nil, &tls.Config{RootCAs: pool})
}

func hostOf(s *site) string {
	return strings.TrimPrefix(strings.TrimPrefix(s.URL, "https://"), "http://")
}

func TestDiscoverSitePrefersHTTPS(t *testing.T) {
	s := newTLSSite(t, map[string]http.HandlerFunc{
		"/robots.txt": text("text/plain", "User-agent: *\nAllow: /\nSitemap: /news-sitemap.xml\n"),
		"/":           text("text/html", homeHTML),
	})
	got, err := trustingClient(s).DiscoverSite(context.Background(), hostOf(s))
	if err != nil {
		t.Fatal(err)
	}
	want := Site{
		BaseURL:  s.URL,
		Sitemaps: []string{s.URL + "/news-sitemap.xml"},
		Feeds:    []string{s.URL + "/feed.xml", s.URL + "/atom.xml"},
	}
	assertSite(t, got, want)
	if !strings.HasPrefix(got.BaseURL, "https://") {
		t.Errorf("BaseURL = %q, want https", got.BaseURL)
	}
}

func TestDiscoverSiteFallsBackToHTTP(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/":                  text("text/html", homeHTML),
		"/sitemap.xml":       text("application/xml", tinySitemap),
		"/sitemap_index.xml": text("text/html", "<html>soft 404</html>"),
	})
	got, err := localClient(Options{}).DiscoverSite(context.Background(), hostOf(s))
	if err != nil {
		t.Fatal(err)
	}
	want := Site{
		BaseURL:  s.URL,
		Sitemaps: []string{s.URL + "/sitemap.xml"},
		Feeds:    []string{s.URL + "/feed.xml", s.URL + "/atom.xml"},
	}
	assertSite(t, got, want)
}

func TestDiscoverSiteReportsFailures(t *testing.T) {
	tests := []struct {
		name   string
		routes map[string]http.HandlerFunc
		closed bool
	}{
		{"a site whose robots.txt fails with 5xx cannot be discovered yet", map[string]http.HandlerFunc{"/robots.txt": status(http.StatusBadGateway)}, false},
		{"a site that refuses connections on both schemes is an error", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, tt.routes)
			host := hostOf(s)
			if tt.closed {
				s.Close()
			}
			_, err := localClient(Options{}).DiscoverSite(context.Background(), host)
			if err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestDiscoverSiteRejectsPaths(t *testing.T) {
	_, err := localClient(Options{}).DiscoverSite(context.Background(), "example.com/news")
	if err == nil {
		t.Fatal("want an error for a domain with a path")
	}
	var se *StatusError
	if errors.As(err, &se) {
		t.Fatal("no request should have been made")
	}
}

func assertSite(t *testing.T, got, want Site) {
	t.Helper()
	if got.BaseURL != want.BaseURL || !slices.Equal(got.Sitemaps, want.Sitemaps) || !slices.Equal(got.Feeds, want.Feeds) {
		t.Errorf("site = %+v\nwant %+v", got, want)
	}
}
