package happeningitems_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/readmodel/relevance"
	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// A list reads each item's relevance score from its row (issue 22): the
// projector scores an item when it is added, when its event changes and
// when its feed's config changes, as relevance.Score would score it then,
// and a rebuild scores the same.
func TestItemsCarryTheirRelevanceToTheFeedsCurrentConfig(t *testing.T) {
	db, dsn := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	ctx := context.Background()
	org := uuid.New()
	config := func(raw string) *domain.FeedConfig {
		c, err := domain.ParseFeedConfig([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		return &c
	}
	feed, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedHappenings, Org: org, Name: "scored", Description: "d",
		Options: domain.FeedOptions{Config: config(`{"keywords":["jazz"]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	site := "scored.example"
	att, _, err := cmds.AttachSource(ctx, commands.AttachSource{
		FeedRef: commands.FeedRef{Kind: domain.FeedHappenings, Org: org, FeedID: feed.ID},
		Request: domain.SourceRequest{SourceType: "site", Domain: &site},
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	event := func(key, title string) domain.HappeningDetails {
		return domain.HappeningDetails{Identity: "https://scored.example/" + key, Title: title, Source: domain.SiteBlock("https://scored.example"),
			Instances: []domain.HappeningInstance{{Key: "1", Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{{Start: start}}}}}
	}
	discover := func(d domain.HappeningDetails) uuid.UUID {
		found, _, err := cmds.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: att.SourceID, Details: d})
		if err != nil {
			t.Fatal(err)
		}
		return found.HappeningID
	}
	titles := map[string]string{"a": "Jazz night", "b": "Poetry slam"}
	for _, key := range []string{"a", "b"} {
		if _, _, err := cmds.AddHappeningItem(ctx, commands.AddHappeningItem{
			ItemTarget:  domain.ItemTarget{FeedID: feed.ID, OrganizationID: org, AttachmentID: att.ID, SourceID: att.SourceID, SourceType: att.SourceType},
			HappeningID: discover(event(key, titles[key])),
		}); err != nil {
			t.Fatal(err)
		}
	}
	q := happeningitems.NewQueries(db.Bun)
	// check lists the feed and compares each item's score with
	// relevance.Score of its event's current title against cfg.
	check := func(step string, cfg *domain.FeedConfig) {
		t.Helper()
		projectortest.RunUntilCaughtUp(t, store, db, 50, projectors.All()...)
		page, err := q.Items(ctx, org, feed.ID, happeningitems.Filter{Since: start.Add(-time.Hour), Until: start.Add(time.Hour), Limit: 10, Now: start})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 2 {
			t.Fatalf("%s: %d items listed, want 2", step, len(page.Items))
		}
		for _, it := range page.Items {
			var title string
			for key, tt := range titles {
				if it.HappeningID == domain.HappeningID(event(key, tt).Identity) {
					title = tt
				}
			}
			want, ok := relevance.Score(domain.HappeningDetails{Title: title}, *cfg)
			switch {
			case !ok && it.Relevance != nil:
				t.Errorf("%s: %q scored %v, want no score", step, title, *it.Relevance)
			case ok && (it.Relevance == nil || *it.Relevance != want):
				t.Errorf("%s: %q scored %v, want %v", step, title, it.Relevance, want)
			}
		}
	}
	check("created with keywords", config(`{"keywords":["jazz"]}`))

	titles["b"] = "Poetry and jazz"
	discover(event("b", titles["b"]))
	check("an event changed", config(`{"keywords":["jazz"]}`))

	poetry := config(`{"keywords":["poetry"]}`)
	if _, _, err := cmds.UpdateFeed(ctx, commands.UpdateFeed{FeedRef: commands.FeedRef{Kind: domain.FeedHappenings, Org: org, FeedID: feed.ID},
		Update: domain.FeedUpdate{Config: poetry}}); err != nil {
		t.Fatal(err)
	}
	check("the config changed", poetry)

	live := projectortest.Dump(t, db.Bun, happeningitems.Projector{})
	if err := projections.Rebuild(ctx, dsn, db, store, happeningitems.Projector{}, servicetest.Logger()); err != nil {
		t.Fatal(err)
	}
	if rebuilt := projectortest.Dump(t, db.Bun, happeningitems.Projector{}); rebuilt != live {
		t.Fatalf("rebuilt model differs from the live one:\nlive:\n%s\nrebuilt:\n%s", live, rebuilt)
	}

	none := config(`{}`)
	if _, _, err := cmds.UpdateFeed(ctx, commands.UpdateFeed{FeedRef: commands.FeedRef{Kind: domain.FeedHappenings, Org: org, FeedID: feed.ID},
		Update: domain.FeedUpdate{Config: none}}); err != nil {
		t.Fatal(err)
	}
	check("the config scores nothing", none)
}
