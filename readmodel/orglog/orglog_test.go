package orglog_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/readmodel/orglog"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// logged is an event of the global log as the test reads it from the
// events table itself.
type logged struct {
	Commit, Prepare int64
	Type            string
	Org             *string
	Data            json.RawMessage
}

func (l logged) position() eventstore.Position {
	return eventstore.Position{Commit: uint64(l.Commit), Prepare: uint64(l.Prepare)}
}

// history writes two organizations' feeds, items and feedback (sharing a
// source record) and an organization's event feeds, then waits for the
// orglog projector, which writes do not wait for.
func history(t *testing.T) (*servicetest.Harness, servicetest.FeedbackHistory) {
	h := servicetest.Start(t)
	hist := servicetest.WriteFeedbackHistory(h, 7)
	projectortest.HappeningWorkload(t, h.Service.Commands, hist.Org)
	catchUp(t, h)
	return h, hist
}

func catchUp(t *testing.T, h *servicetest.Harness) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Service.Runner.Progress("orglog").WaitFor(ctx, projectortest.HeadPosition(t, h.Service.DB)); err != nil {
		t.Fatalf("orglog did not catch up: %v", err)
	}
}

func readAll(t *testing.T, q *orglog.Queries, org uuid.UUID, f orglog.Filter) []orglog.Entry {
	t.Helper()
	var out []orglog.Entry
	for {
		page, err := q.Read(context.Background(), org, f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Entries...)
		if !page.HasMore {
			return out
		}
		if !f.After.Less(page.Next) {
			t.Fatalf("a page with more to come did not move: %v", page.Next)
		}
		f.After = page.Next
	}
}

