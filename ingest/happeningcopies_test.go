package ingest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	copiesmodel "github.com/feedsvc/feedsvc/readmodel/copies"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// listingSite is a site whose sitemap lists event pages, each with one
// schema.org event: name, start, and a JSON-LD location.
func listingSite(t *testing.T, pages map[string]string) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nAllow: /\n") })
	var s *httptest.Server
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for path := range pages {
			fmt.Fprintf(w, "<url><loc>%s%s</loc><lastmod>%s</lastmod></url>\n", s.URL, path, time.Now().UTC().Format("2006-01-02"))
		}
		fmt.Fprint(w, `</urlset>`)
	})
	for path, ld := range pages {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><html><head><title>Listing</title><script type="application/ld+json">%s</script></head><body><h1>Listing</h1></body></html>`, ld)
		})
	}
	s = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func musicEvent(name string, start time.Time, place string) string {
	return fmt.Sprintf(`{"@context":"https://schema.org","@type":"MusicEvent","name":%q,"startDate":%q,"endDate":%q,"location":%s}`,
		name, start.Format(time.RFC3339), start.Add(90*time.Minute).Format(time.RFC3339), place)
}

func TestOneConcertOnTwoSitesIsOneEventItemAndTwoConcertsOneNightAtOneVenueAreTwo(t *testing.T) {
	t.Parallel()
	night := time.Now().UTC().Add(96 * time.Hour).Truncate(time.Hour)
	venue := `{"@type":"Place","name":"Blue Note Kraków","address":"Floriańska 3, Kraków","geo":{"@type":"GeoCoordinates","latitude":50.0617,"longitude":19.9373}}`
	tickets := `{"@type":"Place","name":"Blue Note Jazz Club Krakow","address":"ul. Floriańska 3, Kraków"}`
	venueSite := listingSite(t, map[string]string{
		"/events/trio": musicEvent("Marta Kowalska Trio", night, venue),
		"/events/jam":  musicEvent("Late Night Jam Session", night.Add(150*time.Minute), venue),
	})
	ticketSite := listingSite(t, map[string]string{
		"/tickets/marta-kowalska-trio": musicEvent("Marta Kowalska Trio – live", night, tickets),
	})

	h := servicetest.Start(t, withPollInterval(time.Hour), servicetest.WithCrawler())
	c := client{h, h.Key}
	feed := c.createEventFeed("jazz")
	for _, s := range []*httptest.Server{venueSite, ticketSite} {
		c.attachEvents(feed, c.siteRecord(s.Listener.Addr().String()))
	}
	var copies []any
	var items []any
	// The venue's two concerts are added one after the other, in either
	// order with the ticket site's: the copy can be recorded before the
	// jam session is listed.
	wait.Until(t, 30*time.Second, "the concert's second listing recorded as a copy, and the jam session listed", func() bool {
		items, _ = c.do("GET", "/feeds/events/"+feed+"/items?limit=100", nil).MustStatus(t, http.StatusOK).Data()["items"].([]any)
		if !slices.Contains(c.eventTitles(feed), "Late Night Jam Session") {
			return false
		}
		for _, it := range items {
			id := it.(map[string]any)["id"].(string)
			copies, _ = c.do("GET", "/feeds/events/"+feed+"/items/"+id+"/copies", nil).MustStatus(t, http.StatusOK).Data()["copies"].([]any)
			if len(copies) > 0 {
				return true
			}
		}
		return false
	})
	titles := c.eventTitles(feed)
	if want := []string{"Late Night Jam Session", "Marta Kowalska Trio"}; !slices.Equal(titles, want) &&
		!slices.Equal(titles, []string{"Late Night Jam Session", "Marta Kowalska Trio – live"}) {
		t.Errorf("the feed lists %v, want the trio once and the jam session", titles)
	}
	if len(copies) != 1 {
		t.Errorf("the trio's item has %d copies, want 1: %v", len(copies), copies)
	}
}

func TestAConcertListedByTwoSitesIsShownMergedAndASplitRestoresTwoItemsThatSurviveARebuild(t *testing.T) {
	t.Parallel()
	night := time.Now().UTC().Add(120 * time.Hour).Truncate(time.Hour)
	venue := `{"@type":"Place","name":"Blue Note Kraków","address":"Floriańska 3, Kraków","geo":{"@type":"GeoCoordinates","latitude":50.0617,"longitude":19.9373}}`
	tickets := `{"@type":"Place","name":"Blue Note Jazz Club Krakow","address":"ul. Floriańska 3, Kraków"}`
	trio := func(start time.Time) string {
		return fmt.Sprintf(`{"@context":"https://schema.org","@type":"MusicEvent","name":"Marta Kowalska Trio","description":"New compositions from the trio's second album.","startDate":%q,"endDate":%q,"location":%s}`,
			start.Format(time.RFC3339), start.Add(90*time.Minute).Format(time.RFC3339), venue)
	}
	// The venue's programme lists the trio on two nights and a jam
	// session: a listing (precedence 2). The ticket site has the trio's
	// first night on a page of its own (precedence 3), with an image and
	// no description.
	venueSite := listingSite(t, map[string]string{
		"/programme": `[` + trio(night) + `,` + trio(night.Add(24*time.Hour)) + `,` + musicEvent("Late Night Jam Session", night.Add(150*time.Minute), venue) + `]`,
	})
	ticketSite := listingSite(t, map[string]string{
		"/tickets/marta-kowalska-trio": fmt.Sprintf(`{"@context":"https://schema.org","@type":"MusicEvent","name":"Marta Kowalska Trio – live","image":"https://tickets.example/trio.jpg","startDate":%q,"endDate":%q,"location":%s}`,
			night.Format(time.RFC3339), night.Add(90*time.Minute).Format(time.RFC3339), tickets),
	})

	h := servicetest.Start(t, withPollInterval(time.Hour), servicetest.WithCrawler())
	c := client{h, h.Key}
	feed := c.createEventFeed("jazz")
	for _, s := range []*httptest.Server{venueSite, ticketSite} {
		c.attachEvents(feed, c.siteRecord(s.Listener.Addr().String()))
	}
	var trioID string
	var copies []any
	wait.Until(t, 30*time.Second, "the concert's second listing recorded as a copy", func() bool {
		items, _ := c.do("GET", "/feeds/events/"+feed+"/items?limit=100", nil).MustStatus(t, http.StatusOK).Data()["items"].([]any)
		for _, it := range items {
			id := it.(map[string]any)["id"].(string)
			copies, _ = c.do("GET", "/feeds/events/"+feed+"/items/"+id+"/copies", nil).MustStatus(t, http.StatusOK).Data()["copies"].([]any)
			if len(copies) > 0 {
				trioID = id
				return true
			}
		}
		return false
	})
	// The copy is recorded by the copies projector; the item's merged
	// view, and the jam session's own item, by the event items projector,
	// which may still be behind it (the venue's programme may even be read
	// in a later batch): wait for the merged item itself.
	wait.Until(t, 30*time.Second, "the trio's item merged and the jam session listed", func() bool {
		if titles := c.eventTitles(feed); !slices.Equal(titles, []string{"Late Night Jam Session", "Marta Kowalska Trio – live"}) {
			return false
		}
		it := c.do("GET", "/feeds/events/"+feed+"/items/"+trioID, nil).MustStatus(t, http.StatusOK).Data()
		n, _ := it["occurrence"].(map[string]any)["totalOccurrences"].(float64)
		return n == 2
	})
	merged := func(t *testing.T, when string) {
		t.Helper()
		if titles := c.eventTitles(feed); !slices.Equal(titles, []string{"Late Night Jam Session", "Marta Kowalska Trio – live"}) {
			t.Errorf("%s: the feed lists %v, want the trio once, titled by its own page, and the jam session", when, titles)
		}
		it := c.do("GET", "/feeds/events/"+feed+"/items/"+trioID, nil).MustStatus(t, http.StatusOK).Data()
		if d, _ := it["description"].(string); !strings.Contains(d, "second album") {
			t.Errorf("%s: the merged item's description is %q, want the programme's (its own page gives none)", when, d)
		}
		if n, _ := it["occurrence"].(map[string]any)["totalOccurrences"].(float64); n != 2 {
			t.Errorf("%s: the merged item has %v occurrences, want both nights (the union of its listings')", when, n)
		}
		if img, _ := it["primaryImage"].(string); img != "https://tickets.example/trio.jpg" {
			t.Errorf("%s: the merged item's image is %q, want its own page's", when, img)
		}
		req := httptest.NewRequest("GET", "/feeds/events/"+feed+"/calendar.ics", nil)
		req.Header.Set("Authorization", "Bearer "+h.Key)
		resp, err := h.Test(req)
		if err != nil {
			t.Fatalf("calendar: %v", err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cal := string(raw)
		if n := strings.Count(cal, "SUMMARY:Marta Kowalska Trio"); n != 1 || !strings.Contains(cal, "RDATE") {
			t.Errorf("%s: the calendar has the trio %d times, want once with its second night as an RDATE:\n%s", when, n, cal)
		}
	}
	merged(t, "live")

	var added int
	if err := h.Service.DB.Bun.NewRaw(`SELECT count(*) FROM events WHERE event_type = 'EventItemAdded' AND data->>'feedId' = ?`, feed).
		Scan(context.Background(), &added); err != nil {
		t.Fatal(err)
	}
	if added != 2 {
		t.Errorf("the log has %d EventItemAdded for the feed (what event.item_added announces), want 2: the copy adds none", added)
	}

	if err := h.Service.Rebuilds.Rebuild(context.Background(), happeningitems.Projector{}, copiesmodel.Projector{}); err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	merged(t, "after a rebuild")

	copyID := copies[0].(map[string]any)["eventId"].(string)
	// Another organization finds neither the copies nor anything to split,
	// and its attempt changes nothing (the merged checks below still hold).
	globex := client{h, h.NewKey("globex")}
	globex.do("GET", "/feeds/events/"+feed+"/items/"+trioID+"/copies", nil).MustStatus(t, http.StatusNotFound)
	globex.do("POST", "/feeds/events/"+feed+"/items/"+trioID+"/copies/"+copyID+"/split", nil).MustStatus(t, http.StatusNotFound)
	merged(t, "after another organization tried to split it")
	split := c.do("POST", "/feeds/events/"+feed+"/items/"+trioID+"/copies/"+copyID+"/split", nil).MustStatus(t, http.StatusCreated).Data()["itemId"].(string)
	c.do("POST", "/feeds/events/"+feed+"/items/"+trioID+"/copies/"+copyID+"/split", nil).MustStatus(t, http.StatusNotFound)
	apart := func(t *testing.T, when string) {
		t.Helper()
		titles := c.eventTitles(feed)
		if !slices.Equal(titles, []string{"Late Night Jam Session", "Marta Kowalska Trio", "Marta Kowalska Trio – live"}) {
			t.Errorf("%s: the feed lists %v, want the trio as each site lists it, and the jam session", when, titles)
		}
		c.do("GET", "/feeds/events/"+feed+"/items/"+split, nil).MustStatus(t, http.StatusOK)
		left := c.do("GET", "/feeds/events/"+feed+"/items/"+trioID+"/copies", nil).MustStatus(t, http.StatusOK).Data()["copies"].([]any)
		if len(left) != 0 {
			t.Errorf("%s: the item keeps %d copies, want none", when, len(left))
		}
	}
	apart(t, "split")

	plain := c.do("GET", "/feeds/events/"+feed+"/items/"+trioID+"/history", nil).MustStatus(t, http.StatusOK).Data()
	if _, ok := plain["copies"]; ok {
		t.Errorf("the history lists copy facts unasked: %v", plain)
	}
	facts, _ := c.do("GET", "/feeds/events/"+feed+"/items/"+trioID+"/history?include=copies", nil).MustStatus(t, http.StatusOK).Data()["copies"].([]any)
	var types []string
	for _, f := range facts {
		f := f.(map[string]any)
		types = append(types, f["type"].(string))
		if d := f["data"].(map[string]any); d["eventId"] != copyID {
			t.Errorf("the copy fact %v names another event than %s", f, copyID)
		}
	}
	if !slices.Equal(types, []string{"EventItemCopyFound", "EventItemCopySplit"}) {
		t.Errorf("the history's copy facts are %v, want the copy found, then split", types)
	}
	c.do("GET", "/feeds/events/"+feed+"/items/"+trioID+"/history?include=source", nil).MustStatus(t, http.StatusBadRequest)
	if err := h.Service.Rebuilds.Rebuild(context.Background(), happeningitems.Projector{}, copiesmodel.Projector{}); err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	apart(t, "after a rebuild")
}
