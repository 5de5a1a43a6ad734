package http_test

import (
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/internal/auth"
)

// The scope table of the README, route by route: which scopes let a key use
// each route. Every route is tried with a key of each single scope that
// matters; a key is refused with 403 exactly when it holds none of the
// route's scopes.
func TestEachRouteAnswersExactlyTheKeysHoldingOneOfItsScopes(t *testing.T) {
	t.Parallel()
	f := newItemFixture(t, full(1))
	h := f.h
	full := as(h, h.Key)
	item := f.items[0]
	items := "/feeds/news/" + f.feedID + "/items"
	sourceID := wantDataList(t, full.do(t, "GET", "/sources", nil))[0]["id"].(string)
	events := newEventFeed(t, h, "scoped events")
	eventItems := events.items()
	eventItem := events.add(t, events.attach(t, "events.example"), oneTime("scoped", time.Now().Add(day(1)).Truncate(time.Hour), time.Hour)).String()

	// Each route builds its request afresh with the full key, so routes that
	// change or delete something always have something to act on.
	type req struct {
		method, path string
		body         any
	}
	newFeed := func(t *testing.T) string { return createFeed(t, full, "scoped", "scopes")["id"].(string) }
	newAttachment := func(t *testing.T) (string, string) {
		id := newFeed(t)
		return id, attach(t, full, id, site("scoped.example"))["id"].(string)
	}
	routes := []struct {
		name   string
		scopes []auth.Scope
		status int
		build  func(t *testing.T) req
	}{
		{"list news feeds", []auth.Scope{auth.ScopeNews}, 200, func(t *testing.T) req { return req{"GET", "/feeds/news", nil} }},
		{"create a news feed", []auth.Scope{auth.ScopeNews}, 201, func(t *testing.T) req {
			return req{"POST", "/feeds/news", map[string]any{"name": "n", "description": "d"}}
		}},
		{"get a news feed", []auth.Scope{auth.ScopeNews}, 200, func(t *testing.T) req { return req{"GET", "/feeds/news/" + f.feedID, nil} }},
		{"rename a news feed", []auth.Scope{auth.ScopeNews}, 200, func(t *testing.T) req {
			return req{"PATCH", "/feeds/news/" + newFeed(t), map[string]any{"name": "renamed"}}
		}},
		{"delete a news feed", []auth.Scope{auth.ScopeNews}, 200, func(t *testing.T) req { return req{"DELETE", "/feeds/news/" + newFeed(t), nil} }},
		{"list a feed's sources", []auth.Scope{auth.ScopeNews}, 200, func(t *testing.T) req {
			return req{"GET", "/feeds/news/" + f.feedID + "/sources", nil}
		}},
		{"attach a source", []auth.Scope{auth.ScopeNews}, 201, func(t *testing.T) req {
			return req{"POST", "/feeds/news/" + newFeed(t) + "/sources", site("scoped.example")}
		}},
		{"disable a source", []auth.Scope{auth.ScopeNews}, 200, func(t *testing.T) req {
			feed, att := newAttachment(t)
			return req{"PATCH", "/feeds/news/" + feed + "/sources/" + att, map[string]any{"enabled": false}}
		}},
		{"detach a source", []auth.Scope{auth.ScopeNews}, 200, func(t *testing.T) req {
			feed, att := newAttachment(t)
			return req{"DELETE", "/feeds/news/" + feed + "/sources/" + att, nil}
		}},
		{"list items", []auth.Scope{auth.ScopeItems}, 200, func(t *testing.T) req { return req{"GET", items, nil} }},
		{"list items with their source", []auth.Scope{auth.ScopeItems}, 200, func(t *testing.T) req {
			return req{"GET", items + "?include=source", nil}
		}},
		{"get an item", []auth.Scope{auth.ScopeItems}, 200, func(t *testing.T) req { return req{"GET", items + "/" + item, nil} }},
		{"give feedback", []auth.Scope{auth.ScopeItems}, 200, func(t *testing.T) req {
			return req{"POST", items + "/" + item + "/feedback", map[string]any{"rating": "positive"}}
		}},
		{"list items on v0", []auth.Scope{auth.ScopeItems}, 200, func(t *testing.T) req { return req{"GET", "/v0" + items, nil} }},
		{"list event items", []auth.Scope{auth.ScopeItems}, 200, func(t *testing.T) req { return req{"GET", eventItems, nil} }},
		{"list event items on v0", []auth.Scope{auth.ScopeItems}, 200, func(t *testing.T) req { return req{"GET", "/v0" + eventItems, nil} }},
		{"get an event item", []auth.Scope{auth.ScopeItems}, 200, func(t *testing.T) req { return req{"GET", eventItems + "/" + eventItem, nil} }},
		{"give feedback on an event item", []auth.Scope{auth.ScopeItems}, 200, func(t *testing.T) req {
			return req{"POST", eventItems + "/" + eventItem + "/feedback", map[string]any{"rating": "positive"}}
		}},
		{"read an item's history", []auth.Scope{auth.ScopeItems}, 200, func(t *testing.T) req {
			return req{"GET", items + "/" + item + "/history", nil}
		}},
		{"read an event item's history", []auth.Scope{auth.ScopeItems}, 200, func(t *testing.T) req {
			return req{"GET", eventItems + "/" + eventItem + "/history", nil}
		}},
		{"read feedback insights", []auth.Scope{auth.ScopeItems}, 200, func(t *testing.T) req {
			return req{"GET", "/insights/feedback?groupBy=feed", nil}
		}},
		{"rank sources by negative feedback", []auth.Scope{auth.ScopeItems}, 200, func(t *testing.T) req {
			return req{"GET", "/insights/sources/negative", nil}
		}},
		{"register a source record", []auth.Scope{auth.ScopeNews, auth.ScopeEvents}, 200, func(t *testing.T) req {
			return req{"POST", "/sources", site("news.example")}
		}},
		{"list source records", []auth.Scope{auth.ScopeNews, auth.ScopeEvents}, 200, func(t *testing.T) req { return req{"GET", "/sources", nil} }},
		{"get a source record", []auth.Scope{auth.ScopeNews, auth.ScopeEvents}, 200, func(t *testing.T) req {
			return req{"GET", "/sources/" + sourceID, nil}
		}},
		{"read the organization's log", []auth.Scope{auth.ScopeLog}, 200, func(t *testing.T) req { return req{"GET", "/log?limit=5", nil} }},
		{"parse a page", []auth.Scope{auth.ScopeParse}, 200, func(t *testing.T) req {
			return req{"POST", "/parse", map[string]any{"html": articlePage}}
		}},
	}
	keys := map[auth.Scope]caller{}
	for _, s := range auth.AllScopes() {
		keys[s] = as(h, h.NewKey("acme", s))
	}
	for _, rt := range routes {
		for _, s := range auth.AllScopes() {
			allowed := false
			for _, need := range rt.scopes {
				allowed = allowed || need == s
			}
			verdict := "is refused with 403"
			if allowed {
				verdict = "is served"
			}
			t.Run(rt.name+" with only the "+string(s)+" scope "+verdict, func(t *testing.T) {
				rq := rt.build(t)
				r := keys[s].do(t, rq.method, rq.path, rq.body)
				if !allowed {
					wantForbidden(t, r)
					return
				}
				r.MustStatus(t, rt.status)
				if r.Body["success"] != true {
					t.Fatalf("body %s", r.Raw)
				}
			})
		}
	}
	t.Run("an items key of another organization finds none of the feed's items", func(t *testing.T) {
		other := as(h, h.NewKey("other", auth.ScopeItems))
		for _, p := range []string{items, "/v0" + items, items + "/" + item} {
			wantNotFound(t, other.do(t, "GET", p, nil), "feed", f.feedID)
		}
		wantNotFound(t, other.do(t, "POST", items+"/"+item+"/feedback", map[string]any{"rating": "positive"}), "feed", f.feedID)
	})
}
