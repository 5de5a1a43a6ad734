package happeningitems_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/readmodel"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

func TestAnItemOtherSourcesListIsShownMergedFollowsItsListingsChangesAndASplitUndoesIt(t *testing.T) {
	ctx := context.Background()
	db, dsn := testdb.New(t)
	store := eventstore.NewPostgres(db.Pool)
	q := happeningitems.NewQueries(db.Bun)
	cmds := commands.New(store, readmodel.NewLookups(db.Bun), commands.FindingHappeningCopies(q))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	org := uuid.New()
	feed, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedHappenings, Org: org, Name: "jazz", Description: "d"})
	must(err)
	ref := commands.FeedRef{Kind: domain.FeedHappenings, Org: org, FeedID: feed.ID}
	var targets []domain.ItemTarget
	for _, site := range []string{"venue.example", "tickets.example"} {
		att, _, err := cmds.AttachSource(ctx, commands.AttachSource{FeedRef: ref, Request: domain.SourceRequest{SourceType: "site", Domain: &site}})
		must(err)
		targets = append(targets, domain.ItemTarget{FeedID: feed.ID, OrganizationID: org, AttachmentID: att.ID, SourceID: att.SourceID, SourceType: att.SourceType})
	}
	night := time.Date(2026, 12, 3, 19, 0, 0, 0, time.UTC)
	instance := func(at time.Time) domain.HappeningInstance {
		return domain.HappeningInstance{Key: at.Format(time.RFC3339), Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{{Start: at}}}
	}
	place := &domain.Location{Venue: &domain.Venue{Name: "Blue Note"}, Coordinates: &domain.Coordinates{Lat: 50.0617, Lng: 19.9373}}
	programme := domain.HappeningDetails{Identity: "page:https://venue.example/programme#trio", Title: "Marta Kowalska Trio",
		Description: "New compositions.", Instances: []domain.HappeningInstance{instance(night)}, Location: place,
		Source: domain.SiteBlock("https://venue.example/programme"), Rank: domain.PrecedenceListing}
	page := domain.HappeningDetails{Identity: "url:https://tickets.example/trio", Title: "Marta Kowalska Trio – live",
		Instances: []domain.HappeningInstance{instance(night), instance(night.Add(24 * time.Hour))}, Location: place,
		PrimaryImage: "https://tickets.example/trio.jpg", Source: domain.SiteBlock("https://tickets.example/trio"), Rank: domain.PrecedenceOwnPage}
	find := func(d domain.HappeningDetails, to domain.ItemTarget) (uuid.UUID, bool) {
		t.Helper()
		found, _, err := cmds.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: to.SourceID, Details: d})
		must(err)
		added, _, err := cmds.AddHappeningItem(ctx, commands.AddHappeningItem{ItemTarget: to, HappeningID: found.HappeningID})
		must(err)
		projectortest.RunUntilCaughtUp(t, store, db, 50, projectors.All()...)
		return found.HappeningID, added
	}
	own, added := find(programme, targets[0])
	if !added {
		t.Fatal("the programme's listing did not become an item")
	}
	copyID, added := find(page, targets[1])
	if added {
		t.Fatal("the ticket page's listing of the same concert became a second item")
	}
	itemID := domain.HappeningItemID(feed.ID, own)
	shown := func(when, title string, occurrences int, description bool) happeningitems.Item {
		t.Helper()
		it, err := q.Item(ctx, org, feed.ID, itemID, happeningitems.Shape{})
		must(err)
		head := string(it.Static.Head) + string(it.Static.Tail)
		if !strings.Contains(head, `"title":"`+title+`"`) || len(it.Occurrences) != occurrences ||
			strings.Contains(head, "New compositions.") != description {
			t.Errorf("%s: the item shows %s with %d occurrences, want %q with %d (description %v)", when, head, len(it.Occurrences), title, occurrences, description)
		}
		return it
	}
	first := shown("merged", "Marta Kowalska Trio – live", 2, true)
	answers := func() any {
		page, err := q.Items(ctx, org, feed.ID, happeningitems.Filter{Since: night.Add(-time.Hour), Until: night.Add(72 * time.Hour), Limit: 10, Now: night.Add(-time.Hour)})
		must(err)
		return page
	}
	projectortest.RebuildAnswersTheSame(t, dsn, db, store, happeningitems.Projector{}, answers)

	page.Title = "Marta Kowalska Trio – live at the Blue Note"
	find(page, targets[1])
	changed := shown("after its other listing changed", "Marta Kowalska Trio – live at the Blue Note", 2, true)
	if !first.Change.Less(changed.Change) {
		t.Errorf("the change of a listing is not a change of the item: %v then %v", first.Change, changed.Change)
	}
	projectortest.RebuildAnswersTheSame(t, dsn, db, store, happeningitems.Projector{}, answers)

	split, _, err := cmds.SplitHappeningCopy(ctx, commands.SplitHappeningCopy{FeedRef: ref, ItemID: itemID, CopyID: copyID})
	must(err)
	projectortest.RunUntilCaughtUp(t, store, db, 50, projectors.All()...)
	shown("split", "Marta Kowalska Trio", 1, true)
	if it, err := q.Item(ctx, org, feed.ID, split, happeningitems.Shape{}); err != nil || len(it.Occurrences) != 2 || it.HappeningID != copyID {
		t.Errorf("the split listing is not an item of its own with its two nights: %+v %v", it, err)
	}
	var merged int
	must(db.Bun.NewRaw(`SELECT count(*) FROM calendar_events WHERE id = ?`, domain.MergedHappeningID(itemID)).Scan(ctx, &merged))
	if merged != 0 {
		t.Error("the merged listing outlives the split")
	}
	live := projectortest.Dump(t, db.Bun, happeningitems.Projector{})
	projectortest.RebuildAnswersTheSame(t, dsn, db, store, happeningitems.Projector{}, answers)
	if rebuilt := projectortest.Dump(t, db.Bun, happeningitems.Projector{}); rebuilt != live {
		t.Errorf("the rebuilt tables differ from the live ones:\nlive:\n%s\nrebuilt:\n%s", live, rebuilt)
	}
}