func TestAnOrganizationsLogHoldsExactlyItsOwnEventsInLogOrderBeforeAndAfterARebuild(t *testing.T) {
	h, hist := history(t)
	ctx := context.Background()
	q := orglog.NewQueries(h.Service.DB.Bun)
	var all []logged
	if err := h.Service.DB.Bun.NewRaw(`SELECT transaction_id::text::bigint AS commit, global_position AS prepare, event_type AS type,
			metadata->>'organizationId' AS org, data FROM events ORDER BY transaction_id, global_position`).Scan(ctx, &all); err != nil {
		t.Fatal(err)
	}
	types := orglog.Types()
	feedsOf := map[uuid.UUID][]uuid.UUID{}
	for _, org := range []uuid.UUID{hist.Org, hist.Other} {
		got := readAll(t, q, org, orglog.Filter{Limit: 7})
		// What the log says: every event recorded for the organization of
		// a type the log holds, but calendar events' changes, which are
		// shared facts (checked below).
		var want []eventstore.Position
		for _, e := range all {
			if e.Org != nil && *e.Org == org.String() && slices.Contains(types, e.Type) {
				want = append(want, e.position())
			}
		}
		var own []eventstore.Position
		for i, e := range got {
			if i > 0 && !got[i-1].Position.Less(e.Position) {
				t.Fatalf("entries %d and %d are out of log order: %v then %v", i-1, i, got[i-1].Position, e.Position)
			}
			if e.Type == "EventChanged" {
				continue
			}
			own = append(own, e.Position)
			feedsOf[org] = append(feedsOf[org], e.FeedIDs...)
		}
		if len(want) < 20 {
			t.Fatalf("the history recorded %d events for %s: too few to tell", len(want), org)
		}
		if !slices.Equal(own, want) {
			t.Errorf("the log of %s holds %d events of its own, the event log %d:\n got %v\nwant %v", org, len(own), len(want), own, want)
		}
	}

	t.Run("no feed of one organization appears in the other's log", func(t *testing.T) {
		for _, id := range feedsOf[hist.Other] {
			if slices.Contains(feedsOf[hist.Org], id) {
				t.Errorf("feed %s is in both organizations' logs", id)
			}
		}
		if !slices.Contains(feedsOf[hist.Other], hist.OtherFeed) || !slices.Contains(feedsOf[hist.Org], hist.News[0]) {
			t.Fatalf("the logs miss their own feeds: %v / %v", feedsOf[hist.Org], feedsOf[hist.Other])
		}
	})

	t.Run("shared facts appear only as they reached the organization's feeds", func(t *testing.T) {
		for _, org := range []uuid.UUID{hist.Org, hist.Other} {
			for _, e := range readAll(t, q, org, orglog.Filter{Limit: 1000}) {
				switch e.Type {
				case "ArticleDiscovered", "ArticleFoundOnSource", "EventDiscovered":
					t.Errorf("the log of %s holds the shared fact %s", org, e.Type)
				case "NewsItemAdded":
					var d struct {
						Content struct{ URL string }
					}
					if err := json.Unmarshal(e.Data, &d); err != nil || d.Content.URL == "" {
						t.Errorf("a news item's add carries no article content: %s", e.Data)
					}
				case "EventItemAdded":
					var d struct {
						Event *struct{ Title string }
					}
					if err := json.Unmarshal(e.Data, &d); err != nil || d.Event == nil || d.Event.Title == "" {
						t.Errorf("an event item's add carries no calendar event: %s", e.Data)
					}
				}
				if e.Type == "EventChanged" {
					for _, f := range e.FeedIDs {
						if !slices.Contains(feedsOf[org], f) {
							t.Errorf("a calendar event's change names feed %s, not of %s", f, org)
						}
					}
				}
				if e.SchemaVersion != 1 {
					t.Errorf("%s has schema version %d", e.Type, e.SchemaVersion)
				}
			}
		}
		changed := readAll(t, q, hist.Org, orglog.Filter{Types: []string{"EventChanged"}, Limit: 100})
		if len(changed) == 0 {
			t.Errorf("no calendar event's change reached the organization with event feeds: the history is too thin to tell")
		}
		// The second organization has no event feed: no calendar event
		// reached it.
		for _, e := range readAll(t, q, hist.Other, orglog.Filter{Types: []string{"EventChanged", "EventItemAdded"}, Limit: 100}) {
			t.Errorf("the organization without event feeds has %s in its log", e.Type)
		}
		// An organization that has nothing has an empty log, though the
		// shared records and articles are there.
		if got := readAll(t, q, uuid.New(), orglog.Filter{Limit: 10}); len(got) != 0 {
			t.Errorf("a new organization's log holds %d events", len(got))
		}
	})

	t.Run("filters by type and by feed keep the matching events of the whole log", func(t *testing.T) {
		whole := readAll(t, q, hist.Org, orglog.Filter{Limit: 1000})
		for _, f := range []orglog.Filter{
			{Types: []string{"FeedbackGiven"}, Limit: 3},
			{Types: []string{"NewsItemAdded", "NewsSourceAttached"}, Limit: 5},
			{FeedID: &hist.News[1], Limit: 4},
			{FeedID: &hist.Events[0], Types: []string{"EventItemAdded"}, Limit: 2},
		} {
			var want []eventstore.Position
			for _, e := range whole {
				if (f.Types == nil || slices.Contains(f.Types, e.Type)) && (f.FeedID == nil || slices.Contains(e.FeedIDs, *f.FeedID)) {
					want = append(want, e.Position)
				}
			}
			var got []eventstore.Position
			for _, e := range readAll(t, q, hist.Org, f) {
				got = append(got, e.Position)
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("filter %v: got %d events, want %d", f, len(got), len(want))
			}
		}
	})

	t.Run("a page after the last event is empty and stays where the log ends", func(t *testing.T) {
		latest, err := q.Latest(ctx, hist.Org)
		if err != nil {
			t.Fatal(err)
		}
		page, err := q.Read(ctx, hist.Org, orglog.Filter{After: latest, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) != 0 || page.HasMore || page.Next != latest {
			t.Fatalf("page after the end: %d entries, more %v, next %v (latest %v)", len(page.Entries), page.HasMore, page.Next, latest)
		}
		// A filter that matches nothing still moves the next page to the end.
		page, err = q.Read(ctx, hist.Org, orglog.Filter{Types: []string{"WebhookDeleted"}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if page.Next != latest {
			t.Fatalf("a page matching nothing continues at %v, want the log's end %v", page.Next, latest)
		}
	})

	answers := func() any {
		out := map[string][]orglog.Entry{}
		for _, org := range []uuid.UUID{hist.Org, hist.Other} {
			out[org.String()] = readAll(t, q, org, orglog.Filter{Limit: 500})
		}
		return out
	}
	projectortest.RebuildAnswersTheSame(t, h.DSN, h.Service.DB, h.Service.Store, orglog.Projector{}, answers)
}

func TestPositionsReadBackAsTheyAreWrittenAndOddOnesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		ok   bool
	}{
		{"a written position reads back", orglog.FormatPosition(eventstore.Position{Commit: 812, Prepare: 4}), true},
		{"a position without its dash is refused", "8124", false},
		{"a negative number is refused", "-1-2", false},
		{"letters are refused", "a-b", false},
		{"a number past int64 is refused", "9223372036854775808-1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := orglog.ParsePosition(tc.in)
			if ok != tc.ok {
				t.Fatalf("ParsePosition(%q) ok %v, want %v", tc.in, ok, tc.ok)
			}
			if ok && orglog.FormatPosition(p) != tc.in {
				t.Fatalf("%q read back as %q", tc.in, orglog.FormatPosition(p))
			}
		})
	}
}
