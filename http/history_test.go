package http_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

type historyEntry struct {
	Position string         `json:"position"`
	Stream   string         `json:"stream"`
	Type     string         `json:"type"`
	At       string         `json:"at"`
	Data     map[string]any `json:"data"`
}

type historyPage struct {
	Entries    []historyEntry `json:"entries"`
	Total      int            `json:"total"`
	Pagination struct {
		HasMore bool `json:"hasMore"`
	} `json:"pagination"`
}

func readHistory(t *testing.T, r servicetest.Response) historyPage {
	t.Helper()
	var body struct {
		Data historyPage `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.Raw), &body); err != nil {
		t.Fatal(err)
	}
	return body.Data
}

// storedInOrder reads the streams straight from the store and returns
// "position type" of their events whose type keep accepts, in log order:
// what a history must list.
func storedInOrder(t *testing.T, store eventstore.Store, keep func(eventstore.RecordedEvent) bool, streams ...string) []string {
	t.Helper()
	var recs []eventstore.RecordedEvent
	for _, s := range streams {
		for r, err := range eventstore.Events(context.Background(), store, s, 100) {
			if err != nil {
				t.Fatal(err)
			}
			if keep(r) {
				recs = append(recs, r)
			}
		}
	}
	slices.SortFunc(recs, func(a, b eventstore.RecordedEvent) int {
		if a.Position.Less(b.Position) {
			return -1
		}
		return 1
	})
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.Position.String()+" "+r.Type)
	}
	return out
}

func listed(entries []historyEntry) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Position+" "+e.Type)
	}
	return out
}

func TestANewsItemsHistoryListsItsArticleItsAddAndItsFeedbackInLogOrder(t *testing.T) {
	f := newItemFixture(t, full(1))
	h := f.h
	item := f.items[0]
	path := "/feeds/news/" + f.feedID + "/items/" + item + "/history"
	for _, rating := range []string{"positive", "negative"} {
		h.Do("POST", "/feeds/news/"+f.feedID+"/items/"+item+"/feedback", map[string]any{"rating": rating, "comment": "was " + rating}).MustStatus(t, 200)
	}
	// Another organization's source finds the same article: a fact of the
	// shared article, but none of acme's business.
	other := h.NewKey("globex")
	otherFeed := h.DoWith("POST", "/feeds/news", map[string]string{"name": "g", "description": "d"},
		map[string]string{"Authorization": "Bearer " + other}).MustStatus(t, 201).Data()["id"].(string)
	otherAtt := h.DoWith("POST", "/feeds/news/"+otherFeed+"/sources", map[string]string{"sourceType": "site", "domain": "secret.example"},
		map[string]string{"Authorization": "Bearer " + other}).MustStatus(t, 201).Data()
	secretSource := otherAtt["sourceId"].(string)
	if _, _, err := h.Service.Commands.DiscoverArticle(context.Background(), commands.DiscoverArticle{
		SourceID: uuid.MustParse(secretSource), Content: full(1),
	}); err != nil {
		t.Fatal(err)
	}

	got := readHistory(t, h.Do("GET", path, nil).MustStatus(t, 200))
	types := []string{}
	for _, e := range got.Entries {
		types = append(types, e.Stream+":"+e.Type)
	}
	if want := "article:ArticleDiscovered item:NewsItemAdded item:FeedbackGiven item:FeedbackGiven"; strings.Join(types, " ") != want {
		t.Fatalf("history %v, want %s", types, want)
	}
	feedID, _ := uuid.Parse(f.feedID)
	newsPageID := uuid.MustParse(got.Entries[1].Data["newsPageId"].(string))
	want := storedInOrder(t, h.Service.Store, func(r eventstore.RecordedEvent) bool { return r.Type != "ArticleFoundOnSource" },
		domain.NewsItemStream(feedID, newsPageID), domain.ArticleStream("https://news.example/a/1"))
	if g := listed(got.Entries); !slices.Equal(g, want) {
		t.Fatalf("history %v, the store has %v", g, want)
	}
	if strings.Contains(mustJSON(t, got), secretSource) {
		t.Fatalf("the history names another organization's source: %s", mustJSON(t, got))
	}
	added, rated := got.Entries[1], got.Entries[3]
	if added.Data["itemId"] != item || added.Data["url"] != "https://news.example/a/1" || added.Data["title"] != "Title 1" {
		t.Fatalf("added %v", added.Data)
	}
	if rated.Data["rating"] != "negative" || rated.Data["comment"] != "was negative" || rated.Data["feedbackId"] == nil {
		t.Fatalf("feedback %v", rated.Data)
	}
	for _, e := range got.Entries {
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", e.At); err != nil {
			t.Fatalf("at %q: %v", e.At, err)
		}
	}

	t.Run("an article another organization's source found first names only the organization's own source", func(t *testing.T) {
		if _, _, err := h.Service.Commands.DiscoverArticle(context.Background(), commands.DiscoverArticle{
			SourceID: uuid.MustParse(secretSource), Content: full(2),
		}); err != nil {
			t.Fatal(err)
		}
		att := wantDataList(t, h.Do("GET", "/feeds/news/"+f.feedID+"/sources", nil))[0]
		second := f.add(t, att, full(2))
		got := readHistory(t, h.Do("GET", "/feeds/news/"+f.feedID+"/items/"+second+"/history", nil).MustStatus(t, 200))
		types := []string{}
		for _, e := range got.Entries {
			types = append(types, e.Type)
		}
		if strings.Join(types, " ") != "ArticleDiscovered ArticleFoundOnSource NewsItemAdded" {
			t.Fatalf("history %v", types)
		}
		if _, named := got.Entries[0].Data["sourceId"]; named || got.Entries[1].Data["sourceId"] != att["sourceId"] {
			t.Fatalf("discovered %v, found %v", got.Entries[0].Data, got.Entries[1].Data)
		}
		if strings.Contains(mustJSON(t, got), secretSource) {
			t.Fatalf("the history names another organization's source: %s", mustJSON(t, got))
		}
	})
	t.Run("it pages like item lists", func(t *testing.T) {
		page := readHistory(t, h.Do("GET", path+"?limit=3&offset=1", nil).MustStatus(t, 200))
		if page.Total != 4 || len(page.Entries) != 3 || page.Pagination.HasMore || page.Entries[0].Position != got.Entries[1].Position {
			t.Fatalf("page %+v", page)
		}
		page = readHistory(t, h.Do("GET", path+"?limit=2", nil).MustStatus(t, 200))
		if len(page.Entries) != 2 || !page.Pagination.HasMore {
			t.Fatalf("page %+v", page)
		}
		h.Do("GET", path+"?limit=0", nil).MustStatus(t, 400)
	})
	t.Run("another organization gets 404 for the feed", func(t *testing.T) {
		r := h.DoWith("GET", path, nil, map[string]string{"Authorization": "Bearer " + other})
		wantNotFound(t, r, "feed", f.feedID)
	})
	t.Run("an unknown item answers 404 item and a malformed one 400", func(t *testing.T) {
		unknown := uuid.NewString()
		wantNotFound(t, h.Do("GET", "/feeds/news/"+f.feedID+"/items/"+unknown+"/history", nil), "item", unknown)
		r := h.Do("GET", "/feeds/news/"+f.feedID+"/items/item-1/history", nil).MustStatus(t, 400)
		if r.Body["error"].(map[string]any)["code"] != "VALIDATION_ERROR" || strings.Contains(r.Raw, "item-1") {
			t.Fatalf("body %s", r.Raw)
		}
	})
}

func TestAnEventItemsHistoryListsItsEventsChangesLinksFeedbackAndRemovalInLogOrder(t *testing.T) {
	h := servicetest.Start(t)
	ctx := context.Background()
	f := newEventFeed(t, h, "history")
	first, second := f.attach(t, "first.example"), f.attach(t, "second.example")
	start := time.Now().Add(72 * time.Hour).Truncate(time.Hour)
	details := oneTime("concert", start, time.Hour)
	item := f.add(t, first, details)
	path := f.items() + "/" + item.String() + "/history"

	details.Title = "Concert, moved"
	details.Instances[0].Occurrences[0].Start = start.Add(24 * time.Hour)
	changed, res, err := h.Service.Commands.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: first.SourceID, Details: details})
	if err != nil || !changed.Changed {
		t.Fatalf("change: %+v %v", changed, err)
	}
	projected(t, h, res)
	if f.add(t, second, details) != item {
		t.Fatal("the second source's finding is another item")
	}
	h.Do("POST", f.items()+"/"+item.String()+"/feedback", map[string]any{"rating": "neutral"}).MustStatus(t, 200)
	for _, att := range []domain.Attachment{first, second} {
		res, err := h.Service.Commands.DetachSource(ctx, commands.DetachSource{FeedRef: f.ref(), AttachmentID: att.ID})
		if err != nil {
			t.Fatal(err)
		}
		projected(t, h, res)
	}
	// The item left the feed with its last attachment; its history is
	// what tells why.
	h.Do("GET", f.items()+"/"+item.String(), nil).MustStatus(t, 404)
	got := readHistory(t, h.Do("GET", path, nil).MustStatus(t, 200))
	types := []string{}
	for _, e := range got.Entries {
		types = append(types, e.Stream+":"+e.Type)
	}
	want := "event:EventDiscovered item:EventItemAdded event:EventChanged item:EventItemLinked item:FeedbackGiven feed:EventSourceDetached feed:EventSourceDetached"
	if strings.Join(types, " ") != want {
		t.Fatalf("history %v, want %s", types, want)
	}
	eventID := domain.HappeningID(details.Identity)
	stored := storedInOrder(t, h.Service.Store, func(r eventstore.RecordedEvent) bool {
		return !strings.HasSuffix(r.Type, "FeedCreated") && !strings.HasSuffix(r.Type, "SourceAttached")
	}, domain.HappeningItemStream(f.id, eventID), domain.HappeningStream(eventID), domain.FeedStream(domain.FeedHappenings, f.id))
	if g := listed(got.Entries); !slices.Equal(g, stored) {
		t.Fatalf("history %v, the store has %v", g, stored)
	}
	change := got.Entries[2].Data
	if change["title"] != "Concert, moved" || mustJSON(t, change["changed"]) != mustJSON(t, []string{"instances", "title"}) {
		t.Fatalf("change %v", change)
	}
	if got.Entries[3].Data["attachmentId"] != second.ID.String() || got.Entries[5].Data["attachmentId"] != first.ID.String() {
		t.Fatalf("link %v, detach %v", got.Entries[3].Data, got.Entries[5].Data)
	}

	t.Run("another organization gets 404 in the event dialect", func(t *testing.T) {
		r := h.DoWith("GET", path, nil, map[string]string{"Authorization": "Bearer " + h.NewKey("globex")}).MustStatus(t, 404)
		e := r.Body["error"].(map[string]any)
		if e["code"] != "NOT_FOUND" || e["resource"] != nil {
			t.Fatalf("error %v", e)
		}
	})
	t.Run("a malformed item id answers 400 BAD_REQUEST", func(t *testing.T) {
		r := h.Do("GET", f.items()+"/nope/history", nil).MustStatus(t, 400)
		if r.Body["error"].(map[string]any)["code"] != "BAD_REQUEST" {
			t.Fatalf("body %s", r.Raw)
		}
	})
	t.Run("an item of another feed answers 404", func(t *testing.T) {
		other := newEventFeed(t, h, "other")
		h.Do("GET", other.items()+"/"+item.String()+"/history", nil).MustStatus(t, 404)
	})
}
