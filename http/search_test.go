package http_test

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// searchSite is a website of articles in one language (none when lang is
// empty) and perhaps events, listed in its sitemap; Publish adds an
// article as the site goes on.
type searchSite struct {
	*httptest.Server
	lang string
	// bodies are the running text of the pages with these titles, past
	// their description.
	bodies map[string]string
	mu     sync.Mutex
	pages  []searchPage
	events []searchEvent
}

type searchPage struct{ title, description string }

type searchEvent struct {
	slug, name, venue, address, organizer string
	start                                 time.Time
}

func newSearchSite(t *testing.T, lang string, pages ...searchPage) *searchSite {
	t.Helper()
	s := &searchSite{lang: lang, pages: pages}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *searchSite) domain() string { return strings.TrimPrefix(s.URL, "http://") }

// publish adds an article to the site.
func (s *searchSite) publish(p searchPage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages = append(s.pages, p)
}

func (s *searchSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	pages, events := slices.Clone(s.pages), slices.Clone(s.events)
	s.mu.Unlock()
	now := time.Now().UTC()
	switch p := r.URL.Path; {
	case p == "/robots.txt":
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	case p == "/sitemap.xml":
		w.Header().Set("Content-Type", "application/xml")
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for i := range pages {
			fmt.Fprintf(&b, "<url><loc>%s/news/%d</loc><lastmod>%s</lastmod></url>\n", s.URL, i, now.Format("2006-01-02"))
		}
		for _, e := range events {
			fmt.Fprintf(&b, "<url><loc>%s/events/%s</loc><lastmod>%s</lastmod></url>\n", s.URL, e.slug, now.Format("2006-01-02"))
		}
		b.WriteString("</urlset>")
		fmt.Fprint(w, b.String())
	case strings.HasPrefix(p, "/news/"):
		var i int
		if _, err := fmt.Sscanf(p, "/news/%d", &i); err != nil || i < 0 || i >= len(pages) {
			http.NotFound(w, r)
			return
		}
		lang := ""
		if s.lang != "" {
			lang = ` lang="` + s.lang + `"`
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html%s><head><title>%s</title><meta name="description" content="%s">
<meta property="article:published_time" content="%s"></head><body><article><h1>%[2]s</h1><p>%[3]s</p><p>%[5]s</p></article></body></html>`,
			lang, html.EscapeString(pages[i].title), html.EscapeString(pages[i].description), now.Add(-time.Hour).Format(time.RFC3339),
			html.EscapeString(s.bodies[pages[i].title]))
	case strings.HasPrefix(p, "/events/"):
		i := slices.IndexFunc(events, func(e searchEvent) bool { return "/events/"+e.slug == p })
		if i < 0 {
			http.NotFound(w, r)
			return
		}
		e := events[i]
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>%[1]s</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Event","name":%[1]q,"startDate":%[2]q,"endDate":%[3]q,
"location":{"@type":"Place","name":%[4]q,"address":%[5]q},"organizer":{"@type":"Organization","name":%[6]q}}</script>
</head><body><h1>%[1]s</h1></body></html>`, e.name, e.start.Format(time.RFC3339), e.start.Add(2*time.Hour).Format(time.RFC3339), e.venue, e.address, e.organizer)
	default:
		http.NotFound(w, r)
	}
}

// titlesOf are the titles of a list's items, in the list's order (the
// legacy news shape holds them in data).
func titlesOf(r servicetest.Response) []string {
	list, _ := r.Data()["items"].([]any)
	out := make([]string, 0, len(list))
	for _, v := range list {
		item := v.(map[string]any)
		if data, ok := item["data"].(map[string]any); ok {
			item = data
		}
		title, _ := item["title"].(string)
		out = append(out, title)
	}
	return out
}

func sorted(s []string) []string { slices.Sort(s); return s }

