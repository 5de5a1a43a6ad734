package http_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// Contract tests of the news feed endpoints (api.md 2.1, 4.1; D2, D6, D7).

// wantFeed fails unless m is exactly a news feed (2.1) and returns its times.
func wantFeed(t *testing.T, what string, m map[string]any) (created, updated time.Time) {
	t.Helper()
	wantKeys(t, what, m, "id", "name", "description", "createdAt", "updatedAt")
	wantUUID(t, what+".id", m["id"])
	wantString(t, what+".name", m["name"])
	wantString(t, what+".description", m["description"])
	created = wantTimestamp(t, what+".createdAt", m["createdAt"])
	updated = wantTimestamp(t, what+".updatedAt", m["updatedAt"])
	if updated.Before(created) {
		t.Fatalf("%s.updatedAt %v is before createdAt %v", what, updated, created)
	}
	return created, updated
}

func TestCreatingANewsFeedAnswers201WithExactlyTheFeedFields(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)

	r := c.do(t, "POST", "/feeds/news", map[string]any{"name": "Local news", "description": "What happens in town"})
	feed := wantDataObject(t, r, http.StatusCreated)
	created, updated := wantFeed(t, "created feed", feed)
	if feed["name"] != "Local news" || feed["description"] != "What happens in town" {
		t.Fatalf("feed echoes %v / %v", feed["name"], feed["description"])
	}
	if !created.Equal(updated) {
		t.Fatalf("a new feed has createdAt %v and updatedAt %v; want equal", created, updated)
	}

	t.Run("it is immediately visible to a get", func(t *testing.T) {
		got := wantDataObject(t, c.do(t, "GET", "/feeds/news/"+feed["id"].(string), nil), http.StatusOK)
		wantFeed(t, "fetched feed", got)
		if jsonOf(got) != jsonOf(feed) {
			t.Fatalf("get answers %s, create answered %s", jsonOf(got), jsonOf(feed))
		}
	})
	t.Run("it is immediately visible to the list", func(t *testing.T) {
		feeds := wantDataList(t, c.do(t, "GET", "/feeds/news", nil))
		if len(feeds) != 1 || jsonOf(feeds[0]) != jsonOf(feed) {
			t.Fatalf("list answers %s, want [%s]", jsonOf(feeds), jsonOf(feed))
		}
	})
	t.Run("names and descriptions are trimmed", func(t *testing.T) {
		got := createFeed(t, c, "  Padded  ", "\tdesc\n")
		if got["name"] != "Padded" || got["description"] != "desc" {
			t.Fatalf("stored %q / %q", got["name"], got["description"])
		}
	})
	t.Run("unicode and one-character values are kept", func(t *testing.T) {
		got := createFeed(t, c, "é", "Nachrichten aus Zürich — 新闻")
		if got["name"] != "é" || got["description"] != "Nachrichten aus Zürich — 新闻" {
			t.Fatalf("stored %q / %q", got["name"], got["description"])
		}
	})
	t.Run("unknown members are ignored", func(t *testing.T) {
		got := wantDataObject(t, c.do(t, "POST", "/feeds/news", map[string]any{"name": "n", "description": "d", "id": randomID(), "enabled": false}), http.StatusCreated)
		wantFeed(t, "feed", got)
	})
	t.Run("every create mints a new id", func(t *testing.T) {
		a := createFeed(t, c, "Same", "same")
		b := createFeed(t, c, "Same", "same")
		if a["id"] == b["id"] {
			t.Fatalf("two creates answered the same id %v", a["id"])
		}
	})
}

func TestCreatingAFeedWithAMissingEmptyOrMistypedFieldAnswers400NamingIt(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	cases := []struct {
		name  string
		body  string
		field string
	}{
		{"an empty object", `{}`, "name"},
		{"a missing name", `{"description":"d"}`, "name"},
		{"a null name", `{"name":null,"description":"d"}`, "name"},
		{"an empty name", `{"name":"","description":"d"}`, "name"},
		{"a whitespace name", `{"name":"  \t\n ","description":"d"}`, "name"},
		{"a missing description", `{"name":"n"}`, "description"},
		{"a null description", `{"name":"n","description":null}`, "description"},
		{"an empty description", `{"name":"n","description":""}`, "description"},
		{"a whitespace description", `{"name":"n","description":"   "}`, "description"},
		{"a numeric name", `{"name":5,"description":"d"}`, "name"},
		{"a boolean name", `{"name":true,"description":"d"}`, "name"},
		{"an array name", `{"name":["n"],"description":"d"}`, "name"},
		{"an object name", `{"name":{"n":1},"description":"d"}`, "name"},
		{"a boolean description", `{"name":"n","description":true}`, "description"},
		{"a numeric description", `{"name":"n","description":1.5}`, "description"},
		{"an over-long name", `{"name":"` + strings.Repeat("n", 201) + `","description":"d"}`, "name"},
		{"an over-long description", `{"name":"n","description":"` + strings.Repeat("d", 2001) + `"}`, "description"},
		{"a NUL character in the name", `{"name":"a\u0000b","description":"d"}`, "name"},
		{"a NUL character in the description", `{"name":"n","description":"\u0000"}`, "description"},
	}
	for _, tc := range cases {
		t.Run("with "+tc.name, func(t *testing.T) {
			wantValidation(t, c.do(t, "POST", "/feeds/news", tc.body), tc.field)
		})
	}
	t.Run("none of them created a feed", func(t *testing.T) {
		if feeds := wantDataList(t, c.do(t, "GET", "/feeds/news", nil)); len(feeds) != 0 {
			t.Fatalf("refused creates left feeds: %s", jsonOf(feeds))
		}
	})
}

