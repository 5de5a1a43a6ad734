package ingest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

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
	wait.Until(t, 30*time.Second, "the concert's second listing recorded as a copy", func() bool {
		items, _ = c.do("GET", "/feeds/events/"+feed+"/items?limit=100", nil).MustStatus(t, http.StatusOK).Data()["items"].([]any)
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
