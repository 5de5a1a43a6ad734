package ingest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/calendar"
	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// bigCalendarSite is a site whose one page links to a calendar of n
// one-off events in the coming weeks.
func bigCalendarSite(t *testing.T, n int) *httptest.Server {
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nAllow: /\n") })
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/season</loc><lastmod>%s</lastmod></url></urlset>`,
			srv.URL, time.Now().UTC().Format("2006-01-02"))
	})
	mux.HandleFunc("/season", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Season</title></head><body><a href="/big.ics">Calendar</a></body></html>`)
	})
	start := time.Now().UTC().Add(48 * time.Hour).Truncate(time.Hour)
	mux.HandleFunc("/big.ics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
		var b strings.Builder
		b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//big//EN\r\n")
		for i := range n {
			at := start.Add(time.Duration(i) * time.Hour).Format("20060102T150405Z")
			fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:big-%d@site.example\r\nDTSTAMP:%s\r\nDTSTART:%s\r\nSUMMARY:Event %d\r\nEND:VEVENT\r\n", i, at, at, i)
		}
		b.WriteString("END:VCALENDAR\r\n")
		fmt.Fprint(w, b.String())
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// Issue 26, finding 5: a calendar too big to record within the store
// deadline of one poll stored part of its events, then was skipped on
// every later poll. Now it is cut at the per-document bound, and what one
// poll leaves is recorded by the next ones until every kept event is an
// item.
func TestACalendarOverTheDocumentBoundIsCutAndItsKeptEventsAreRecordedAcrossPolls(t *testing.T) {
	t.Parallel()
	const total, bound = 200, 60
	site := bigCalendarSite(t, total)
	h := servicetest.Start(t, withoutCrawler())
	cfg := testWorker("big-calendar")
	cfg.Documents = calendar.Limits{MaxHappenings: bound}
	// One poll records only part of the calendar's calendar.
	cfg.StoreTimeout = time.Second
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, cfg)
	c := client{h, h.Key}
	feed := c.do("POST", "/feeds/events", map[string]any{"name": "Big", "description": "d"}).MustStatus(t, http.StatusCreated).Data()["id"].(string)
	record := c.siteRecord(strings.TrimPrefix(site.URL, "http://"))
	src := c.do("POST", "/feeds/events/"+feed+"/sources", map[string]any{"sourceType": "site", "sourceId": record}).
		MustStatus(t, http.StatusCreated).Data()["sourceId"].(string)

	count := func() int {
		r := c.do("GET", "/feeds/events/"+feed+"/items?limit=100", nil).MustStatus(t, http.StatusOK)
		list, _ := r.Data()["items"].([]any)
		return len(list)
	}
	wait.Until(t, 60*time.Second, fmt.Sprintf("the %d events the bound keeps", bound), func() bool { return count() >= bound })
	time.Sleep(time.Second) // further polls must not add what the bound cut
	if n := count(); n != bound {
		t.Fatalf("the feed has %d items, want the %d the bound keeps of %d", n, bound, total)
	}
	if got := crawlStateOf(t, h, src).LastError; !strings.Contains(got, calendar.BoundHappenings) || !strings.Contains(got, "/big.ics") {
		t.Fatalf("the source's last error %q does not say the calendar was cut off", got)
	}
}
