package http_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// changes is one answer of an item list read with a cursor.
type changes struct {
	ids     []string // item ids, in the answer's order
	removed []string
	total   int
	hasMore bool
	next    string
}

// readChanges reads list (a path with or without a query) from cursor,
// which is sent as given: "" asks for the start of the feed's changes.
func readChanges(t *testing.T, h *servicetest.Harness, list, cursor string) changes {
	t.Helper()
	sep := "?"
	if strings.Contains(list, "?") {
		sep = "&"
	}
	r := h.Do("GET", list+sep+"cursor="+url.QueryEscape(cursor), nil).MustStatus(t, 200)
	return changesOf(t, r)
}

func changesOf(t *testing.T, r servicetest.Response) changes {
	t.Helper()
	var c changes
	for _, it := range itemList(t, r) {
		c.ids = append(c.ids, it["id"].(string))
	}
	removed, ok := r.Data()["removedItemIds"].([]any)
	if !ok {
		t.Fatalf("a page of changes has no removedItemIds array: %s", r.Raw)
	}
	for _, id := range removed {
		c.removed = append(c.removed, id.(string))
	}
	c.total = num(r.Data()["total"])
	p := r.Data()["pagination"].(map[string]any)
	c.hasMore = p["hasMore"].(bool)
	c.next = nextCursor(t, r)
	return c
}

func nextCursor(t testing.TB, r servicetest.Response) string {
	t.Helper()
	next, _ := r.Data()["pagination"].(map[string]any)["nextCursor"].(string)
	if next == "" {
		t.Fatalf("no pagination.nextCursor in %s", r.Raw)
	}
	return next
}

func TestTheNewsCursorPagesThroughEveryItemInTheOrderItWasAdded(t *testing.T) {
	f := newItemFixture(t, full(0), full(1), full(2), full(3), full(4))
	h, list := f.h, "/feeds/news/"+f.feedID+"/items"

	first := readChanges(t, h, list+"?limit=2", "")
	second := readChanges(t, h, list+"?limit=2", first.next)
	third := readChanges(t, h, list+"?limit=2", second.next)
	steps := []struct {
		name    string
		got     changes
		ids     []string
		total   int
		hasMore bool
	}{
		{"the first page from the start holds the two oldest items and says more follow", first, f.items[:2], 5, true},
		{"the second page continues after them", second, f.items[2:4], 5, true},
		{"the third holds the last item and says nothing follows", third, f.items[4:], 5, false},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if !slices.Equal(s.got.ids, s.ids) || s.got.total != s.total || s.got.hasMore != s.hasMore || len(s.got.removed) != 0 {
				t.Fatalf("got %+v, want items %v total %d hasMore %v", s.got, s.ids, s.total, s.hasMore)
			}
		})
	}

	t.Run("polling at the end finds nothing and keeps its place", func(t *testing.T) {
		again := readChanges(t, h, list, third.next)
		if len(again.ids) != 0 || again.total != 5 || again.hasMore || again.next != third.next {
			t.Fatalf("got %+v, want nothing, the feed's total and the same cursor", again)
		}
	})

	offsetPage := h.Do("GET", list+"?limit=1", nil).MustStatus(t, 200)
	fromOffsetPage := nextCursor(t, offsetPage)
	att := h.Do("GET", "/feeds/news/"+f.feedID+"/sources", nil).MustStatus(t, 200).List()[0]
	added := f.add(t, att, full(5))

	t.Run("an item added later is the only one after either cursor, on both shapes", func(t *testing.T) {
		for _, path := range []string{list, "/v0" + list} {
			for _, from := range []string{third.next, fromOffsetPage} {
				got := readChanges(t, h, path, from)
				if !slices.Equal(got.ids, []string{added}) || got.hasMore {
					t.Fatalf("%s from a cursor: %+v, want only %s", path, got, added)
				}
			}
		}
	})

	t.Run("a date filter selects among the changes and the cursor still moves past the others", func(t *testing.T) {
		future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		got := readChanges(t, h, list+"?since="+future, "")
		if len(got.ids) != 0 || got.hasMore {
			t.Fatalf("got %+v, want no item created after %s", got, future)
		}
		if after := readChanges(t, h, list, got.next); len(after.ids) != 0 {
			t.Fatalf("the filtered poll's cursor stops before items it skipped: %+v", after)
		}
	})
}

