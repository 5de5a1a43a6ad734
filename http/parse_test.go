package http_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// articlePage is a news article as a CMS serves it: metadata in meta tags,
// navigation and a footer around the text, a script inside it, a feed
// announced in the head.
const articlePage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>City council approves new bike lanes | Springfield Gazette</title>
<meta name="description" content="The council voted 7-2 to build 12 km of protected lanes.">
<meta property="og:site_name" content="Springfield Gazette">
<meta property="og:image" content="/img/lanes.jpg">
<meta name="author" content="Jane Reporter">
<meta property="article:published_time" content="2026-11-20T09:30:00Z">
<link rel="canonical" href="/news/bike-lanes">
<link rel="alternate" type="application/rss+xml" title="Gazette" href="/feed.xml">
</head><body>
<nav><a href="/">Home</a> <a href="/sports">Sports</a> <a href="/weather">Weather</a></nav>
<article><h1>City council approves new bike lanes</h1>
<p>The Springfield city council on Thursday approved a plan to build twelve kilometres of protected bike lanes across the city centre, after a debate that lasted more than four hours.</p>
<p>Supporters said the lanes would make cycling safer for children and commuters alike, while opponents worried about the loss of parking spaces on Main Street.<script>alert("x")</script></p>
<p onclick="steal()">Construction is expected to begin in the spring and to last about eighteen months, the mayor said after the vote.</p>
</article>
<footer>Copyright 2026 Springfield Gazette</footer>
</body></html>`

// eventPage is a venue's page for one concert, with schema.org JSON-LD.
func eventPage(start time.Time) string {
	return fmt.Sprintf(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Trio Blau live | Jazzkeller</title>
<script type="application/ld+json">
{"@context":"https://schema.org","@type":"MusicEvent","name":"Trio Blau live",
 "description":"<p>Swing and bebop.</p><script>alert(1)<\/script>",
 "startDate":%q,"endDate":%q,"eventStatus":"https://schema.org/EventScheduled",
 "location":{"@type":"Place","name":"Jazzkeller","address":{"@type":"PostalAddress","streetAddress":"Hauptstraße 12","addressLocality":"Berlin","addressCountry":"DE"}},
 "organizer":{"@type":"Organization","name":"Berliner Jazzfreunde"}}
</script></head>
<body><h1>Trio Blau live</h1><p>Doors at eight.</p></body></html>`,
		start.Format(time.RFC3339), start.Add(3*time.Hour).Format(time.RFC3339))
}

