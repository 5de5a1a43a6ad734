package ingest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// venueSite is a small venue website: a sitemap listing a news page and
// two event pages, one with a schema.org MusicEvent in JSON-LD, the other
// linking to an iCalendar file with two more events. Its quartet can be
// cancelled between crawls, and an encore (a news page and an event page)
// published.
type venueSite struct {
	*httptest.Server
	mu        sync.Mutex
	cancelled bool
	encore    bool
	start     time.Time
}

func newVenueSite(t *testing.T) *venueSite {
	v := &venueSite{start: time.Now().UTC().Add(72 * time.Hour).Truncate(time.Hour)}
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nAllow: /\n") })
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		today := time.Now().UTC().Format("2006-01-02")
		more := ""
		v.mu.Lock()
		if v.encore {
			more = fmt.Sprintf("<url><loc>%[1]s/news/encore</loc><lastmod>%[2]s</lastmod></url>\n<url><loc>%[1]s/events/encore</loc><lastmod>%[2]s</lastmod></url>\n", v.URL, today)
		}
		v.mu.Unlock()
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>%[1]s/news/new-season</loc><lastmod>%[2]s</lastmod></url>
<url><loc>%[1]s/events/quartet</loc><lastmod>%[2]s</lastmod></url>
<url><loc>%[1]s/events/season</loc><lastmod>%[2]s</lastmod></url>
%[3]s</urlset>`, v.URL, today, more)
	})
	news := func(path, title string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><html><head><title>%[1]s | Hall</title>
<meta property="og:title" content="%[1]s"><meta property="article:published_time" content="%[2]s">
</head><body><h1>%[1]s</h1><p>The hall's news.</p></body></html>`, title, time.Now().UTC().Add(-time.Hour).Format(time.RFC3339))
		})
	}
	news("/news/new-season", "The new season")
	news("/news/encore", "An encore")
	mux.HandleFunc("/events/encore", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Encore | Hall</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"MusicEvent","name":"Encore",
"startDate":"%s","endDate":"%s","location":{"@type":"Place","name":"Town Hall","address":"Marktplatz 1, Berlin"}}</script>
</head><body><h1>Encore</h1></body></html>`, v.start.Add(96*time.Hour).Format(time.RFC3339), v.start.Add(98*time.Hour).Format(time.RFC3339))
	})
	mux.HandleFunc("/events/quartet", func(w http.ResponseWriter, r *http.Request) {
		v.mu.Lock()
		status := "https://schema.org/EventScheduled"
		if v.cancelled {
			status = "https://schema.org/EventCancelled"
		}
		v.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>String quartet | Hall</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"MusicEvent","name":"String quartet",
"description":"Haydn and <b>Bartók</b>","startDate":"%s","endDate":"%s","eventStatus":"%s",
"url":"%s/events/quartet","location":{"@type":"Place","name":"Town Hall","address":{"@type":"PostalAddress",
"streetAddress":"Marktplatz 1","addressLocality":"Berlin","addressCountry":"DE"},"geo":{"@type":"GeoCoordinates","latitude":52.52,"longitude":13.405}}}</script>
</head><body><h1>String quartet</h1></body></html>`,
			v.start.Format(time.RFC3339), v.start.Add(2*time.Hour).Format(time.RFC3339), status, v.URL)
	})
	mux.HandleFunc("/events/season", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Season</title></head><body>
<h1>Our season</h1><p><a href="/calendar.ics">Add the season to your calendar</a></p></body></html>`)
	})
	mux.HandleFunc("/calendar.ics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
		day := func(d int) string { return v.start.Add(time.Duration(d) * 24 * time.Hour).Format("20060102T150405Z") }
		body := strings.Join([]string{
			"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Hall//Season//EN",
			"BEGIN:VEVENT", "UID:organ-1@hall.example", "DTSTAMP:" + day(-5), "DTSTART:" + day(1), "DTEND:" + day(1)[:9] + "230000Z",
			"SUMMARY:Organ night", "LOCATION:Town Hall", "END:VEVENT",
			"BEGIN:VEVENT", "UID:choir-1@hall.example", "DTSTAMP:" + day(-5), "DTSTART:" + day(2), "DTEND:" + day(2)[:9] + "230000Z",
			"SUMMARY:Choir evening", "END:VEVENT",
			"END:VCALENDAR", "",
		}, "\r\n")
		fmt.Fprint(w, body)
	})
	v.Server = httptest.NewServer(mux)
	t.Cleanup(v.Close)
	return v
}

// publishEncore adds the encore's news page and event page to the
// sitemap.
func (v *venueSite) publishEncore() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.encore = true
}

func (v *venueSite) cancelQuartet() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.cancelled = true
}

func TestAnEventFeedFillsWithTheEventsOfItsSitesPagesAndCalendarsAndFollowsTheirChanges(t *testing.T) {
	t.Parallel()
	site := newVenueSite(t)
	h := servicetest.Start(t, withPollInterval(300*time.Millisecond), servicetest.WithCrawler())
	c := client{h, h.Key}
	feed := c.do("POST", "/feeds/events", map[string]any{"name": "Hall", "description": "What's on"}).MustStatus(t, http.StatusCreated).Data()["id"].(string)
	record := c.siteRecord(strings.TrimPrefix(site.URL, "http://"))
	c.do("POST", "/feeds/events/"+feed+"/sources", map[string]any{"sourceType": "site", "sourceId": record}).MustStatus(t, http.StatusCreated)

	byTitle := func() map[string]map[string]any {
		r := c.do("GET", "/feeds/events/"+feed+"/items?limit=100", nil).MustStatus(t, http.StatusOK)
		out := map[string]map[string]any{}
		list, _ := r.Data()["items"].([]any)
		for _, v := range list {
			it := v.(map[string]any)
			out[it["title"].(string)] = it
		}
		return out
	}
	wait.Until(t, 30*time.Second, "the page's event and the calendar's two", func() bool { return len(byTitle()) == 3 })
	items := byTitle()
	for _, title := range []string{"String quartet", "Organ night", "Choir evening"} {
		if _, ok := items[title]; !ok {
			t.Fatalf("the feed lacks %q: %v", title, jsonKeys(items))
		}
	}
	quartet := items["String quartet"]
	if next := quartet["occurrence"].(map[string]any)["nextOccurrence"].(map[string]any); next["status"] != "scheduled" ||
		next["startDateTime"] != site.start.Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("quartet's next occurrence is %v", next)
	}

	site.cancelQuartet()
	wait.Until(t, 30*time.Second, "the quartet's cancellation on the page to reach its item", func() bool {
		it, ok := byTitle()["String quartet"]
		if !ok {
			return false
		}
		next, _ := it["occurrence"].(map[string]any)["nextOccurrence"].(map[string]any)
		return next["status"] == "cancelled"
	})
	if got := byTitle()["String quartet"]["id"]; got != quartet["id"] {
		t.Fatalf("the change made a new item %v; want the same item %v", got, quartet["id"])
	}
	if n := len(byTitle()); n != 3 {
		t.Fatalf("after the change the feed has %d items, want 3", n)
	}

	// A feed attached later is backfilled with what the source has found.
	later := c.do("POST", "/feeds/events", map[string]any{"name": "Later", "description": "d"}).MustStatus(t, http.StatusCreated).Data()["id"].(string)
	c.do("POST", "/feeds/events/"+later+"/sources", map[string]any{"sourceType": "site", "sourceId": record}).MustStatus(t, http.StatusCreated)
	wait.Until(t, 30*time.Second, "the later feed's backfill of the three events", func() bool {
		r := c.do("GET", "/feeds/events/"+later+"/items?limit=100", nil).MustStatus(t, http.StatusOK)
		list, _ := r.Data()["items"].([]any)
		return len(list) == 3
	})
}

func jsonKeys(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
