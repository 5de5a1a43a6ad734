package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedsvc/feedsvc/bench/internal/fakeweb"
	"github.com/feedsvc/feedsvc/bench/internal/systems"
	"github.com/feedsvc/feedsvc/docs/webhooks/receiver"
)

// The measures: when a system says it stored an item (its own
// timestamp), when a client reading its item list first saw it, when its
// live stream sent it, and when its webhook delivered the event.
const (
	stored  = "stored"
	listed  = "listed"
	stream  = "stream"
	webhook = "webhook"
)

// observations are the first instant each article was seen by each
// measure.
type observations struct {
	web *fakeweb.Web

	mu    sync.Mutex
	first map[string]map[key]time.Time
	// reads are the requests the observers made of the system's API
	// (list or entries pages; a stream counts once per connection).
	reads, unmatched atomic.Int64
}

func newObservations(w *fakeweb.Web) *observations {
	return &observations{web: w, first: map[string]map[key]time.Time{}}
}

// see records that measure saw the article at u at instant at, keeping
// the earliest.
func (o *observations) see(measure, u string, at time.Time) {
	site, k, ok := o.web.ParseArticleURL(u)
	if !ok {
		o.unmatched.Add(1)
		return
	}
	o.seeKey(measure, key{site, k}, at)
}

func (o *observations) seeKey(measure string, k key, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := o.first[measure]
	if m == nil {
		m = map[key]time.Time{}
		o.first[measure] = m
	}
	if t, ok := m[k]; !ok || at.Before(t) {
		m[k] = at
	}
}

// at is when measure first saw k.
func (o *observations) at(measure string, k key) (time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t, ok := o.first[measure][k]
	return t, ok
}

// newsItem is what the observers read of a feedsvc news item.
type newsItem struct {
	URL       string    `json:"url"`
	CreatedAt time.Time `json:"createdAt"`
}

// feedsvcLists polls each news feed's item list with its change cursor
// every period (the way docs/api-notes.md tells a client to poll), from
// the feeds' latest change when it starts, until ctx ends.
func feedsvcLists(ctx context.Context, api *systems.APIClient, feeds []string, period time.Duration, obs *observations) error {
	type page struct {
		Data struct {
			Items      []newsItem `json:"items"`
			Pagination struct {
				HasMore    bool   `json:"hasMore"`
				NextCursor string `json:"nextCursor"`
			} `json:"pagination"`
		} `json:"data"`
	}
	cursors := make([]string, len(feeds))
	for i, f := range feeds {
		var p page
		if err := api.Do(ctx, "GET", "/feeds/news/"+f+"/items?limit=1", nil, &p); err != nil {
			return fmt.Errorf("start the list of feed %s: %w", f, err)
		}
		cursors[i] = p.Data.Pagination.NextCursor
	}
	go systems.Every(ctx, period, func() {
		for i, f := range feeds {
			for more := true; more && ctx.Err() == nil; {
				var p page
				obs.reads.Add(1)
				if err := api.Do(ctx, "GET", "/feeds/news/"+f+"/items?limit=100&cursor="+url.QueryEscape(cursors[i]), nil, &p); err != nil {
					if ctx.Err() == nil {
						log.Printf("list of feed %s: %v", f, err)
					}
					break
				}
				now := time.Now()
				for _, it := range p.Data.Items {
					obs.see(listed, it.URL, now)
					obs.see(stored, it.URL, it.CreatedAt)
				}
				if p.Data.Pagination.NextCursor != "" {
					cursors[i] = p.Data.Pagination.NextCursor
				}
				more = p.Data.Pagination.HasMore
			}
		}
	})
	return nil
}

// streamClient has no timeout: a stream lasts.
var streamClient = &http.Client{}

// feedsvcStream holds the live item stream of a news feed open until ctx
// ends (reconnecting with Last-Event-ID when it ends, as an EventSource
// does), recording when each item arrives.
func feedsvcStream(ctx context.Context, base, key, feed string, obs *observations) {
	lastID := ""
	for ctx.Err() == nil {
		if err := readStream(ctx, base, key, feed, &lastID, obs); err != nil && ctx.Err() == nil {
			log.Printf("stream of feed %s: %v", feed, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func readStream(ctx context.Context, base, key, feed string, lastID *string, obs *observations) error {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/feeds/news/"+feed+"/items/stream", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	if *lastID != "" {
		req.Header.Set("Last-Event-ID", *lastID)
	}
	obs.reads.Add(1)
	resp, err := streamClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var id, event, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if event == "item" && data != "" {
				var it newsItem
				if err := json.Unmarshal([]byte(data), &it); err == nil {
					now := time.Now()
					obs.see(stream, it.URL, now)
					obs.see(stored, it.URL, it.CreatedAt)
				}
			}
			if id != "" {
				*lastID = id
			}
			id, event, data = "", "", ""
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")
		}
	}
	return sc.Err()
}

// webhookReceiver takes the event.item_added deliveries (verified as
// docs/webhooks/receiver does) and records when each event arrived, by
// its name.
func webhookReceiver(secret string, obs *observations) http.Handler {
	return receiver.New(secret, func(d receiver.Delivery) {
		now := time.Now()
		var item struct {
			Title string `json:"title"`
		}
		if err := json.Unmarshal(d.Data, &item); err != nil {
			obs.unmatched.Add(1)
			return
		}
		site, k, ok := obs.web.ParseEventName(item.Title)
		if !ok {
			obs.unmatched.Add(1)
			return
		}
		obs.seeKey(webhook, key{site, k}, now)
	})
}

// minifluxEntries polls Miniflux's entries (GET /v1/entries after the last
// id seen, oldest first) every period, from its newest entry when it
// starts, until ctx ends.
func minifluxEntries(ctx context.Context, api *systems.APIClient, period time.Duration, obs *observations) error {
	type page struct {
		Entries []struct {
			ID        int64     `json:"id"`
			URL       string    `json:"url"`
			CreatedAt time.Time `json:"created_at"`
		} `json:"entries"`
	}
	var p page
	if err := api.Do(ctx, "GET", "/v1/entries?order=id&direction=desc&limit=1", nil, &p); err != nil {
		return fmt.Errorf("start the entries: %w", err)
	}
	var after int64
	if len(p.Entries) > 0 {
		after = p.Entries[0].ID
	}
	go systems.Every(ctx, period, func() {
		for more := true; more && ctx.Err() == nil; {
			var p page
			obs.reads.Add(1)
			if err := api.Do(ctx, "GET", fmt.Sprintf("/v1/entries?order=id&direction=asc&limit=500&after_entry_id=%d", after), nil, &p); err != nil {
				if ctx.Err() == nil {
					log.Printf("miniflux entries: %v", err)
				}
				break
			}
			now := time.Now()
			for _, e := range p.Entries {
				obs.see(listed, e.URL, now)
				obs.see(stored, e.URL, e.CreatedAt)
				after = max(after, e.ID)
			}
			more = len(p.Entries) == 500
		}
	})
	return nil
}