// localSite is a local website: robots.txt (with a sitemap and a disallowed
// path), a sitemap, an article, an event page, a page with nothing on it,
// an image and a missing page.
func localSite(t *testing.T, concert time.Time) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		html := func(body string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nDisallow: /private/\nSitemap: %s/sitemap.xml\n", srv.URL)
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/news/bike-lanes</loc></url></urlset>`, srv.URL)
		case "/news/bike-lanes", "/private/bike-lanes":
			html(articlePage)
		case "/events/trio-blau":
			html(eventPage(concert))
		case "/blank":
			html(`<!doctype html><html><head></head><body><div></div></body></html>`)
		case "/lanes.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestParseReadsAnArticlePage(t *testing.T) {
	h := servicetest.Start(t)
	srv := localSite(t, time.Now().Add(48*time.Hour))
	r := h.Do("POST", "/parse", map[string]string{"url": srv.URL + "/news/bike-lanes"}).MustStatus(t, 200)
	data := r.Data()
	a, _ := data["article"].(map[string]any)
	checks := []struct {
		name string
		ok   bool
	}{
		{"the page URL is where it was read", data["url"] == srv.URL+"/news/bike-lanes"},
		{"the title is the headline without the site name", a["title"] == "City council approves new bike lanes"},
		{"the description is the page's", a["description"] == "The council voted 7-2 to build 12 km of protected lanes."},
		{"the canonical URL is resolved", a["url"] == srv.URL+"/news/bike-lanes"},
		{"the image is resolved", a["imageUrl"] == srv.URL+"/img/lanes.jpg"},
		{"the published time is kept to the millisecond", a["publishedAt"] == "2026-11-20T09:30:00.000Z"},
		{"the author is named", a["author"] == "Jane Reporter"},
		{"the site is named", a["siteName"] == "Springfield Gazette"},
		{"the language is the page's", a["language"] == "en"},
		{"the text holds the article", strings.Contains(fmt.Sprint(a["text"]), "twelve kilometres of protected bike lanes")},
		{"the text leaves out the navigation and footer", !strings.Contains(fmt.Sprint(a["text"]), "Weather") && !strings.Contains(fmt.Sprint(a["text"]), "Copyright")},
		{"the HTML keeps the paragraphs", strings.Contains(fmt.Sprint(a["html"]), "<p>")},
		{"the HTML has no script or handler", !strings.Contains(fmt.Sprint(a["html"]), "<script") && !strings.Contains(fmt.Sprint(a["html"]), "onclick") && !strings.Contains(fmt.Sprint(a["html"]), "alert")},
		{"the announced feed is listed", slices.Equal(strings.Fields(fmt.Sprint(data["feeds"])), []string{"[" + srv.URL + "/feed.xml]"})},
		{"the site's sitemap is listed", slices.Equal(strings.Fields(fmt.Sprint(data["sitemaps"])), []string{"[" + srv.URL + "/sitemap.xml]"})},
		{"an article page holds no events", fmt.Sprint(data["events"]) == "[]"},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !c.ok {
				t.Fatalf("answer: %s", r.Raw)
			}
		})
	}
}

func TestParseReadsTheEventsOfAPageInTheEventItemShape(t *testing.T) {
	h := servicetest.Start(t)
	concert := time.Now().Add(48 * time.Hour).Truncate(time.Hour).UTC()
	srv := localSite(t, concert)
	r := h.Do("POST", "/parse", map[string]string{"url": srv.URL + "/events/trio-blau"}).MustStatus(t, 200)
	events, _ := r.Data()["events"].([]any)
	if len(events) != 1 {
		t.Fatalf("want one event in %s", r.Raw)
	}
	e := events[0].(map[string]any)
	occ := occurrenceBlock(e)
	next, _ := occ["nextOccurrence"].(map[string]any)
	location, _ := e["location"].(map[string]any)
	source, _ := e["source"].(map[string]any)
	checks := []struct {
		name string
		ok   bool
	}{
		{"the item is under its event id", e["id"] != nil && e["id"] == e["eventId"]},
		{"the title is the event's", e["title"] == "Trio Blau live"},
		{"the description is safe HTML", strings.Contains(fmt.Sprint(e["description"]), "<p>Swing and bebop.</p>") && !strings.Contains(fmt.Sprint(e["description"]), "script")},
		{"the next occurrence is the concert", next["startDateTime"] == concert.Format("2006-01-02T15:04:05.000Z")},
		{"the occurrence has the id a crawl gives it", next["id"] != nil && next["id"] != "00000000-0000-0000-0000-000000000000"},
		{"it is one upcoming occurrence", num(occ["totalOccurrences"]) == 1 && num(occ["upcomingOccurrences"]) == 1},
		{"the venue is named", location["displayAddress"] != nil},
		{"the source block names the page", source["type"] == "site"},
		{"arrays are present", e["urls"] != nil && e["geoLocations"] != nil && e["supportingImages"] != nil},
		{"no relevance is scored without a feed", e["relevanceScore"] == nil},
		{"addedToFeedAt is when the page was read", e["addedToFeedAt"] != nil},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !c.ok {
				t.Fatalf("event: %v", e)
			}
		})
	}
}

func TestParseReadsHTMLGivenWithOrWithoutItsURL(t *testing.T) {
	h := servicetest.Start(t)
	srv := localSite(t, time.Now().Add(48*time.Hour))
	cases := []struct {
		name, url, wantURL, wantCanonical string
		wantSitemaps                      bool
	}{
		{"with its url the page is read there and the site's sitemaps are looked up", srv.URL + "/news/given", srv.URL + "/news/given", srv.URL + "/news/bike-lanes", true},
		{"without a url the page has no url and no canonical one, and no sitemaps are looked up", "", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := map[string]string{"html": articlePage}
			if c.url != "" {
				body["url"] = c.url
			}
			r := h.Do("POST", "/parse", body).MustStatus(t, 200)
			a := r.Data()["article"].(map[string]any)
			if a["title"] != "City council approves new bike lanes" || !strings.Contains(fmt.Sprint(a["text"]), "twelve kilometres") {
				t.Fatalf("article %v", a)
			}
			if got, _ := r.Data()["url"].(string); got != c.wantURL {
				t.Fatalf("url %q, want %q", got, c.wantURL)
			}
			if got, _ := a["url"].(string); got != c.wantCanonical {
				t.Fatalf("canonical %q, want %q", got, c.wantCanonical)
			}
			if got := r.Data()["sitemaps"].([]any); (len(got) > 0) != c.wantSitemaps {
				t.Fatalf("sitemaps %v", got)
			}
		})
	}
	t.Run("without a url a page declaring an absolute canonical is read there", func(t *testing.T) {
		page := strings.Replace(articlePage, `href="/news/bike-lanes"`, `href="https://gazette.example/news/bike-lanes"`, 1)
		r := h.Do("POST", "/parse", map[string]string{"html": page}).MustStatus(t, 200)
		a := r.Data()["article"].(map[string]any)
		if r.Data()["url"] != "https://gazette.example/news/bike-lanes" || a["imageUrl"] != "https://gazette.example/img/lanes.jpg" {
			t.Fatalf("answer %s", r.Raw)
		}
	})
}

func TestParseRefusesBadInputWithAClearAnswer(t *testing.T) {
	h := servicetest.Start(t)
	srv := localSite(t, time.Now().Add(48*time.Hour))
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"an empty body", map[string]any{}, 400, "VALIDATION_ERROR", "url"},
		{"a url that is not http", map[string]any{"url": "ftp://files.example/a"}, 400, "VALIDATION_ERROR", "url"},
		{"a relative url", map[string]any{"url": "/news/a"}, 400, "VALIDATION_ERROR", "url"},
		{"a url that is a number", map[string]any{"url": 7}, 400, "VALIDATION_ERROR", "url"},
		{"empty html", map[string]any{"html": "  "}, 400, "VALIDATION_ERROR", "html"},
		{"html that is an object", map[string]any{"html": map[string]any{}}, 400, "VALIDATION_ERROR", "html"},
		{"html with a url that is no url", map[string]any{"html": articlePage, "url": "not a url"}, 400, "VALIDATION_ERROR", "url"},
		{"a page robots.txt disallows", map[string]any{"url": srv.URL + "/private/bike-lanes"}, 502, "FETCH_FAILED", "url"},
		{"a page that is not there", map[string]any{"url": srv.URL + "/gone"}, 502, "FETCH_FAILED", "url"},
		{"a server that does not answer", map[string]any{"url": "http://127.0.0.1:1/news"}, 502, "FETCH_FAILED", "url"},
		{"a page with nothing on it", map[string]any{"url": srv.URL + "/blank"}, 422, "NOTHING_EXTRACTED", ""},
		{"an image", map[string]any{"url": srv.URL + "/lanes.png"}, 422, "NOTHING_EXTRACTED", ""},
		{"html with nothing in it", map[string]any{"html": "<p></p>"}, 422, "NOTHING_EXTRACTED", ""},
	}
	for _, c := range cases {
		t.Run(c.name+" answers "+fmt.Sprint(c.status), func(t *testing.T) {
			r := h.Do("POST", "/parse", c.body).MustStatus(t, c.status)
			e := r.Body["error"].(map[string]any)
			details, _ := e["details"].(map[string]any)
			if e["code"] != c.code || (c.field != "" && details["field"] != c.field) {
				t.Fatalf("body %s, want %s naming %q", r.Raw, c.code, c.field)
			}
			if strings.Contains(r.Raw, "/private/") || strings.Contains(r.Raw, "/gone") || strings.Contains(r.Raw, "127.0.0.1") || strings.Contains(r.Raw, "ftp:") {
				t.Fatalf("the answer quotes the request: %s", r.Raw)
			}
		})
	}
	t.Run("a 502 says why", func(t *testing.T) {
		r := h.Do("POST", "/parse", map[string]any{"url": srv.URL + "/gone"}).MustStatus(t, 502)
		if !strings.Contains(r.Raw, "HTTP 404") {
			t.Fatalf("no reason in %s", r.Raw)
		}
		r = h.Do("POST", "/parse", map[string]any{"url": srv.URL + "/private/bike-lanes"}).MustStatus(t, 502)
		if !strings.Contains(r.Raw, "robots.txt") {
			t.Fatalf("no reason in %s", r.Raw)
		}
	})
}

func TestParseNeedsTheParseScope(t *testing.T) {
	h := servicetest.Start(t)
	body := map[string]string{"html": articlePage}
	without := h.NewKey("acme", auth.ScopeNews, auth.ScopeEvents, auth.ScopeItems)
	r := h.DoWith("POST", "/parse", body, map[string]string{"Authorization": "Bearer " + without}).MustStatus(t, 403)
	if r.Body["error"].(map[string]any)["code"] != "PERMISSION_DENIED" {
		t.Fatalf("body %s", r.Raw)
	}
	only := h.NewKey("acme", auth.ScopeParse)
	h.DoWith("POST", "/parse", body, map[string]string{"Authorization": "Bearer " + only}).MustStatus(t, 200)
	h.DoWith("POST", "/parse", body, nil).MustStatus(t, 401)
}

func TestParseNeverReachesAPrivateAddressUnlessAllowed(t *testing.T) {
	h := servicetest.Start(t, func(c *config.Config) { c.AllowPrivateNetworks = false })
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, articlePage)
	}))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	cases := []struct {
		name, url string
		status    int
		code      string
	}{
		{"an address literal is refused before anything is sent", srv.URL + "/news", 400, "VALIDATION_ERROR"},
		{"an address spelt as a number is refused too", "http://2130706433:" + port + "/news", 400, "VALIDATION_ERROR"},
		{"a name that resolves to a private address is refused when dialled", "http://localhost:" + port + "/news", 502, "FETCH_FAILED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.Do("POST", "/parse", map[string]string{"url": c.url}).MustStatus(t, c.status)
			if r.Body["error"].(map[string]any)["code"] != c.code {
				t.Fatalf("body %s", r.Raw)
			}
			if c.status == 502 && !strings.Contains(r.Raw, "not a public") {
				t.Fatalf("the refusal does not say why: %s", r.Raw)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the private server was reached %d times", n)
	}
}