func TestListingFeedsShowsTheCallersOrganizationsFeedsNewestFirst(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	acme := as(h, h.Key)
	globex := as(h, h.NewKey("globex"))

	t.Run("an organization without feeds gets an empty array", func(t *testing.T) {
		if feeds := wantDataList(t, acme.do(t, "GET", "/feeds/news", nil)); len(feeds) != 0 {
			t.Fatalf("got %s", jsonOf(feeds))
		}
	})
	var ids []string
	for _, n := range []string{"first", "second", "third", "fourth"} {
		ids = append(ids, createFeed(t, acme, n, "feed "+n)["id"].(string))
	}
	t.Run("acme's list is newest first", func(t *testing.T) {
		feeds := wantDataList(t, acme.do(t, "GET", "/feeds/news", nil))
		if len(feeds) != len(ids) {
			t.Fatalf("%d feeds, want %d", len(feeds), len(ids))
		}
		var prev time.Time
		for i, f := range feeds {
			created, _ := wantFeed(t, "feed", f)
			if want := ids[len(ids)-1-i]; f["id"] != want {
				t.Fatalf("feed %d is %v (%v), want %s; list %s", i, f["id"], f["name"], want, jsonOf(feeds))
			}
			if i > 0 && created.After(prev) {
				t.Fatalf("feed %d created %v after the one before it (%v)", i, created, prev)
			}
			prev = created
		}
	})
	t.Run("another organization sees none of acme's feeds", func(t *testing.T) {
		if feeds := wantDataList(t, globex.do(t, "GET", "/feeds/news", nil)); len(feeds) != 0 {
			t.Fatalf("globex sees %s", jsonOf(feeds))
		}
		own := createFeed(t, globex, "globex", "theirs")
		feeds := wantDataList(t, globex.do(t, "GET", "/feeds/news", nil))
		if len(feeds) != 1 || feeds[0]["id"] != own["id"] {
			t.Fatalf("globex sees %s, want only its own feed", jsonOf(feeds))
		}
		for _, f := range wantDataList(t, acme.do(t, "GET", "/feeds/news", nil)) {
			if f["id"] == own["id"] {
				t.Fatalf("acme sees globex's feed")
			}
		}
	})
	t.Run("a second key of the same organization sees the same feeds", func(t *testing.T) {
		other := as(h, h.NewKey("acme"))
		if feeds := wantDataList(t, other.do(t, "GET", "/feeds/news", nil)); len(feeds) != len(ids) {
			t.Fatalf("a second acme key sees %d feeds, want %d", len(feeds), len(ids))
		}
	})
}

func TestGettingAFeedAnswersItOrA404ThatNamesTheFeed(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	acme := as(h, h.Key)
	globex := as(h, h.NewKey("globex"))
	mine := createFeed(t, acme, "Mine", "acme's")
	theirs := createFeed(t, globex, "Theirs", "globex's")["id"].(string)

	t.Run("an own feed answers 200 with the feed", func(t *testing.T) {
		got := wantDataObject(t, acme.do(t, "GET", "/feeds/news/"+mine["id"].(string), nil), http.StatusOK)
		wantFeed(t, "feed", got)
		if jsonOf(got) != jsonOf(mine) {
			t.Fatalf("got %s, want %s", jsonOf(got), jsonOf(mine))
		}
	})
	t.Run("an unknown UUID answers 404 naming the feed", func(t *testing.T) {
		id := randomID()
		wantNotFound(t, acme.do(t, "GET", "/feeds/news/"+id, nil), "feed", id)
	})
	t.Run("the nil UUID answers 404", func(t *testing.T) {
		id := "00000000-0000-0000-0000-000000000000"
		wantNotFound(t, acme.do(t, "GET", "/feeds/news/"+id, nil), "feed", id)
	})
	t.Run("another organization's feed answers 404", func(t *testing.T) {
		wantNotFound(t, acme.do(t, "GET", "/feeds/news/"+theirs, nil), "feed", theirs)
	})
	t.Run("a malformed id answers 400", func(t *testing.T) {
		wantValidation(t, acme.do(t, "GET", "/feeds/news/not-a-uuid", nil), "feedId")
	})
}

