package social_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/platform/platformtest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// record registers a source record (D4) and returns its id.
func record(t *testing.T, h *servicetest.Harness, body map[string]any) string {
	t.Helper()
	r := h.Do("POST", "/sources", body)
	if r.Status != http.StatusCreated {
		t.Fatalf("register %v: %d %s", body, r.Status, r.Raw)
	}
	return r.Data()["id"].(string)
}

// eventItems lists an event feed's items (default range, with include),
// keyed by title.
func eventItems(t *testing.T, h *servicetest.Harness, feedID, query string) map[string]map[string]any {
	t.Helper()
	r := h.Do("GET", "/feeds/events/"+feedID+"/items?limit=100"+query, nil).MustStatus(t, http.StatusOK)
	return byKey(t, r.Data()["items"], "title")
}

func TestPlatformAccountsFeedEventFeeds(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	fb, fbSettings := facebookFake(t, now)
	tw, twSettings := twitterFake(t, now)
	// A post naming a date and a time five days ahead is an event; the
	// account's other posts name none and are skipped.
	party := now.Add(5 * 24 * time.Hour)
	partyAt := time.Date(party.Year(), party.Month(), party.Day(), 19, 0, 0, 0, time.UTC)
	tw.Post("11348282", platformtest.Tweet{ID: "1010", CreatedAt: now.Add(-time.Hour),
		Text: "Watch party on " + partyAt.Format("January 2") + " at 7pm at the science museum! Bring friends."})
	settings := fbSettings
	settings.TwitterAPIURL, settings.TwitterBearerToken = twSettings.TwitterAPIURL, twSettings.TwitterBearerToken
	h := start(t, settings)

	feed := eventFeed(t, h, "Space events")
	for _, src := range []map[string]any{
		{"sourceType": "facebook", "sourceId": record(t, h, map[string]any{"sourceType": "facebook", "facebookType": "page", "identifier": "nasa"})},
		{"sourceType": "microblog", "sourceId": record(t, h, map[string]any{"sourceType": "twitter", "username": "nasawebb"})},
	} {
		r := h.Do("POST", "/feeds/events/"+feed+"/sources", src).MustStatus(t, http.StatusCreated)
		if r.Data()["sourceType"] != map[string]string{"facebook": "facebook", "microblog": "twitter"}[src["sourceType"].(string)] {
			t.Errorf("association %s", r.Raw)
		}
	}
	startWorker(t, h, workerConfig(300*time.Millisecond))
	wait.Until(t, 15*time.Second, "the page event and the post naming a date", func() bool { return len(eventItems(t, h, feed, "")) == 2 })

	current := eventItems(t, h, feed, "&include=source")
	t.Run("the page event has its times, zone, place and coordinates", func(t *testing.T) {
		it := current["Artemis Launch Viewing"]
		if it == nil {
			t.Fatalf("items %v", keys(current))
		}
		start := now.Add(10 * 24 * time.Hour).Truncate(time.Hour)
		next := it["occurrence"].(map[string]any)["nextOccurrence"].(map[string]any)
		if next["startDateTime"] != ms(start) || next["endDateTime"] != ms(start.Add(3*time.Hour)) || next["status"] != "scheduled" {
			t.Errorf("next occurrence %v", next)
		}
		wantJSON(t, "location", it["location"], `{"venue":{"name":"Kennedy Space Center Visitor Complex","address":"Space Commerce Way, 32953 Merritt Island"},
			"coordinates":{"lat":28.5232,"lng":-80.6816},
			"displayAddress":"Kennedy Space Center Visitor Complex, Space Commerce Way, 32953 Merritt Island, FL, United States"}`)
		if tm := it["time"].(map[string]any); tm["timezone"] != "America/New_York" || tm["temporalPattern"] != "singular" {
			t.Errorf("time %v", tm)
		}
		if it["primaryUrl"] != "https://www.facebook.com/events/2001/" || it["primaryImage"] != "https://scontent.xx.fbcdn.net/artemis.jpg" {
			t.Errorf("primaryUrl %v primaryImage %v", it["primaryUrl"], it["primaryImage"])
		}
		wantJSON(t, "urls", it["urls"], `["https://www.facebook.com/events/2001/","https://www.kennedyspacecenter.com/tickets"]`)
		wantJSON(t, "organizer", it["organizer"], `{"name":"NASA - National Aeronautics and Space Administration","url":"https://www.facebook.com/NASA"}`)
		wantJSON(t, "source block", it["source"], `{"type":"facebook","subtype":"event","permalinkUrl":"https://www.facebook.com/events/2001/",
			"text":"Watch the launch with us.","mediaUrl":"https://scontent.xx.fbcdn.net/artemis.jpg",
			"publisher":{"name":"NASA - National Aeronautics and Space Administration","username":"NASA","avatarUrl":"https://scontent.xx.fbcdn.net/nasa.png","type":"page"}}`)
	})
	t.Run("the post naming a date and a time is an event at that time, in UTC", func(t *testing.T) {
		var it map[string]any
		for title, v := range current {
			if title != "Artemis Launch Viewing" {
				it = v
			}
		}
		next := it["occurrence"].(map[string]any)["nextOccurrence"].(map[string]any)
		if next["startDateTime"] != ms(partyAt) {
			t.Errorf("starts %v, want %s", next["startDateTime"], ms(partyAt))
		}
		if it["time"].(map[string]any)["timezone"] != "UTC" || it["primaryUrl"] != "https://x.com/nasawebb/status/1010" {
			t.Errorf("time %v primaryUrl %v", it["time"], it["primaryUrl"])
		}
		src := it["source"].(map[string]any)
		if src["type"] != "twitter" || src["subtype"] != "entry" || src["permalinkUrl"] != "https://x.com/nasawebb/status/1010" {
			t.Errorf("source block %v", src)
		}
	})
	t.Run("the legacy list names each item's source type", func(t *testing.T) {
		r := h.Do("GET", "/v0/feeds/events/"+feed+"/items", nil).MustStatus(t, http.StatusOK)
		types := map[string]string{}
		for _, v := range r.Data()["items"].([]any) {
			it := v.(map[string]any)
			types[it["title"].(string)] = it["sourceType"].(string)
			if _, has := it["source"]; has {
				t.Errorf("a legacy item has a source block")
			}
		}
		if types["Artemis Launch Viewing"] != "facebook" || len(types) != 2 {
			t.Errorf("source types %v", types)
		}
	})
	t.Run("a cancellation on the page reaches the item at the next poll", func(t *testing.T) {
		fb.Change(nasaPage, platformtest.FacebookEvent{
			ID: "2001", Name: "Artemis Launch Viewing", Description: "Cancelled: the launch moved.",
			Timezone: "America/New_York", Offset: -5 * 3600,
			Start: now.Add(10 * 24 * time.Hour).Truncate(time.Hour), End: now.Add(10*24*time.Hour + 3*time.Hour).Truncate(time.Hour),
			PlaceName: "Kennedy Space Center Visitor Complex", City: "Merritt Island", IsCanceled: true, Updated: time.Now().UTC(),
		})
		wait.Until(t, 10*time.Second, "the cancelled status", func() bool {
			it := eventItems(t, h, feed, "")["Artemis Launch Viewing"]
			next, _ := it["occurrence"].(map[string]any)["nextOccurrence"].(map[string]any)
			return next["status"] == "cancelled"
		})
	})
}

func TestAPlatformRecordCanOnlyBeAttachedUnderItsOwnType(t *testing.T) {
	_, settings := twitterFake(t, time.Now().UTC())
	h := start(t, settings)
	feed := eventFeed(t, h, "E")
	id := record(t, h, map[string]any{"sourceType": "twitter", "username": "nasawebb"})
	wantError(t, h.Do("POST", "/feeds/events/"+feed+"/sources", map[string]any{"sourceType": "instagram", "sourceId": id}),
		http.StatusBadRequest, `"code":"BAD_REQUEST"`, `"field":"sourceType"`)
	h.Do("POST", "/feeds/events/"+feed+"/sources", map[string]any{"sourceType": "twitter", "sourceId": id}).MustStatus(t, http.StatusCreated)
	wantError(t, h.Do("POST", "/feeds/events/"+feed+"/sources", map[string]any{"sourceType": "twitter", "sourceId": id}), http.StatusConflict)
	if r := h.Do("POST", "/sources", map[string]any{"sourceType": "twitter", "username": "@NASAWebb"}); r.Status != http.StatusOK || r.Data()["id"] != id {
		t.Errorf("registering the account again answered %d %s, want 200 with the record", r.Status, r.Raw)
	}
}
