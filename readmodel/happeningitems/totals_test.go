package happeningitems_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// A list remembers the range total it counted and reuses it while the
// range stays in the box where the total cannot change and the feed has
// not changed. Ranges that slide across every occurrence boundary (each
// start and end, a microsecond either side), asked of one Queries in
// order as a clock would, must give the totals a fresh Queries counts;
// and after an item is added the same range must count it.
func TestARememberedTotalIsTheTotalOfEveryRangeItIsReusedFor(t *testing.T) {
	db, _ := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	ctx := context.Background()
	org := uuid.New()
	feed, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedHappenings, Org: org, Name: "sliding", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	site := "sliding.example"
	att, _, err := cmds.AttachSource(ctx, commands.AttachSource{
		FeedRef: commands.FeedRef{Kind: domain.FeedHappenings, Org: org, FeedID: feed.ID},
		Request: domain.SourceRequest{SourceType: "site", Domain: &site},
	})
	if err != nil {
		t.Fatal(err)
	}
	origin := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	hour := func(n int) time.Time { return origin.Add(time.Duration(n) * time.Hour) }
	var bounds []time.Time
	add := func(n int, starts []int, lengths []time.Duration) {
		d := domain.HappeningDetails{Identity: fmt.Sprintf("https://sliding.example/%d", n), Title: "E", Source: domain.SiteBlock("https://sliding.example")}
		in := domain.HappeningInstance{Key: "0", Status: domain.StatusScheduled}
		for k, s := range starts {
			o := domain.Occurrence{Start: hour(s)}
			bounds = append(bounds, o.Start)
			if lengths[k] > 0 {
				end := o.Start.Add(lengths[k])
				o.End = &end
				bounds = append(bounds, end)
			}
			in.Occurrences = append(in.Occurrences, o)
		}
		d.Instances = []domain.HappeningInstance{in}
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
		projectortest.RunUntilCaughtUp(t, store, db, 50, projectors.All()...)
	}
	// Weekly-ish series, instants, a long one, overlapping ones.
	add(0, []int{0, 24, 48, 72}, []time.Duration{2 * time.Hour, 2 * time.Hour, 2 * time.Hour, 2 * time.Hour})
	add(1, []int{5, 6}, []time.Duration{0, 0})
	add(2, []int{10}, []time.Duration{40 * time.Hour})
	add(3, []int{12, 13, 30}, []time.Duration{3 * time.Hour, 30 * time.Minute, 0})
	add(4, []int{60, 61}, []time.Duration{time.Hour, 5 * time.Hour})

	var sinces []time.Time
	for _, b := range bounds {
		sinces = append(sinces, b.Add(-time.Microsecond), b, b.Add(time.Microsecond), b.Add(17*time.Minute))
	}
	slices.SortFunc(sinces, time.Time.Compare)
	sinces = slices.Compact(sinces)

	q := happeningitems.NewQueries(db.Bun)
	check := func(label string) {
		t.Helper()
		for _, width := range []time.Duration{time.Hour, 13 * time.Hour, 30 * 24 * time.Hour} {
			for _, since := range sinces {
				f := happeningitems.Filter{Since: since, Until: since.Add(width), Limit: 2, Now: since}
				got, err := q.Items(ctx, org, feed.ID, f)
				if err != nil {
					t.Fatal(err)
				}
				want, err := happeningitems.NewQueries(db.Bun).Items(ctx, org, feed.ID, f)
				if err != nil {
					t.Fatal(err)
				}
				if got.Total != want.Total {
					t.Fatalf("%s: [%s, %s): remembered total %d, counted %d", label, f.Since.Format(time.RFC3339Nano), f.Until.Format(time.RFC3339Nano), got.Total, want.Total)
				}
			}
		}
	}
	check("before the change")
	// Asked again after an item is added to the range of a remembered total.
	f := happeningitems.Filter{Since: hour(40), Until: hour(50), Limit: 2, Now: hour(40)}
	before, err := q.Items(ctx, org, feed.ID, f)
	if err != nil {
		t.Fatal(err)
	}
	add(5, []int{44}, []time.Duration{time.Hour})
	after, err := q.Items(ctx, org, feed.ID, f)
	if err != nil {
		t.Fatal(err)
	}
	if after.Total != before.Total+1 {
		t.Fatalf("after an item was added to [%s, %s): total %d, before %d", f.Since, f.Until, after.Total, before.Total)
	}
	// The total counted again is remembered anew; asked twice, it holds.
	for range 2 {
		again, err := q.Items(ctx, org, feed.ID, f)
		if err != nil || again.Total != after.Total {
			t.Fatalf("asked again after the change: total %d, %v; want %d", again.Total, err, after.Total)
		}
	}
	check("after the change")
}