func TestCursorsAreValidatedInTheDialectOfTheirList(t *testing.T) {
	h := servicetest.Start(t)
	news := h.Do("POST", "/feeds/news", map[string]string{"name": "n", "description": "d"}).MustStatus(t, 201).Data()["id"].(string)
	other := h.Do("POST", "/feeds/news", map[string]string{"name": "o", "description": "d"}).MustStatus(t, 201).Data()["id"].(string)
	events := newEventFeed(t, h, "e")
	newsList, eventList := "/feeds/news/"+news+"/items", events.items()
	valid := nextCursor(t, h.Do("GET", newsList, nil).MustStatus(t, 200))
	otherCursor := nextCursor(t, h.Do("GET", "/feeds/news/"+other+"/items", nil).MustStatus(t, 200))
	eventCursor := nextCursor(t, h.Do("GET", eventList, nil).MustStatus(t, 200))
	flipped := []byte(valid)
	flipped[30] = map[bool]byte{true: 'B', false: 'A'}[flipped[30] == 'A'] // still base64url, no longer the checksummed bytes
	cases := []struct {
		name, path, cursor, extra, field, code string
	}{
		{"a word that is no cursor", newsList, "not-a-cursor", "", "cursor", "VALIDATION_ERROR"},
		{"a cursor with one character changed", newsList, string(flipped), "", "cursor", "VALIDATION_ERROR"},
		{"a cursor cut short", newsList, valid[:len(valid)-1], "", "cursor", "VALIDATION_ERROR"},
		{"a cursor of another feed", newsList, otherCursor, "", "cursor", "VALIDATION_ERROR"},
		{"a cursor with an offset", newsList, valid, "&offset=0", "offset", "VALIDATION_ERROR"},
		{"a cursor given on the legacy list of another feed", "/v0" + newsList, otherCursor, "", "cursor", "VALIDATION_ERROR"},
		{"a news cursor on an event list, in the events dialect", eventList, valid, "", "cursor", "BAD_REQUEST"},
		{"an event cursor with orderBy", eventList, eventCursor, "&orderBy=created", "orderBy", "BAD_REQUEST"},
		{"an event cursor with an offset", "/v0" + eventList, eventCursor, "&offset=20", "offset", "BAD_REQUEST"},
		{"an event cursor with since after until", eventList, eventCursor,
			"&since=" + url.QueryEscape(rfc(time.Now().Add(48*time.Hour))) + "&until=" + url.QueryEscape(rfc(time.Now().Add(24*time.Hour))), "until", "BAD_REQUEST"},
		{"an event cursor with a since outside the window", eventList, eventCursor, "&since=2001-01-01", "since", "BAD_REQUEST"},
	}
	for _, c := range cases {
		t.Run(c.name+" answers 400 naming "+c.field, func(t *testing.T) {
			r := h.Do("GET", c.path+"?cursor="+url.QueryEscape(c.cursor)+c.extra, nil).MustStatus(t, 400)
			e := r.Body["error"].(map[string]any)
			details, _ := e["details"].(map[string]any)
			if e["code"] != c.code || details["field"] != c.field {
				t.Fatalf("body %s, want code %s naming %s", r.Raw, c.code, c.field)
			}
			if len(c.cursor) > 8 && strings.Contains(r.Raw, c.cursor[:8]) {
				t.Fatalf("the answer echoes the cursor: %s", r.Raw)
			}
		})
	}
	t.Run("a cursor given twice answers 400", func(t *testing.T) {
		h.Do("GET", newsList+"?cursor="+valid+"&cursor="+valid, nil).MustStatus(t, 400)
	})
}

