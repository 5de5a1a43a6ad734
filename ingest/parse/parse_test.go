package parse_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/ingest/parse"
)

// documents are what a site serves besides pages: a calendar, a feed and
// a sitemap, which a parse reads for what they are.
func documents(t *testing.T) *httptest.Server {
	t.Helper()
	start := time.Now().Add(72 * time.Hour).UTC().Format("20060102T150405Z")
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/meetup.ics":
			w.Header().Set("Content-Type", "text/calendar")
			fmt.Fprintf(w, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:meetup-1@test\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:%s\r\nSUMMARY:Go meetup\r\nLOCATION:Café Kreuzberg\\, Berlin\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", start)
		case "/feed.xml":
			w.Header().Set("Content-Type", "application/rss+xml")
			fmt.Fprintf(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>News</title><link>%s/</link><item><title>One</title><link>%s/one</link></item></channel></rss>`, srv.URL, srv.URL)
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/one</loc></url></urlset>`, srv.URL)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newParser() *parse.Parser {
	client := crawl.New(crawl.Options{AllowPrivateNetworks: true})
	return parse.New(client, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func TestADocumentThatIsNoPageIsReadForWhatItIs(t *testing.T) {
	srv := documents(t)
	p := newParser()
	cases := []struct {
		name            string
		path            string
		events          int
		feeds, sitemaps []string
		article         bool
	}{
		{"a calendar gives its events, and its site's sitemaps", "/meetup.ics", 1, []string{}, []string{srv.URL + "/sitemap.xml"}, false},
		{"a feed names itself as a feed", "/feed.xml", 0, []string{srv.URL + "/feed.xml"}, []string{srv.URL + "/sitemap.xml"}, false},
		{"a sitemap names itself as a sitemap", "/sitemap.xml", 0, []string{}, []string{srv.URL + "/sitemap.xml"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := p.Parse(context.Background(), parse.Request{URL: srv.URL + c.path})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Events {
				if e.Instances[0].ID == uuid.Nil || e.Instances[0].Occurrences[0].ID == uuid.Nil {
					t.Fatalf("an event without the ids a crawl gives it: %+v", e)
				}
			}
			if len(res.Events) != c.events || !slices.Equal(res.Feeds, c.feeds) || !slices.Equal(res.Sitemaps, c.sitemaps) || (res.Article != nil) != c.article {
				t.Fatalf("got %+v", res)
			}
		})
	}
}

func TestHTMLOverThePageBoundIsRefusedUnread(t *testing.T) {
	big := "<p>" + strings.Repeat("x", parse.MaxHTMLBytes) + "</p>"
	_, err := newParser().Parse(context.Background(), parse.Request{HTML: &big})
	if !errors.Is(err, parse.ErrTooLarge) {
		t.Fatalf("err %v, want ErrTooLarge", err)
	}
}

// BenchmarkParseAnArticle reads a 60 KB article page given as HTML (no
// network): the crawler's metadata extractor, readability, sanitising,
// and the event extractor finding nothing.
func BenchmarkParseAnArticle(b *testing.B) {
	var body strings.Builder
	body.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A long read | Gazette</title>
<meta name="description" content="What happened."><meta property="og:image" content="https://gazette.example/a.jpg">
<link rel="canonical" href="https://gazette.example/news/a-long-read"></head><body>`)
	for i := range 40 {
		fmt.Fprintf(&body, `<nav><a href="/s%d">Section %d</a></nav><div class="ad">Advertisement</div>`, i, i)
	}
	body.WriteString(`<article><h1>A long read</h1>`)
	for i := range 120 {
		fmt.Fprintf(&body, `<p>Paragraph %d of the story, with <a href="/related/%d">a link</a> and <em>some emphasis</em>, long enough to count as text that readers read.</p>`, i, i)
	}
	body.WriteString(`</article><footer>Copyright</footer></body></html>`)
	page := body.String()
	p := newParser()
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		res, err := p.Parse(context.Background(), parse.Request{HTML: &page})
		if err != nil || res.Article == nil || len(res.Article.Text) < 10_000 {
			b.Fatalf("err %v, article %+v", err, res.Article)
		}
	}
}