func TestUpdatingAFeedChangesOnlyWhatTheBodyNames(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := createFeed(t, c, "Before", "old description")
	id := feed["id"].(string)
	path := "/feeds/news/" + id
	created, last := wantFeed(t, "feed", feed)

	// patch sends a change and checks the answer is the feed, that createdAt
	// stays, and that updatedAt moved forward exactly when moved is true.
	patch := func(t *testing.T, body any, moved bool) map[string]any {
		t.Helper()
		time.Sleep(3 * time.Millisecond) // timestamps have millisecond precision
		got := wantDataObject(t, c.do(t, "PATCH", path, body), http.StatusOK)
		gotCreated, gotUpdated := wantFeed(t, "updated feed", got)
		if got["id"] != id || !gotCreated.Equal(created) {
			t.Fatalf("update changed id or createdAt: %s", jsonOf(got))
		}
		switch {
		case moved && !gotUpdated.After(last):
			t.Fatalf("updatedAt %v did not move past %v", gotUpdated, last)
		case !moved && !gotUpdated.Equal(last):
			t.Fatalf("updatedAt moved from %v to %v on an update that changed nothing", last, gotUpdated)
		}
		last = gotUpdated
		again := wantDataObject(t, c.do(t, "GET", path, nil), http.StatusOK)
		if jsonOf(again) != jsonOf(got) {
			t.Fatalf("get after update answers %s, the update answered %s", jsonOf(again), jsonOf(got))
		}
		return got
	}

	t.Run("a new name", func(t *testing.T) {
		got := patch(t, map[string]any{"name": "After"}, true)
		if got["name"] != "After" || got["description"] != "old description" {
			t.Fatalf("got %s", jsonOf(got))
		}
	})
	t.Run("a new description", func(t *testing.T) {
		got := patch(t, map[string]any{"description": "new description"}, true)
		if got["name"] != "After" || got["description"] != "new description" {
			t.Fatalf("got %s", jsonOf(got))
		}
	})
	t.Run("both at once, trimmed", func(t *testing.T) {
		got := patch(t, map[string]any{"name": " Both ", "description": " both "}, true)
		if got["name"] != "Both" || got["description"] != "both" {
			t.Fatalf("got %s", jsonOf(got))
		}
	})
	t.Run("disabling moves updatedAt and enabled stays out of the body", func(t *testing.T) {
		patch(t, map[string]any{"enabled": false}, true)
	})
	t.Run("disabling again changes nothing", func(t *testing.T) {
		patch(t, map[string]any{"enabled": false}, false)
	})
	t.Run("enabling moves updatedAt", func(t *testing.T) {
		patch(t, map[string]any{"enabled": true}, true)
	})
	t.Run("an empty object changes nothing", func(t *testing.T) {
		got := patch(t, map[string]any{}, false)
		if got["name"] != "Both" || got["description"] != "both" {
			t.Fatalf("got %s", jsonOf(got))
		}
	})
	t.Run("the current values again change nothing", func(t *testing.T) {
		patch(t, map[string]any{"name": "Both", "description": "both", "enabled": true}, false)
	})
	t.Run("null members are left alone", func(t *testing.T) {
		got := patch(t, `{"name":null,"description":null,"enabled":null}`, false)
		if got["name"] != "Both" || got["description"] != "both" {
			t.Fatalf("got %s", jsonOf(got))
		}
	})
	t.Run("the list shows the updated feed", func(t *testing.T) {
		feeds := wantDataList(t, c.do(t, "GET", "/feeds/news", nil))
		if len(feeds) != 1 || feeds[0]["name"] != "Both" || feeds[0]["updatedAt"] != timestampOf(last) {
			t.Fatalf("list %s", jsonOf(feeds))
		}
	})
}

