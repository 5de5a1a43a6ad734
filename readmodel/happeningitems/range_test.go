package happeningitems_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/readmodel/shape"
	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// The list query finds, orders and counts items on the range index alone;
// the occurrence block is computed from the index's rows, and the single
// item's and the webhook's from the event's details. For random
// events (overlapping and nested occurrences, equal starts, instants,
// spans under way at the start of the range, every status) and random
// ranges, the query must list exactly the items whose block (from the
// details) has an occurrence, in the order their blocks give, with the
// right total, and the blocks from the rows must equal those from the
// details.
func TestTheRangeIndexListsExactlyTheItemsWhoseBlockHasAnOccurrence(t *testing.T) {
	db, _ := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	ctx := context.Background()
	org := uuid.New()
	feed, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedHappenings, Org: org, Name: "random", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	site := "random.example"
	att, _, err := cmds.AttachSource(ctx, commands.AttachSource{
		FeedRef: commands.FeedRef{Kind: domain.FeedHappenings, Org: org, FeedID: feed.ID},
		Request: domain.SourceRequest{SourceType: "site", Domain: &site},
	})
	if err != nil {
		t.Fatal(err)
	}
	origin := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	hour := func(n int) time.Time { return origin.Add(time.Duration(n) * time.Hour) }
	r := rand.New(rand.NewPCG(7, 7))
	statuses := []string{domain.StatusScheduled, domain.StatusScheduled, domain.StatusCancelled, domain.StatusPostponed, domain.StatusRescheduled}
	lengths := []time.Duration{0, 30 * time.Minute, 3 * time.Hour, 30 * time.Hour}
	for e := range 60 {
		d := domain.HappeningDetails{Identity: fmt.Sprintf("https://random.example/%d", e), Title: "E", Source: domain.SiteBlock("https://random.example")}
		for k := range 1 + r.IntN(4) {
			in := domain.HappeningInstance{Key: fmt.Sprint(k), Status: statuses[r.IntN(len(statuses))]}
			for range 1 + r.IntN(3) {
				// A coarse grid, so starts collide and ranges start on them.
				o := domain.Occurrence{Start: hour(r.IntN(120))}
				if l := lengths[r.IntN(len(lengths))]; l > 0 {
					end := o.Start.Add(l)
					o.End = &end
				}
				in.Occurrences = append(in.Occurrences, o)
			}
			d.Instances = append(d.Instances, in)
		}
		found, _, err := cmds.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: att.SourceID, Details: d})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := cmds.AddHappeningItem(ctx, commands.AddHappeningItem{
			ItemTarget:  domain.ItemTarget{FeedID: feed.ID, OrganizationID: org, AttachmentID: att.ID, SourceID: att.SourceID, SourceType: att.SourceType},
			HappeningID: found.HappeningID,
		}); err != nil {
			t.Fatal(err)
		}
	}
	projectortest.RunUntilCaughtUp(t, store, db, 50, projectors.All()...)
	q := happeningitems.NewQueries(db.Bun)
	all, err := q.Items(ctx, org, feed.ID, happeningitems.Filter{Since: hour(-100), Until: hour(1000), Limit: 100, Now: hour(60)})
	if err != nil || all.Total != 60 {
		t.Fatalf("all items: %d, %v", all.Total, err)
	}
	eventIDs := make([]uuid.UUID, 0, len(all.Items))
	for _, it := range all.Items {
		eventIDs = append(eventIDs, it.HappeningID)
	}
	details, err := q.HappeningDetails(ctx, eventIDs)
	if err != nil {
		t.Fatal(err)
	}
	occurrences := map[uuid.UUID][]shape.Occurrence{}
	for _, it := range all.Items {
		occurrences[it.ID] = shape.Flatten(details[it.HappeningID])
	}

	for round := range 300 {
		since := hour(r.IntN(130) - 5)
		f := happeningitems.Filter{
			Since: since, Until: since.Add(time.Duration(1+r.IntN(60)) * time.Hour), Limit: 1 + r.IntN(8), Offset: r.IntN(12),
			Now: hour(r.IntN(130)), OrderBy: happeningitems.OrderByOccurrence,
		}
		if r.IntN(3) == 0 {
			f.OrderBy = happeningitems.OrderByCreated
		}
		if r.IntN(2) == 0 {
			f.Status = domain.HappeningStatuses[r.IntN(len(domain.HappeningStatuses))]
		}
		want := expectedPage(all.Items, occurrences, f)
		page, err := q.Items(ctx, org, feed.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		var got []uuid.UUID
		window := shape.Window{From: &f.Since, To: &f.Until}
		for _, it := range page.Items {
			got = append(got, it.ID)
			fromRows := string(shape.AppendCurrent(nil, shape.Item{Occurrences: shape.InWindow(it.Occurrences, window, f.Status, f.Now)}))
			fromDetails := string(shape.AppendCurrent(nil, shape.Item{Occurrences: shape.InWindow(occurrences[it.ID], window, f.Status, f.Now)}))
			if fromRows != fromDetails {
				t.Fatalf("round %d: item %s's block from the index rows differs from its details':\n%s\n%s", round, it.ID, fromRows, fromDetails)
			}
		}
		lo, hi := min(f.Offset, len(want)), min(f.Offset+f.Limit, len(want))
		if page.Total != len(want) || !slices.Equal(got, want[lo:hi]) {
			full := f
			full.Offset, full.Limit = 0, 100
			fp, _ := q.Items(ctx, org, feed.ID, full)
			seen := map[uuid.UUID]bool{}
			for _, it := range fp.Items {
				seen[it.ID] = true
			}
			for _, it := range all.Items {
				if slices.Contains(want, it.ID) && !seen[it.ID] {
					t.Logf("missing %s: %+v", it.ID, occurrences[it.ID])
				}
			}
			t.Fatalf("round %d, %+v:\ngot  total %d %v\nwant total %d %v", round, f, page.Total, got, len(want), want[lo:hi])
		}
	}
}

// expectedPage is every matching item's id in the filter's order, from the
// occurrence blocks.
func expectedPage(items []happeningitems.Item, occurrences map[uuid.UUID][]shape.Occurrence, f happeningitems.Filter) []uuid.UUID {
	type match struct {
		it    happeningitems.Item
		first time.Time
	}
	var ms []match
	for _, it := range items {
		block := shape.InWindow(occurrences[it.ID], shape.Window{From: &f.Since, To: &f.Until}, f.Status, f.Now)
		if block.Next != nil {
			ms = append(ms, match{it, block.Next.Start})
		}
	}
	slices.SortFunc(ms, func(a, b match) int {
		if f.OrderBy == happeningitems.OrderByCreated {
			if c := b.it.AddedAt.Compare(a.it.AddedAt); c != 0 {
				return c
			}
			return bytes.Compare(b.it.ID[:], a.it.ID[:])
		}
		if c := a.first.Compare(b.first); c != 0 {
			return c
		}
		return bytes.Compare(a.it.ID[:], b.it.ID[:])
	})
	out := make([]uuid.UUID, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.it.ID)
	}
	return out
}
