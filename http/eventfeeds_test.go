package http_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// Contract tests of the event feed and event feed source endpoints
// (api.md 2.7, 2.8, 4.4, 4.5, 7; D4, D9).

// wantEventFeed fails unless m is an event feed (2.7), with enabledReason
// when withReason.
func wantEventFeed(t *testing.T, what string, m map[string]any, withReason bool) {
	t.Helper()
	keys := []string{"id", "name", "description", "enabled", "enabledSource", "config", "createdAt", "updatedAt"}
	if withReason {
		keys = append(keys, "enabledReason")
	}
	wantKeys(t, what, m, keys...)
	wantUUID(t, what+".id", m["id"])
	if _, ok := m["enabled"].(bool); !ok {
		t.Fatalf("%s.enabled is %v, want a boolean", what, m["enabled"])
	}
	config := wantObject(t, what+".config", m["config"])
	if _, ok := config["version"].(float64); !ok {
		t.Fatalf("%s.config.version is %v, want a number", what, config["version"])
	}
	wantTimestamp(t, what+".createdAt", m["createdAt"])
	wantTimestamp(t, what+".updatedAt", m["updatedAt"])
}

// wantEventBadRequest fails unless r is an event-dialect 400 naming field.
func wantEventBadRequest(t *testing.T, r servicetest.Response, field string) {
	t.Helper()
	e := wantError(t, r, http.StatusBadRequest, "BAD_REQUEST")
	wantKeys(t, "error", e, "code", "message", "details")
	d := wantObject(t, "error.details", e["details"])
	wantKeys(t, "error.details", d, "field", "issue")
	if d["field"] != field {
		t.Fatalf("error.details.field is %v, want %q; body %s", d["field"], field, r.Raw)
	}
	wantString(t, "error.details.issue", d["issue"])
}

func createEventFeed(t *testing.T, c caller, body map[string]any) map[string]any {
	t.Helper()
	return wantDataObject(t, c.do(t, "POST", "/feeds/events", body), http.StatusCreated)
}

func TestCreatingAnEventFeedAnswers201WithItsDefaults(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)

	feed := createEventFeed(t, c, map[string]any{"name": "Concerts", "description": "Live music in town"})
	wantEventFeed(t, "created feed", feed, true)
	if feed["enabled"] != true || feed["enabledSource"] != "api" || feed["enabledReason"] != nil {
		t.Fatalf("a new feed is %v by %v (%v); want enabled by api with a null reason", feed["enabled"], feed["enabledSource"], feed["enabledReason"])
	}
	if jsonOf(feed["config"]) != `{"version":1}` {
		t.Fatalf("config is %s, want {\"version\":1}", jsonOf(feed["config"]))
	}

	t.Run("a get answers the same feed without enabledReason", func(t *testing.T) {
		got := wantDataObject(t, c.do(t, "GET", "/feeds/events/"+feed["id"].(string), nil), http.StatusOK)
		wantEventFeed(t, "fetched feed", got, false)
		delete(feed, "enabledReason")
		if jsonOf(got) != jsonOf(feed) {
			t.Fatalf("get answers %s, create answered %s", jsonOf(got), jsonOf(feed))
		}
	})
	t.Run("the list holds it and no news feed holds it", func(t *testing.T) {
		feeds := wantDataList(t, c.do(t, "GET", "/feeds/events", nil))
		if len(feeds) != 1 || feeds[0]["id"] != feed["id"] {
			t.Fatalf("list answers %s", jsonOf(feeds))
		}
		if news := wantDataList(t, c.do(t, "GET", "/feeds/news", nil)); len(news) != 0 {
			t.Fatalf("news feeds list shows %s", jsonOf(news))
		}
		wantNotFound(t, c.do(t, "GET", "/feeds/news/"+feed["id"].(string), nil), "feed", feed["id"].(string))
	})
	t.Run("a feed created disabled with a config echoes both, unknown members included", func(t *testing.T) {
		got := createEventFeed(t, c, map[string]any{
			"name": "Near me", "description": "d", "enabled": false,
			"config": map[string]any{"geo": map[string]any{"lat": 52.52, "lng": 13.405, "radiusKm": 25}, "keywords": []string{"jazz"}, "theme": "dark"},
		})
		if got["enabled"] != false {
			t.Fatalf("enabled is %v, want false", got["enabled"])
		}
		want := `{"geo":{"lat":52.52,"lng":13.405,"radiusKm":25},"keywords":["jazz"],"theme":"dark","version":1}`
		if jsonOf(got["config"]) != want {
			t.Fatalf("config is %s, want %s", jsonOf(got["config"]), want)
		}
	})
}