// The walkthrough of issue 37 through the service with its crawler: three
// sites (English, French and one that names no language) in one feed, and
// q answers exactly the matching items, pages, ranks and polls.
func TestQFindsExactlyTheMatchingItemsOfAFeedOfThreeSites(t *testing.T) {
	t.Parallel()
	english := newSearchSite(t, "en-GB",
		searchPage{"Council debates climate policy", "Councillors argued about emissions targets for the city."},
		searchPage{"Runners gather for the charity race", "Hundreds were running through the park on Sunday."},
		searchPage{"Football final tonight", "The world cup final is on television; no climate talk."},
		searchPage{"Harbour works begin", "The port authority starts dredging."},
	)
	// Words only the body of a page says.
	english.bodies = map[string]string{"Harbour works begin": "Engineers will also rebuild the old lighthouse keepers' cottages by the quay."}
	english.events = []searchEvent{
		{"jazz", "Harbour jazz night", "Blue Note Hall", "Kaiweg 3, Hamburg", "Jazz Society", time.Now().UTC().Add(72 * time.Hour).Truncate(time.Hour)},
		{"chess", "Chess tournament", "Town library", "Marktplatz 1, Bremen", "Chess Club", time.Now().UTC().Add(96 * time.Hour).Truncate(time.Hour)},
	}
	french := newSearchSite(t, "fr",
		searchPage{"Le café du port ferme ses portes", "Les propriétaires du café protestent contre le loyer."},
		searchPage{"Élections municipales : le débat", "Les candidats parlent de transport."},
	)
	unknown := newSearchSite(t, "",
		searchPage{"Weather report: rain all week", "Meteorologists link the storms to climate change."},
		searchPage{"Cafe review: the best espresso", "A cafe with a view of the harbour."},
		searchPage{"Lighthouse open day", "Visitors climb the tower."},
	)
	h := servicetest.Start(t, servicetest.WithCrawler(), func(c *config.Config) {
		c.PollInterval, c.MinPollInterval = 300*time.Millisecond, 300*time.Millisecond
	})
	c := as(h, h.Key)
	feed := createFeed(t, c, "Mixed", "Three sites")["id"].(string)
	var englishSource string
	for _, s := range []*searchSite{english, french, unknown} {
		att := attach(t, c, feed, site(s.domain()))
		if s == english {
			englishSource = att["sourceId"].(string)
		}
	}
	page := func(t *testing.T, query string) servicetest.Response {
		t.Helper()
		return h.Do("GET", "/feeds/news/"+feed+"/items?"+query, nil).MustStatus(t, http.StatusOK)
	}
	list := func(query string) servicetest.Response { return page(t, "limit=100&"+query) }
	// Eleven articles: nine pages and the two event pages (each is an
	// article too).
	wait.Until(t, 60*time.Second, "the feed's eleven articles", func() bool { return len(titlesOf(list(""))) == 11 })

	cases := []struct {
		name, q string
		want    []string
	}{
		{"a word", "climate", []string{"Council debates climate policy", "Football final tonight", "Weather report: rain all week"}},
		{"two words both", "climate council", []string{"Council debates climate policy"}},
		{"a phrase", `"climate policy"`, []string{"Council debates climate policy"}},
		{"a phrase out of order", `"policy climate"`, nil},
		{"OR", "weather OR football", []string{"Football final tonight", "Weather report: rain all week"}},
		{"an exclusion", "climate -football", []string{"Council debates climate policy", "Weather report: rain all week"}},
		{"an excluded phrase", `climate -"world cup"`, []string{"Council debates climate policy", "Weather report: rain all week"}},
		{"without the accent", "cafe", []string{"Cafe review: the best espresso", "Le café du port ferme ses portes"}},
		{"with the accent", "CAFÉ", []string{"Cafe review: the best espresso", "Le café du port ferme ses portes"}},
		{"an accent in the text only", "elections", []string{"Élections municipales : le débat"}},
		{"an English stemmed form", "runs", []string{"Runners gather for the charity race"}},
		{"a French stemmed form", "propriétaire", []string{"Le café du port ferme ses portes"}},
		{"no stemming without a language", "reports", nil},
		{"a word of no item", "volcano", nil},
		{"a word of the body only", "quay", []string{"Harbour works begin"}},
		{"a stemmed word of the body", "cottage", []string{"Harbour works begin"}},
		{"a phrase of the body", `"lighthouse keepers"`, []string{"Harbour works begin"}},
		{"a word of a title and of a body", "lighthouse", []string{"Harbour works begin", "Lighthouse open day"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := list("q=" + url.QueryEscape(tc.q))
			got := sorted(titlesOf(r))
			if !slices.Equal(got, sorted(slices.Clone(tc.want))) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("q=%s found %q, want %q", tc.q, got, tc.want)
			}
			if total := int(r.Data()["total"].(float64)); total != len(tc.want) {
				t.Errorf("q=%s: total %d, want %d", tc.q, total, len(tc.want))
			}
			legacy := h.Do("GET", "/v0/feeds/news/"+feed+"/items?limit=100&q="+url.QueryEscape(tc.q), nil).MustStatus(t, http.StatusOK)
			if got := sorted(titlesOf(legacy)); !slices.Equal(got, sorted(slices.Clone(tc.want))) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("the legacy list with q=%s found %q, want %q", tc.q, got, tc.want)
			}
		})
	}

	t.Run("the list's order stays, and pages by offset", func(t *testing.T) {
		all := titlesOf(list("q=climate"))
		var paged []string
		for offset := 0; offset < 3; offset++ {
			r := page(t, fmt.Sprintf("q=climate&limit=1&offset=%d", offset))
			paged = append(paged, titlesOf(r)...)
			if more := r.Data()["pagination"].(map[string]any)["hasMore"].(bool); more != (offset < 2) {
				t.Errorf("offset %d: hasMore %v", offset, more)
			}
		}
		if !slices.Equal(paged, all) {
			t.Errorf("pages of one gave %q, the list %q", paged, all)
		}
		everything := titlesOf(list(""))
		var filtered []string
		for _, title := range everything {
			if slices.Contains(all, title) {
				filtered = append(filtered, title)
			}
		}
		if !slices.Equal(all, filtered) {
			t.Errorf("with q the order is %q, without %q", all, filtered)
		}
	})
	t.Run("orderBy=relevance ranks a title match first", func(t *testing.T) {
		got := titlesOf(list("q=climate&orderBy=relevance"))
		if len(got) != 3 || got[0] != "Council debates climate policy" {
			t.Errorf("ranked %q, want the title match first", got)
		}
	})
	t.Run("orderBy=relevance ranks a title match above a body match", func(t *testing.T) {
		got := titlesOf(list("q=lighthouse&orderBy=relevance"))
		if !slices.Equal(got, []string{"Lighthouse open day", "Harbour works begin"}) {
			t.Errorf("ranked %q, want the title match first", got)
		}
	})
	t.Run("q combines with since", func(t *testing.T) {
		future := time.Now().UTC().Add(time.Hour).Format(time.RFC3339)
		if got := titlesOf(list("q=climate&since=" + url.QueryEscape(future))); len(got) != 0 {
			t.Errorf("items created after the future: %q", got)
		}
	})

	t.Run("events match by title, venue, address and organizer", func(t *testing.T) {
		events := wantDataObject(t, c.do(t, "POST", "/feeds/events", map[string]any{"name": "Events", "description": "d"}), http.StatusCreated)["id"].(string)
		c.do(t, "POST", "/feeds/events/"+events+"/sources", map[string]any{"sourceType": "site", "sourceId": englishSource}).MustStatus(t, http.StatusCreated)
		eventList := func(path, query string) []string {
			return sorted(titlesOf(h.Do("GET", path+events+"/items?"+query, nil).MustStatus(t, http.StatusOK)))
		}
		wait.Until(t, 60*time.Second, "the event feed's two events", func() bool { return len(eventList("/feeds/events/", "")) == 2 })
		for _, tc := range []struct{ q, want string }{
			{`"blue note"`, "Harbour jazz night"},
			{"bremen", "Chess tournament"},
			{"society -chess", "Harbour jazz night"},
			{"club OR tournament", "Chess tournament"},
			{"harbour", "Harbour jazz night"},
		} {
			for _, path := range []string{"/feeds/events/", "/v0/feeds/events/"} {
				if got := eventList(path, "q="+url.QueryEscape(tc.q)); !slices.Equal(got, []string{tc.want}) {
					t.Errorf("%s q=%s found %q, want %s", path, tc.q, got, tc.want)
				}
			}
		}
		if got := eventList("/feeds/events/", "q=hall+OR+library&orderBy=relevance"); len(got) != 2 {
			t.Errorf("q=hall OR library by relevance found %q", got)
		}
	})

	t.Run("a rebuild from the log searches the same body text", func(t *testing.T) {
		bodyOnly := func() any { return sorted(titlesOf(list("q=" + url.QueryEscape(`quay OR "lighthouse keepers"`)))) }
		if got := bodyOnly().([]string); !slices.Equal(got, []string{"Harbour works begin"}) {
			t.Fatalf("before the rebuild the body's words find %q", got)
		}
		projectortest.RebuildAnswersTheSame(t, h.DSN, h.Service.DB, h.Service.Store, newsitems.Projector{}, bodyOnly)
	})

	t.Run("polling with q lists exactly the new matching items", func(t *testing.T) {
		first := list("q=climate&cursor=")
		if got := sorted(titlesOf(first)); len(got) != 3 {
			t.Fatalf("the first poll found %q, want the three climate items", got)
		}
		cursor := first.Data()["pagination"].(map[string]any)["nextCursor"].(string)
		unknown.publish(searchPage{"Harbour festival this weekend", "Boats and music."})
		unknown.publish(searchPage{"Climate summit opens", "Delegates arrive."})
		wait.Until(t, 60*time.Second, "the two new articles", func() bool { return len(titlesOf(list(""))) == 13 })
		r := list("q=climate&cursor=" + url.QueryEscape(cursor))
		if got := titlesOf(r); !slices.Equal(got, []string{"Climate summit opens"}) {
			t.Errorf("the poll after the cursor found %q, want only the new climate item", got)
		}
		next := r.Data()["pagination"].(map[string]any)["nextCursor"].(string)
		if got := titlesOf(list("q=climate&cursor=" + url.QueryEscape(next))); len(got) != 0 {
			t.Errorf("polling again found %q, want nothing", got)
		}
	})
}

