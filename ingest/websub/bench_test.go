package websub_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/testkit/crawltest"
)

// BenchmarkAPushedEntryUntilListed measures, through the whole service
// with its crawler and a real Postgres, the time from a hub's push of a
// feed with one new entry to that entry in the feed's item list: the
// callback, the queue, the fetch of the entry's page, the article and
// item appends and their projection. Polling is hourly, so nothing else
// can list it; the bound is a second.
func BenchmarkAPushedEntryUntilListed(b *testing.B) {
	hub := crawltest.NewHub(b, time.Hour)
	site := crawltest.NewSite(b, hub.URL, false, "First story")
	svc := startService(b, true)
	feed, _, req := svc.subscribed(b, hub, site, site.ArticleURL(0))
	i := 0
	for b.Loop() {
		i++
		fresh := site.Add(fmt.Sprintf("Story %d", i))
		if got := hub.Publish(req.Topic, site.Feed()); len(got) != 1 || got[0]/100 != 2 {
			b.Fatalf("the callback answered %v", got)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !listed(b, svc, feed, fresh) {
			if time.Now().After(deadline) {
				b.Fatalf("push %d not listed within 10s", i)
			}
			// Polled every 2 ms by hand, not with testkit/wait, whose pauses
			// grow to 50 ms and would be most of the figure measured.
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// listed asks the served API (a real socket, without the harness's
// OpenAPI check, which would dominate the figure) whether the feed's
// newest items include url.
func listed(b *testing.B, svc *service, feed, url string) bool {
	req, _ := http.NewRequest("GET", svc.public+"/feeds/news/"+feed+"/items?limit=5", nil)
	req.Header.Set("Authorization", "Bearer "+svc.h.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("list items: %d %v", resp.StatusCode, err)
	}
	return strings.Contains(string(body), `"url":"`+url+`"`)
}