func TestInvalidEventFeedRequestsAnswerABadRequestNamingTheField(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := createEventFeed(t, c, map[string]any{"name": "Keep", "description": "keep me"})
	id := feed["id"].(string)
	cases := []struct {
		name, method, path string
		body               any
		field              string
	}{
		{"a create without a name", "POST", "/feeds/events", map[string]any{"description": "d"}, "name"},
		{"a create with an empty description", "POST", "/feeds/events", map[string]any{"name": "n", "description": "  "}, "description"},
		{"a create whose enabled is a string", "POST", "/feeds/events", map[string]any{"name": "n", "description": "d", "enabled": "yes"}, "enabled"},
		{"a create whose config is an array", "POST", "/feeds/events", map[string]any{"name": "n", "description": "d", "config": []int{1}}, "config"},
		{"a create whose config version is a string", "POST", "/feeds/events", map[string]any{"name": "n", "description": "d", "config": map[string]any{"version": "2"}}, "config.version"},
		{"a create whose geo has no radius", "POST", "/feeds/events", map[string]any{"name": "n", "description": "d", "config": map[string]any{"geo": map[string]any{"lat": 1, "lng": 2}}}, "config.geo"},
		{"a create whose latitude is out of range", "POST", "/feeds/events", map[string]any{"name": "n", "description": "d", "config": map[string]any{"geo": map[string]any{"lat": 91, "lng": 2, "radiusKm": 5}}}, "config.geo.lat"},
		{"a create whose keywords are not strings", "POST", "/feeds/events", map[string]any{"name": "n", "description": "d", "config": map[string]any{"keywords": []int{1}}}, "config.keywords"},
		// Postgres jsonb refuses NUL: these answered 500 (issue 26).
		{"a create whose keywords hold a NUL", "POST", "/feeds/events", map[string]any{"name": "n", "description": "d", "config": map[string]any{"keywords": []string{"a\x00b"}}}, "config.keywords"},
		{"a create whose unknown member holds a NUL deep inside", "POST", "/feeds/events", map[string]any{"name": "n", "description": "d", "config": map[string]any{"extra": map[string]any{"x": []string{"\x00"}}}}, "config.extra"},
		{"a create whose member name holds a NUL", "POST", "/feeds/events", map[string]any{"name": "n", "description": "d", "config": map[string]any{"a\x00": 1}}, "config"},
		{"an update whose keywords hold a NUL", "PATCH", "/feeds/events/" + id, map[string]any{"config": map[string]any{"keywords": []string{"\x00"}}}, "config.keywords"},
		{"an update with an empty name", "PATCH", "/feeds/events/" + id, map[string]any{"name": ""}, "name"},
		{"a get of a malformed id", "GET", "/feeds/events/not-a-uuid", nil, "id"},
		{"a delete of a malformed id", "DELETE", "/feeds/events/123", nil, "id"},
		{"a source add without a sourceType", "POST", "/feeds/events/" + id + "/sources", map[string]any{"sourceId": randomID()}, "sourceType"},
		{"a source add with an unknown sourceType", "POST", "/feeds/events/" + id + "/sources", map[string]any{"sourceType": "rss", "sourceId": randomID()}, "sourceType"},
		{"a source add with a malformed sourceId", "POST", "/feeds/events/" + id + "/sources", map[string]any{"sourceType": "site", "sourceId": "abc"}, "sourceId"},
		{"a source removal with a malformed association id", "DELETE", "/feeds/events/" + id + "/sources/abc", nil, "sourceId"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantEventBadRequest(t, c.do(t, tc.method, tc.path, tc.body), tc.field)
		})
	}
	t.Run("and nothing changed", func(t *testing.T) {
		feeds := wantDataList(t, c.do(t, "GET", "/feeds/events", nil))
		if len(feeds) != 1 || feeds[0]["name"] != "Keep" {
			t.Fatalf("feeds are %s", jsonOf(feeds))
		}
	})
}

func TestUpdatingAnEventFeedChangesOnlyWhatItNames(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := createEventFeed(t, c, map[string]any{"name": "Old", "description": "d", "config": map[string]any{"keywords": []string{"a"}}})
	path := "/feeds/events/" + feed["id"].(string)

	got := wantDataObject(t, c.do(t, "PATCH", path, map[string]any{"name": "New", "enabled": false}), http.StatusOK)
	wantEventFeed(t, "updated feed", got, false)
	if got["name"] != "New" || got["description"] != "d" || got["enabled"] != false || got["enabledSource"] != "api" {
		t.Fatalf("updated feed is %s", jsonOf(got))
	}
	if jsonOf(got["config"]) != `{"keywords":["a"],"version":1}` {
		t.Fatalf("an update without config changed it to %s", jsonOf(got["config"]))
	}
	got = wantDataObject(t, c.do(t, "PATCH", path, map[string]any{"config": map[string]any{"version": 2}}), http.StatusOK)
	if jsonOf(got["config"]) != `{"version":2}` {
		t.Fatalf("config replaced by %s, want {\"version\":2}", jsonOf(got["config"]))
	}
	if read := wantDataObject(t, c.do(t, "GET", path, nil), http.StatusOK); jsonOf(read) != jsonOf(got) {
		t.Fatalf("get answers %s after the update answered %s", jsonOf(read), jsonOf(got))
	}
}

