package http_test

import (
	"bytes"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/internal/logctx"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// logText is what the service logged so far (lockedBuffer of
// requestid_test.go).
func logText(b *lockedBuffer) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// anonymous is no Authorization header: what a feed reader sends.
var anonymous = map[string]string{"Authorization": ""}

// pathOf is an absolute URL's path and query, for the harness.
func pathOf(t *testing.T, raw any) string {
	t.Helper()
	s, ok := raw.(string)
	if !ok {
		t.Fatalf("no URL: %v", raw)
	}
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() {
		t.Fatalf("not an absolute URL: %q", s)
	}
	return u.RequestURI()
}

func TestASubscriptionAddressOpensItsFeedsOutputsAloneUntilRevoked(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	h := servicetest.StartLogged(t, logctx.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	f := &itemFixture{h: h}
	f.feedID = h.Do("POST", "/feeds/news", map[string]string{"name": "items", "description": "d"}).MustStatus(t, 201).Data()["id"].(string)
	other := h.Do("POST", "/feeds/news", map[string]string{"name": "other", "description": "d"}).MustStatus(t, 201).Data()["id"].(string)
	events := newEventFeed(t, h, "events")

	created := h.Do("POST", "/feeds/news/"+f.feedID+"/subscriptions", nil).MustStatus(t, 201).Data()
	urls := created["urls"].(map[string]any)
	atom, jsonFeed := pathOf(t, urls["atom"]), pathOf(t, urls["json"])
	token := strings.TrimPrefix(atom[strings.Index(atom, "?"):], "?token=")

	t.Run("both outputs answer without a key", func(t *testing.T) {
		parseFeed(t, fetch(t, h, atom, anonymous).must(t, 200), "atom")
		parseFeed(t, fetch(t, h, jsonFeed, anonymous).must(t, 200), "json")
	})
	t.Run("the token is the same in both and an Authorization header changes nothing", func(t *testing.T) {
		if !strings.HasSuffix(jsonFeed, "?token="+token) {
			t.Fatalf("json URL %s does not carry the atom URL's token", jsonFeed)
		}
		fetch(t, h, atom, map[string]string{"Authorization": "Bearer " + h.NewKey("other-org")}).must(t, 200)
	})
	t.Run("the calendar of an event feed has its own addresses", func(t *testing.T) {
		c := h.Do("POST", "/feeds/events/"+events.id.String()+"/subscriptions", nil).MustStatus(t, 201).Data()
		cal := pathOf(t, c["urls"].(map[string]any)["calendar"])
		if o := fetch(t, h, cal, anonymous).must(t, 200); !bytes.HasPrefix(o.body, []byte("BEGIN:VCALENDAR")) {
			t.Fatalf("not a calendar: %.60s", o.body)
		}
	})
	for _, tc := range []struct {
		name, path string
		status     int
	}{
		{"another feed's output", "/feeds/news/" + other + "/feed.atom?token=" + token, 404},
		{"an event feed's calendar", "/feeds/events/" + events.id.String() + "/calendar.ics?token=" + token, 404},
		{"the feed's item list", "/feeds/news/" + f.feedID + "/items?token=" + token, 401},
		{"the feed itself", "/feeds/news/" + f.feedID + "?token=" + token, 401},
		{"an altered secret", strings.Replace(atom, token, token[:len(token)-1]+flip(token[len(token)-1]), 1), 404},
		{"an altered prefix", strings.Replace(atom, token, token[:5]+flip(token[5])+token[6:], 1), 404},
		{"an empty token", "/feeds/news/" + f.feedID + "/feed.atom?token=", 404},
	} {
		t.Run("it does not open "+tc.name, func(t *testing.T) {
			fetch(t, h, tc.path, anonymous).must(t, tc.status)
		})
	}
	t.Run("the list shows the address without its token", func(t *testing.T) {
		r := h.Do("GET", "/feeds/news/"+f.feedID+"/subscriptions", nil).MustStatus(t, 200)
		if list := r.List(); len(list) != 1 || list[0]["id"] != created["id"] || list[0]["createdAt"] != created["createdAt"] {
			t.Fatalf("list %s, want the one address", r.Raw)
		}
		if strings.Contains(r.Raw, token[4:16]) {
			t.Fatalf("the list shows the token: %s", r.Raw)
		}
	})
	t.Run("the token is never in the service's log", func(t *testing.T) {
		if secret := token[len(token)-64:]; strings.Contains(logText(logs), secret) || strings.Contains(logText(logs), token) {
			t.Fatal("the log holds the token")
		}
		if !strings.Contains(logText(logs), "/feed.atom") {
			t.Fatal("the log holds no request to the output: the check above proves nothing")
		}
	})
	t.Run("a revoked address answers 404 at once", func(t *testing.T) {
		h.Do("DELETE", "/feeds/news/"+f.feedID+"/subscriptions/"+created["id"].(string), nil).MustStatus(t, 200)
		fetch(t, h, atom, anonymous).must(t, 404)
		fetch(t, h, jsonFeed, anonymous).must(t, 404)
		if list := h.Do("GET", "/feeds/news/"+f.feedID+"/subscriptions", nil).MustStatus(t, 200).List(); len(list) != 0 {
			t.Fatalf("a revoked address is listed: %v", list)
		}
		h.Do("DELETE", "/feeds/news/"+f.feedID+"/subscriptions/"+created["id"].(string), nil).MustStatus(t, 404)
	})
}

func flip(c byte) string {
	if c == 'a' {
		return "b"
	}
	return "a"
}

func TestSubscriptionAddressesAreTheOrganizationsAndNeedTheFeedsScopeAndItems(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	feed := h.Do("POST", "/feeds/news", map[string]string{"name": "items", "description": "d"}).MustStatus(t, 201).Data()["id"].(string)
	sub := h.Do("POST", "/feeds/news/"+feed+"/subscriptions", nil).MustStatus(t, 201).Data()["id"].(string)
	otherOrg := h.NewKey("other-org")
	for _, tc := range []struct {
		name, key, method, path string
		status                  int
	}{
		{"another organization creates", otherOrg, "POST", "/feeds/news/" + feed + "/subscriptions", 404},
		{"another organization lists", otherOrg, "GET", "/feeds/news/" + feed + "/subscriptions", 404},
		{"another organization revokes", otherOrg, "DELETE", "/feeds/news/" + feed + "/subscriptions/" + sub, 404},
		{"a key without items creates", h.NewKey("acme", auth.ScopeNews), "POST", "/feeds/news/" + feed + "/subscriptions", 403},
		{"a key without news creates", h.NewKey("acme", auth.ScopeItems), "POST", "/feeds/news/" + feed + "/subscriptions", 403},
		{"the address is revoked through the event feeds' path", h.Key, "DELETE", "/feeds/events/" + feed + "/subscriptions/" + sub, 404},
		{"a feed that does not exist", h.Key, "POST", "/feeds/news/" + sub + "/subscriptions", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.DoWith(tc.method, tc.path, nil, map[string]string{"Authorization": "Bearer " + tc.key}).MustStatus(t, tc.status)
		})
	}
	t.Run("after all that the address is still there", func(t *testing.T) {
		if list := h.Do("GET", "/feeds/news/"+feed+"/subscriptions", nil).MustStatus(t, 200).List(); len(list) != 1 {
			t.Fatalf("list %v", list)
		}
	})
	t.Run("a deleted feed's address answers 404", func(t *testing.T) {
		created := h.Do("POST", "/feeds/news/"+feed+"/subscriptions", nil).MustStatus(t, 201).Data()
		atom := pathOf(t, created["urls"].(map[string]any)["atom"])
		fetch(t, h, atom, anonymous).must(t, 200)
		h.Do("DELETE", "/feeds/news/"+feed, nil).MustStatus(t, 200)
		fetch(t, h, atom, anonymous).must(t, 404)
	})
}