func TestTheEventCursorReportsAddsChangesAndRemovals(t *testing.T) {
	h := servicetest.Start(t)
	f := newEventFeed(t, h, "Polled")
	one, two := f.attach(t, "one.example"), f.attach(t, "two.example")
	soon := time.Now().Add(day(1)).Truncate(time.Hour)
	later := time.Now().Add(day(40)).Truncate(time.Hour) // beyond any list range
	near, far := oneTime("near", soon, time.Hour), oneTime("far", later, time.Hour)
	nearItem, farItem := f.add(t, one, near).String(), f.add(t, two, far).String()

	start := readChanges(t, h, f.items(), "")
	t.Run("from the start every item comes, in the order added, even one beyond the default range", func(t *testing.T) {
		if !slices.Equal(start.ids, []string{nearItem, farItem}) || start.hasMore || len(start.removed) != 0 {
			t.Fatalf("got %+v", start)
		}
	})

	moved := oneTime("near", soon.Add(2*time.Hour), time.Hour)
	f.add(t, one, moved)
	changed := readChanges(t, h, f.items(), start.next)
	t.Run("a changed event comes again, as it is now", func(t *testing.T) {
		if !slices.Equal(changed.ids, []string{nearItem}) {
			t.Fatalf("got %+v, want only %s", changed, nearItem)
		}
		r := h.Do("GET", f.items()+"?cursor="+start.next, nil).MustStatus(t, 200)
		next := occurrenceBlock(itemList(t, r)[0])["nextOccurrence"].(map[string]any)
		if next["startDateTime"] != soon.Add(2*time.Hour).UTC().Format("2006-01-02T15:04:05.000Z") {
			t.Fatalf("the changed item shows %v", next)
		}
	})

	res, err := h.Service.Commands.DetachSource(context.Background(), commands.DetachSource{FeedRef: f.ref(), AttachmentID: two.ID})
	if err != nil {
		t.Fatal(err)
	}
	projected(t, h, res)
	detached := readChanges(t, h, f.items(), changed.next)
	t.Run("an item whose last source was removed is listed as removed", func(t *testing.T) {
		if len(detached.ids) != 0 || !slices.Equal(detached.removed, []string{farItem}) || detached.total != 1 {
			t.Fatalf("got %+v, want %s removed and one item left in the feed", detached, farItem)
		}
	})

	t.Run("a removal is reported whatever the filters", func(t *testing.T) {
		filtered := readChanges(t, h, f.items()+"?status=cancelled", changed.next)
		if !slices.Equal(filtered.removed, []string{farItem}) {
			t.Fatalf("got %+v", filtered)
		}
	})

	three := f.attach(t, "two.example")
	f.add(t, three, far)
	back := readChanges(t, h, "/v0"+f.items(), detached.next)
	t.Run("found again, the item comes back with its id", func(t *testing.T) {
		if !slices.Equal(back.ids, []string{farItem}) || len(back.removed) != 0 {
			t.Fatalf("got %+v", back)
		}
	})

	t.Run("since and until select by occurrence among the changes", func(t *testing.T) {
		q := "?since=" + url.QueryEscape(rfc(time.Now())) + "&until=" + url.QueryEscape(rfc(time.Now().Add(day(7))))
		got := readChanges(t, h, f.items()+q, "")
		if !slices.Equal(got.ids, []string{nearItem}) || len(got.removed) != 0 || got.total != 1 {
			t.Fatalf("got %+v, want only the near event", got)
		}
	})

	t.Run("one bound alone leaves the other open", func(t *testing.T) {
		for _, q := range []string{"?until=" + url.QueryEscape(rfc(time.Now().Add(day(7)))), "?until=" + url.QueryEscape(rfc(time.Now().Add(day(7)))) + "&status=scheduled"} {
			got := readChanges(t, h, f.items()+q, "")
			if !slices.Equal(got.ids, []string{nearItem}) || got.total != 1 {
				t.Fatalf("%s: got %+v, want only the near event", q, got)
			}
		}
		got := readChanges(t, h, f.items()+"?since="+url.QueryEscape(rfc(time.Now().Add(day(7)))), "")
		if !slices.Equal(got.ids, []string{farItem}) || got.total != 1 {
			t.Fatalf("since alone: got %+v, want only the far event", got)
		}
	})

	t.Run("the same cursor works on the legacy list and after the last change finds nothing", func(t *testing.T) {
		for _, path := range []string{f.items(), "/v0" + f.items()} {
			if end := readChanges(t, h, path, back.next); len(end.ids)+len(end.removed) != 0 || end.next != back.next {
				t.Fatalf("%s: %+v", path, end)
			}
		}
	})

	t.Run("a rebuild keeps every change in its place", func(t *testing.T) {
		before := readChanges(t, h, f.items()+"?limit=1", "")
		eventitems, _ := projectors.ByName("eventitems")
		if err := projections.Rebuild(context.Background(), h.DSN, h.Service.DB, h.Service.Store, eventitems, servicetest.Logger()); err != nil {
			t.Fatal(err)
		}
		after := readChanges(t, h, f.items()+"?limit=1", "")
		if !slices.Equal(before.ids, after.ids) || before.next != after.next || !after.hasMore || after.total != 2 {
			t.Fatalf("before %+v, after %+v", before, after)
		}
		if end := readChanges(t, h, f.items(), back.next); len(end.ids)+len(end.removed) != 0 {
			t.Fatalf("after the rebuild the last cursor finds %+v", end)
		}
	})

	t.Run("a deleted feed answers 404 to its cursor", func(t *testing.T) {
		res, err := h.Service.Commands.DeleteFeed(context.Background(), f.ref())
		if err != nil {
			t.Fatal(err)
		}
		projected(t, h, res)
		h.Do("GET", f.items()+"?cursor="+back.next, nil).MustStatus(t, 404)
	})
}