// A null geo or keywords in a config is the config without it (the
// document's input allows null; its answers hold an object or an array, or
// nothing): a create stores none, and an update, which replaces the whole
// config, clears them.
func TestANullGeoOrKeywordsInAConfigIsAConfigWithout(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := createEventFeed(t, c, map[string]any{"name": "n", "description": "d",
		"config": map[string]any{"geo": nil, "keywords": nil, "theme": "dark"}})
	if jsonOf(feed["config"]) != `{"theme":"dark","version":1}` {
		t.Fatalf("a create with a null geo and keywords answered config %s", jsonOf(feed["config"]))
	}
	path := "/feeds/events/" + feed["id"].(string)
	for _, got := range []map[string]any{
		wantDataObject(t, c.do(t, "GET", path, nil), http.StatusOK),
		wantDataList(t, c.do(t, "GET", "/feeds/events", nil))[0],
	} {
		if jsonOf(got["config"]) != `{"theme":"dark","version":1}` {
			t.Fatalf("a read answered config %s", jsonOf(got["config"]))
		}
	}
	near := map[string]any{"geo": map[string]any{"lat": 52.52, "lng": 13.405, "radiusKm": 25}, "keywords": []string{"jazz"}}
	if got := wantDataObject(t, c.do(t, "PATCH", path, map[string]any{"config": near}), http.StatusOK); got["config"].(map[string]any)["geo"] == nil {
		t.Fatalf("an update with a geo answered config %s", jsonOf(got["config"]))
	}
	got := wantDataObject(t, c.do(t, "PATCH", path, map[string]any{"config": map[string]any{"geo": nil, "keywords": nil}}), http.StatusOK)
	if jsonOf(got["config"]) != `{"version":1}` {
		t.Fatalf("an update with a null geo and keywords answered config %s, want them cleared", jsonOf(got["config"]))
	}
	if read := wantDataObject(t, c.do(t, "GET", path, nil), http.StatusOK); jsonOf(read["config"]) != `{"version":1}` {
		t.Fatalf("a get after clearing answered config %s", jsonOf(read["config"]))
	}
}

func TestTheOperatorSwitchesAnEventFeedAsAdminWithAReason(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := createEventFeed(t, c, map[string]any{"name": "Festivals", "description": "d"})
	id := uuid.MustParse(feed["id"].(string))

	state, res, err := h.Service.Commands.SetFeedEnabled(context.Background(), commands.SetFeedEnabled{
		Kind: domain.FeedHappenings, FeedID: id, Enabled: false, By: domain.EnabledByAdmin, Reason: "abuse report #12",
	})
	if err != nil || state.Enabled || state.EnabledBy != "admin" {
		t.Fatalf("operator disable: %+v, %v", state, err)
	}
	if err := h.Service.Waiter.Wait(context.Background(), res.Position, res.EventTypes); err != nil {
		t.Fatal(err)
	}
	got := wantDataObject(t, c.do(t, "GET", "/feeds/events/"+id.String(), nil), http.StatusOK)
	if got["enabled"] != false || got["enabledSource"] != "admin" || got["enabledReason"] != "abuse report #12" {
		t.Fatalf("feed after the operator's disable: %s", jsonOf(got))
	}
	got = wantDataObject(t, c.do(t, "PATCH", "/feeds/events/"+id.String(), map[string]any{"enabled": true}), http.StatusOK)
	if got["enabled"] != true || got["enabledSource"] != "api" {
		t.Fatalf("feed after the API's enable: %s", jsonOf(got))
	}
	if _, ok := got["enabledReason"]; ok {
		t.Fatalf("an enable without a reason keeps the old one: %s", jsonOf(got))
	}
}