func TestABadQAnswers400NamingQInTheRoutesDialect(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	news := createFeed(t, c, "News", "d")["id"].(string)
	events := wantDataObject(t, c.do(t, "POST", "/feeds/events", map[string]any{"name": "Events", "description": "d"}), http.StatusCreated)["id"].(string)
	routes := []struct {
		path, code string
	}{
		{"/feeds/news/" + news + "/items", "VALIDATION_ERROR"},
		{"/v0/feeds/news/" + news + "/items", "VALIDATION_ERROR"},
		{"/feeds/events/" + events + "/items", "BAD_REQUEST"},
		{"/v0/feeds/events/" + events + "/items", "BAD_REQUEST"},
	}
	queries := []struct {
		name, query, field string
	}{
		{"an empty q", "q=", "q"},
		{"a q of punctuation", "q=" + url.QueryEscape(`"" ()`), "q"},
		{"a q of exclusions only", "q=-sport", "q"},
		{"a q too long", "q=" + strings.Repeat("a", 257), "q"},
		{"a q with a NUL", "q=a%00b", "q"},
		{"relevance without q", "orderBy=relevance", "orderBy"},
		{"relevance with a cursor", "q=a&orderBy=relevance&cursor=", "orderBy"},
	}
	for _, route := range routes {
		for _, tc := range queries {
			t.Run(route.path+" "+tc.name, func(t *testing.T) {
				r := h.Do("GET", route.path+"?"+tc.query, nil)
				e := wantError(t, r, http.StatusBadRequest, route.code)
				details, _ := e["details"].(map[string]any)
				if details["field"] != tc.field {
					t.Errorf("details %v, want field %s", details, tc.field)
				}
				if strings.Contains(r.Raw, "sport") || strings.Contains(r.Raw, "aaaa") {
					t.Errorf("the answer quotes the query: %s", r.Raw)
				}
			})
		}
	}
	// SQL's own syntax is only words to look for.
	for _, q := range []string{"a' OR 1=1 --", "a & !b | c:*", `a\"; DROP TABLE x`} {
		r := h.Do("GET", "/feeds/news/"+news+"/items?q="+url.QueryEscape(q), nil).MustStatus(t, http.StatusOK)
		if total := r.Data()["total"].(float64); total != 0 {
			t.Errorf("q=%s: total %v in an empty feed", q, total)
		}
	}
}