// A happening written before its occurrences were kept with it (NULL
// arrays, until the projector's version 5 rebuilds) lists the same
// occurrences, gathered from its items' occurrence rows.
func TestAHappeningWithoutItsOccurrenceArraysListsTheSameOccurrences(t *testing.T) {
	db, _ := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	ctx := context.Background()
	org := uuid.New()
	feed, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedHappenings, Org: org, Name: "arrays", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	site := "arrays.example"
	att, _, err := cmds.AttachSource(ctx, commands.AttachSource{
		FeedRef: commands.FeedRef{Kind: domain.FeedHappenings, Org: org, FeedID: feed.ID},
		Request: domain.SourceRequest{SourceType: "site", Domain: &site},
	})
	if err != nil {
		t.Fatal(err)
	}
	origin := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for n := range 3 {
		d := domain.HappeningDetails{Identity: fmt.Sprintf("https://arrays.example/%d", n), Title: "E", Source: domain.SiteBlock("https://arrays.example")}
		for k := range 2 {
			in := domain.HappeningInstance{Key: fmt.Sprint(k), Status: domain.StatusScheduled}
			for m := range 3 {
				start := origin.Add(time.Duration(n*50+k*20+m) * time.Hour)
				o := domain.Occurrence{Start: start}
				if m%2 == 0 {
					end := start.Add(time.Hour)
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
	f := happeningitems.Filter{Since: origin.Add(-time.Hour), Until: origin.Add(1000 * time.Hour), Limit: 10, Now: origin}
	occurrences := func() map[uuid.UUID][]string {
		page, err := happeningitems.NewQueries(db.Bun).Items(ctx, org, feed.ID, f)
		if err != nil || len(page.Items) != 3 {
			t.Fatalf("page: %d items, %v", len(page.Items), err)
		}
		out := map[uuid.UUID][]string{}
		for _, it := range page.Items {
			for _, o := range it.Occurrences {
				end := "none"
				if o.End != nil {
					end = o.End.UTC().String()
				}
				out[it.ID] = append(out[it.ID], fmt.Sprint(o.ID, o.InstanceID, o.Start.UTC(), end, o.Stated, o.InstanceEnds.UTC()))
			}
			slices.Sort(out[it.ID])
			if len(out[it.ID]) != 6 {
				t.Fatalf("item %s lists %d occurrences, want 6", it.ID, len(out[it.ID]))
			}
		}
		return out
	}
	kept := occurrences()
	if _, err := db.Bun.ExecContext(ctx, `UPDATE calendar_events SET occurrence_ids = NULL, occurrence_instances = NULL,
		occurrence_starts = NULL, occurrence_ends = NULL, occurrence_statuses = NULL, occurrence_instance_ends = NULL`); err != nil {
		t.Fatal(err)
	}
	gathered := occurrences()
	for id, want := range kept {
		if !slices.Equal(gathered[id], want) {
			t.Fatalf("item %s: gathered from the rows\n%v\nkept with the happening\n%v", id, gathered[id], want)
		}
	}
}
