package extract

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
	"time"
)

const urlsetXML = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc> https://example.com/news/storm-hits-coast </loc>
    <lastmod>2024-05-03T09:00:00+01:00</lastmod>
    <news:news>
      <news:publication><news:name>Example</news:name><news:language>en</news:language></news:publication>
      <news:publication_date>2024-05-03T08:15:30Z</news:publication_date>
      <news:title>Storm &amp; flood hit the coast</news:title>
    </news:news>
    <image:image><image:loc>https://example.com/img/storm.jpg</image:loc></image:image>
  </url>
  <url><loc>https://example.com/about-the-team</loc></url>
  <url><loc></loc></url>
</urlset>`

const indexXML = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://example.com/sitemap-2024-05.xml</loc><lastmod>2024-05-03</lastmod></sitemap>
  <sitemap><loc>https://example.com/sitemap-2024-04.xml.gz</loc></sitemap>
</sitemapindex>`

func TestParseSitemap(t *testing.T) {
	tests := []struct {
		name string
		body []byte
		want Sitemap
	}{
		{
			name: "news urlset with image and namespaces yields dates, title and image",
			body: []byte(urlsetXML),
			want: Sitemap{URLs: []SitemapURL{
				{
					URL:         "https://example.com/news/storm-hits-coast",
					LastMod:     time.Date(2024, 5, 3, 8, 0, 0, 0, time.UTC),
					PublishedAt: time.Date(2024, 5, 3, 8, 15, 30, 0, time.UTC),
					Title:       "Storm & flood hit the coast",
					ImageURL:    "https://example.com/img/storm.jpg",
				},
				{URL: "https://example.com/about-the-team"},
			}},
		},
		{
			name: "sitemap index lists children with lastmod",
			body: []byte(indexXML),
			want: Sitemap{Index: true, Children: []SitemapRef{
				{URL: "https://example.com/sitemap-2024-05.xml", LastMod: time.Date(2024, 5, 3, 0, 0, 0, 0, time.UTC)},
				{URL: "https://example.com/sitemap-2024-04.xml.gz"},
			}},
		},
		{
			name: "gzipped sitemap is detected by its magic bytes",
			body: gzipBytes(t, []byte(indexXML)),
			want: Sitemap{Index: true, Children: []SitemapRef{
				{URL: "https://example.com/sitemap-2024-05.xml", LastMod: time.Date(2024, 5, 3, 0, 0, 0, 0, time.UTC)},
				{URL: "https://example.com/sitemap-2024-04.xml.gz"},
			}},
		},
		{
			name: "sitemap without namespace declarations and with a BOM still parses",
			body: []byte("\xef\xbb\xbf<urlset><url><loc>https://example.com/a-b-c</loc><lastmod>2024-05-03</lastmod></url></urlset>"),
			want: Sitemap{URLs: []SitemapURL{{URL: "https://example.com/a-b-c", LastMod: time.Date(2024, 5, 3, 0, 0, 0, 0, time.UTC)}}},
		},
		{
			name: "plain-text sitemap lists one URL per line",
			body: []byte("https://example.com/one\n\nhttps://example.com/two\n"),
			want: Sitemap{URLs: []SitemapURL{{URL: "https://example.com/one"}, {URL: "https://example.com/two"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSitemap(tt.body)
			if err != nil {
				t.Fatalf("ParseSitemap: %v", err)
			}
			assertSitemap(t, got, tt.want)
		})
	}
}

func assertSitemap(t *testing.T, got, want Sitemap) {
	t.Helper()
	if got.Index != want.Index || len(got.URLs) != len(want.URLs) || len(got.Children) != len(want.Children) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want.URLs {
		g, w := got.URLs[i], want.URLs[i]
		if g.URL != w.URL || !g.LastMod.Equal(w.LastMod) || !g.PublishedAt.Equal(w.PublishedAt) || g.Title != w.Title || g.ImageURL != w.ImageURL {
			t.Errorf("URLs[%d] = %+v, want %+v", i, g, w)
		}
	}
	for i := range want.Children {
		g, w := got.Children[i], want.Children[i]
		if g.URL != w.URL || !g.LastMod.Equal(w.LastMod) {
			t.Errorf("Children[%d] = %+v, want %+v", i, g, w)
		}
	}
}

func TestParseSitemapRejects(t *testing.T) {
	tests := []struct {
		name string
		body []byte
		want error
	}{
		{"an RSS feed is not a sitemap", []byte(`<?xml version="1.0"?><rss version="2.0"><channel></channel></rss>`), ErrNotSitemap},
		{"an HTML soft-404 page is not a sitemap", []byte(`<!DOCTYPE html><html><body>Not found</body></html>`), ErrNotSitemap},
		{"a text page that is not a URL list is not a sitemap", []byte("Not found\n"), ErrNotSitemap},
		{"an empty body is not a sitemap", []byte("  \n"), ErrNotSitemap},
		{"a gzip bomb inflating past the bound is refused", gzipZeros(t, testInflateLimit+1), ErrSitemapTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseSitemap(tt.body, testInflateLimit)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// testInflateLimit stands in for MaxSitemapBytes so the bomb stays small.
const testInflateLimit = 1 << 20

func TestGzipWithinTheBoundIsAccepted(t *testing.T) {
	body := urlsetXML + strings.Repeat(" ", testInflateLimit-len(urlsetXML))
	sm, err := parseSitemap(gzipBytes(t, []byte(body)), testInflateLimit)
	if err != nil || len(sm.URLs) != 2 {
		t.Fatalf("sitemap of exactly the bound: %d URLs, err %v", len(sm.URLs), err)
	}
}

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gzipZeros compresses n zero bytes without holding them in memory.
func gzipZeros(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := zw.Write(chunk[:k]); err != nil {
			t.Fatal(err)
		}
		n -= k
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
