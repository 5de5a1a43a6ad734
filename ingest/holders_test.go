package ingest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// recitalSite is a venue site whose recital page carries the event in
// JSON-LD and links to the event's own .ics export, which words the
// description differently, as exports do. The page can drop the event.
type recitalSite struct {
	*httptest.Server
	start      time.Time
	mu         sync.Mutex
	pageEvent  bool
	calendarAt atomic.Int32 // how often the calendar was read
}

func newRecitalSite(t *testing.T) *recitalSite {
	s := &recitalSite{start: time.Now().UTC().Add(96 * time.Hour).Truncate(time.Hour), pageEvent: true}
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nAllow: /\n") })
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/events/recital</loc><lastmod>%s</lastmod></url></urlset>`,
			s.URL, time.Now().UTC().Format("2006-01-02"))
	})
	mux.HandleFunc("/events/recital", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		withEvent := s.pageEvent
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		ld := ""
		if withEvent {
			ld = fmt.Sprintf(`<script type="application/ld+json">{"@context":"https://schema.org","@type":"MusicEvent","name":"Piano recital",
"description":"Schubert sonatas, from the page","startDate":"%s","url":"%s/events/recital",
"location":{"@type":"Place","name":"Small Hall","address":"Marktplatz 1, Berlin"}}</script>`, s.start.Format(time.RFC3339), s.URL)
		}
		fmt.Fprintf(w, `<!doctype html><html><head><title>Piano recital</title>%s</head>
<body><h1>Piano recital</h1><a href="/events/recital.ics">Add to calendar</a></body></html>`, ld)
	})
	mux.HandleFunc("/events/recital.ics", func(w http.ResponseWriter, r *http.Request) {
		s.calendarAt.Add(1)
		w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
		fmt.Fprint(w, strings.Join([]string{
			"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Hall//Export//EN",
			"BEGIN:VEVENT", "UID:recital@hall.example", "DTSTAMP:20240101T000000Z",
			"DTSTART:" + s.start.Format("20060102T150405Z"), "SUMMARY:Piano recital",
			"DESCRIPTION:Schubert sonatas (calendar export)", "URL:" + s.URL + "/events/recital",
			"END:VEVENT", "END:VCALENDAR", "",
		}, "\r\n"))
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *recitalSite) dropEventFromPage() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pageEvent = false
}

// eventHistory counts the discoveries and changes of events in the log.
func eventHistory(t *testing.T, h *servicetest.Harness) (discovered, changed int) {
	t.Helper()
	events, err := h.Service.Store.ReadAll(context.Background(), eventstore.Position{}, 100000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		switch e.Type {
		case "EventDiscovered":
			discovered++
		case "EventChanged":
			changed++
		}
	}
	return discovered, changed
}

func TestAPageAndItsCalendarExportThatWordAnEventDifferentlyDoNotChangeItBackAndForth(t *testing.T) {
	t.Parallel()
	site := newRecitalSite(t)
	h := servicetest.Start(t, withPollInterval(200*time.Millisecond), servicetest.WithCrawler())
	c := client{h, h.Key}
	feed := c.do("POST", "/feeds/events", map[string]any{"name": "Hall", "description": "Recitals"}).MustStatus(t, http.StatusCreated).Data()["id"].(string)
	record := c.siteRecord(strings.TrimPrefix(site.URL, "http://"))
	c.do("POST", "/feeds/events/"+feed+"/sources", map[string]any{"sourceType": "site", "sourceId": record}).MustStatus(t, http.StatusCreated)
	description := func() string {
		r := c.do("GET", "/feeds/events/"+feed+"/items", nil).MustStatus(t, http.StatusOK)
		list, _ := r.Data()["items"].([]any)
		if len(list) != 1 {
			return fmt.Sprintf("%d items", len(list))
		}
		d, _ := list[0].(map[string]any)["description"].(string)
		return d
	}

	wait.Until(t, 30*time.Second, "five polls that read the page and its calendar", func() bool { return site.calendarAt.Load() >= 5 })
	if got := description(); got != "Schubert sonatas, from the page" {
		t.Fatalf("the item says %q; want the event's own page's words", got)
	}
	if discovered, changed := eventHistory(t, h); discovered != 1 || changed != 0 {
		t.Fatalf("five polls made %d discoveries and %d changes; want 1 and 0", discovered, changed)
	}

	// The page no longer shows the event: its calendar export has the word.
	site.dropEventFromPage()
	wait.Until(t, 30*time.Second, "the calendar's words once the page dropped the event", func() bool { return description() == "Schubert sonatas (calendar export)" })
	seen := site.calendarAt.Load()
	wait.Until(t, 30*time.Second, "three more polls", func() bool { return site.calendarAt.Load() >= seen+3 })
	if discovered, changed := eventHistory(t, h); discovered != 1 || changed != 1 {
		t.Fatalf("the hand-over made %d discoveries and %d changes; want 1 and 1", discovered, changed)
	}
}