func TestEventFeedSourcesAttachExistingRecords(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := createEventFeed(t, c, map[string]any{"name": "Venues", "description": "d"})
	feedID := feed["id"].(string)
	record := wantDataObject(t, c.do(t, "POST", "/sources", site("venue.example")), http.StatusCreated)
	sourcesPath := "/feeds/events/" + feedID + "/sources"

	att := wantDataObject(t, c.do(t, "POST", sourcesPath, map[string]any{"sourceType": "site", "sourceId": record["id"]}), http.StatusCreated)
	wantKeys(t, "association", att, "id", "eventFeedId", "sourceType", "sourceId", "createdAt")
	if att["eventFeedId"] != feedID || att["sourceType"] != "site" || att["sourceId"] != record["id"] {
		t.Fatalf("association is %s", jsonOf(att))
	}

	t.Run("it is listed at once", func(t *testing.T) {
		list := wantDataList(t, c.do(t, "GET", sourcesPath, nil))
		if len(list) != 1 || jsonOf(list[0]) != jsonOf(att) {
			t.Fatalf("list answers %s, want [%s]", jsonOf(list), jsonOf(att))
		}
	})
	t.Run("attaching the same record again is a conflict", func(t *testing.T) {
		wantConflict(t, c.do(t, "POST", sourcesPath, map[string]any{"sourceType": "site", "sourceId": record["id"]}))
	})
	t.Run("a record of another type is a bad request naming sourceType", func(t *testing.T) {
		wantEventBadRequest(t, c.do(t, "POST", sourcesPath, map[string]any{"sourceType": "sitemap", "sourceId": record["id"]}), "sourceType")
	})
	t.Run("an unknown record is not found", func(t *testing.T) {
		wantError(t, c.do(t, "POST", sourcesPath, map[string]any{"sourceType": "site", "sourceId": randomID()}), http.StatusNotFound, "NOT_FOUND")
	})
	t.Run("another organization's record is not found", func(t *testing.T) {
		other := as(h, h.NewKey("other-org"))
		theirs := wantDataObject(t, other.do(t, "POST", "/sources", site("their.example")), http.StatusCreated)
		wantError(t, c.do(t, "POST", sourcesPath, map[string]any{"sourceType": "site", "sourceId": theirs["id"]}), http.StatusNotFound, "NOT_FOUND")
	})
	t.Run("a news attachment's sourceId attaches the same record", func(t *testing.T) {
		news := createFeed(t, c, "News", "d")
		newsAtt := attach(t, c, news["id"].(string), site("shared.example"))
		other := createEventFeed(t, c, map[string]any{"name": "Shared", "description": "d"})
		got := wantDataObject(t, c.do(t, "POST", "/feeds/events/"+other["id"].(string)+"/sources",
			map[string]any{"sourceType": "site", "sourceId": newsAtt["sourceId"]}), http.StatusCreated)
		if got["sourceId"] != newsAtt["sourceId"] {
			t.Fatalf("attached %v, want %v", got["sourceId"], newsAtt["sourceId"])
		}
	})
	t.Run("removing the association answers success and it is gone", func(t *testing.T) {
		wantDeleted(t, c.do(t, "DELETE", sourcesPath+"/"+att["id"].(string), nil))
		if list := wantDataList(t, c.do(t, "GET", sourcesPath, nil)); len(list) != 0 {
			t.Fatalf("list after removal is %s", jsonOf(list))
		}
		wantError(t, c.do(t, "DELETE", sourcesPath+"/"+att["id"].(string), nil), http.StatusNotFound, "NOT_FOUND")
	})
	t.Run("deleting the feed removes it and its associations", func(t *testing.T) {
		wantDeleted(t, c.do(t, "DELETE", "/feeds/events/"+feedID, nil))
		wantError(t, c.do(t, "GET", "/feeds/events/"+feedID, nil), http.StatusNotFound, "NOT_FOUND")
		wantError(t, c.do(t, "GET", sourcesPath, nil), http.StatusNotFound, "NOT_FOUND")
	})
}

func TestEventFeedsAreIsolatedPerOrganizationAndScope(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := createEventFeed(t, c, map[string]any{"name": "Mine", "description": "d"})
	path := "/feeds/events/" + feed["id"].(string)
	other := as(h, h.NewKey("other-org"))
	for _, r := range []servicetest.Response{
		other.do(t, "GET", path, nil),
		other.do(t, "PATCH", path, map[string]any{"name": "theirs"}),
		other.do(t, "DELETE", path, nil),
		other.do(t, "GET", path+"/sources", nil),
	} {
		wantError(t, r, http.StatusNotFound, "NOT_FOUND")
	}
	if list := wantDataList(t, other.do(t, "GET", "/feeds/events", nil)); len(list) != 0 {
		t.Fatalf("another organization lists %s", jsonOf(list))
	}
	newsOnly := as(h, h.NewKey("acme", auth.ScopeNews))
	wantForbidden(t, newsOnly.do(t, "GET", "/feeds/events", nil))
}