func timestampOf(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func TestAnInvalidFeedUpdateAnswers400AndChangesNothing(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := createFeed(t, c, "Keep", "keep me")
	path := "/feeds/news/" + feed["id"].(string)
	cases := []struct {
		name  string
		body  string
		field string
	}{
		{"an empty name", `{"name":""}`, "name"},
		{"a whitespace name", `{"name":"   "}`, "name"},
		{"an empty description", `{"description":""}`, "description"},
		{"a valid name with an empty description", `{"name":"Changed","description":" "}`, "description"},
		{"a valid name with a bad enabled", `{"name":"Changed","enabled":"false"}`, "enabled"},
		{"a string enabled", `{"enabled":"yes"}`, "enabled"},
		{"a numeric enabled", `{"enabled":0}`, "enabled"},
		{"a numeric name", `{"name":5}`, "name"},
		{"a boolean description", `{"description":true}`, "description"},
		{"an over-long name", `{"name":"` + strings.Repeat("x", 201) + `"}`, "name"},
		{"a NUL character in the name", `{"name":"Chan\u0000ged"}`, "name"},
	}
	for _, tc := range cases {
		t.Run("with "+tc.name, func(t *testing.T) {
			wantValidation(t, c.do(t, "PATCH", path, tc.body), tc.field)
			got := wantDataObject(t, c.do(t, "GET", path, nil), http.StatusOK)
			if jsonOf(got) != jsonOf(feed) {
				t.Fatalf("after a refused update the feed is %s, was %s", jsonOf(got), jsonOf(feed))
			}
		})
	}
}

func TestUpdatingAMissingOrForeignFeedAnswers404(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	acme := as(h, h.Key)
	globex := as(h, h.NewKey("globex"))
	theirs := createFeed(t, globex, "Theirs", "globex's")

	t.Run("an unknown feed", func(t *testing.T) {
		id := randomID()
		wantNotFound(t, acme.do(t, "PATCH", "/feeds/news/"+id, map[string]any{"name": "x"}), "feed", id)
	})
	t.Run("another organization's feed, even with an empty body", func(t *testing.T) {
		id := theirs["id"].(string)
		wantNotFound(t, acme.do(t, "PATCH", "/feeds/news/"+id, map[string]any{"name": "stolen"}), "feed", id)
		wantNotFound(t, acme.do(t, "PATCH", "/feeds/news/"+id, map[string]any{}), "feed", id)
		got := wantDataObject(t, globex.do(t, "GET", "/feeds/news/"+id, nil), http.StatusOK)
		if jsonOf(got) != jsonOf(theirs) {
			t.Fatalf("globex's feed changed: %s", jsonOf(got))
		}
	})
}

func TestDeletingAFeedRemovesItForEveryLaterRequest(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	globex := as(h, h.NewKey("globex"))
	keep := createFeed(t, c, "Keep", "stays")
	gone := createFeed(t, c, "Gone", "goes")
	id := gone["id"].(string)
	path := "/feeds/news/" + id
	att := attach(t, c, id, site("deleted-feed.example"))

	t.Run("another organization cannot delete it", func(t *testing.T) {
		wantNotFound(t, globex.do(t, "DELETE", path, nil), "feed", id)
		wantDataObject(t, c.do(t, "GET", path, nil), http.StatusOK)
	})
	t.Run("delete answers exactly {success:true}", func(t *testing.T) {
		r := c.do(t, "DELETE", path, nil)
		wantDeleted(t, r)
		if strings.TrimSpace(r.Raw) != `{"success":true}` {
			t.Fatalf("delete body %s", r.Raw)
		}
	})
	t.Run("get answers 404", func(t *testing.T) {
		wantNotFound(t, c.do(t, "GET", path, nil), "feed", id)
	})
	t.Run("the list excludes it and keeps the other", func(t *testing.T) {
		feeds := wantDataList(t, c.do(t, "GET", "/feeds/news", nil))
		if len(feeds) != 1 || feeds[0]["id"] != keep["id"] {
			t.Fatalf("list after delete %s", jsonOf(feeds))
		}
	})
	t.Run("update and delete again answer 404", func(t *testing.T) {
		wantNotFound(t, c.do(t, "PATCH", path, map[string]any{"name": "back"}), "feed", id)
		wantNotFound(t, c.do(t, "PATCH", path, map[string]any{}), "feed", id)
		wantNotFound(t, c.do(t, "DELETE", path, nil), "feed", id)
	})
	t.Run("its sources answer 404", func(t *testing.T) {
		wantNotFound(t, c.do(t, "GET", path+"/sources", nil), "feed", id)
		wantNotFound(t, c.do(t, "POST", path+"/sources", site("another.example")), "feed", id)
		attPath := path + "/sources/" + att["id"].(string)
		wantNotFound(t, c.do(t, "PATCH", attPath, map[string]any{"enabled": false}), "feed", id)
		wantNotFound(t, c.do(t, "DELETE", attPath, nil), "feed", id)
	})
	t.Run("the source record itself remains known to the organization", func(t *testing.T) {
		rec := wantDataObject(t, c.do(t, "GET", "/sources/"+att["sourceId"].(string), nil), http.StatusOK)
		if rec["domain"] != "deleted-feed.example" {
			t.Fatalf("record %s", jsonOf(rec))
		}
	})
	t.Run("the other feed is untouched", func(t *testing.T) {
		got := wantDataObject(t, c.do(t, "GET", "/feeds/news/"+keep["id"].(string), nil), http.StatusOK)
		if jsonOf(got) != jsonOf(keep) {
			t.Fatalf("got %s, want %s", jsonOf(got), jsonOf(keep))
		}
	})
}
