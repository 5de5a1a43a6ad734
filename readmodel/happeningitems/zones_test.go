package happeningitems_test

import (
	"context"
	"fmt"
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

// An event list's total is the number of items with an occurrence in the
// range, exactly (api.md 4.6), whether the range is a day in another time
// zone, cuts a multi-day occurrence, or starts or ends on an occurrence's
// boundary to the microsecond. Each range is asked of a fresh Queries
// (which counts) and, in order and twice, of one that remembers its totals
// (totals.go), as a client paging day by day would.
func TestAnEventListsTotalIsExactForRangesThatCutDaysAndTimeZones(t *testing.T) {
	db, _ := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	ctx := context.Background()
	org := uuid.New()
	feed, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedHappenings, Org: org, Name: "zones", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	site := "zones.example"
	att, _, err := cmds.AttachSource(ctx, commands.AttachSource{
		FeedRef: commands.FeedRef{Kind: domain.FeedHappenings, Org: org, FeedID: feed.ID},
		Request: domain.SourceRequest{SourceType: "site", Domain: &site},
	})
	if err != nil {
		t.Fatal(err)
	}
	// December offsets, fixed so that the test needs no zone database.
	berlin, tokyo, la := time.FixedZone("CET", 1*3600), time.FixedZone("JST", 9*3600), time.FixedZone("PST", -8*3600)
	at := func(loc *time.Location, day, hour int) time.Time { return time.Date(2026, 12, day, hour, 0, 0, 0, loc) }
	type occ struct {
		start time.Time
		long  time.Duration // 0: an instant
	}
	add := func(name string, occs ...occ) {
		d := domain.HappeningDetails{Identity: "https://zones.example/" + name, Title: name, Source: domain.SiteBlock("https://zones.example")}
		in := domain.HappeningInstance{Key: "0", Status: domain.StatusScheduled}
		for _, o := range occs {
			oc := domain.Occurrence{Start: o.start}
			if o.long > 0 {
				end := o.start.Add(o.long)
				oc.End = &end
			}
			in.Occurrences = append(in.Occurrences, oc)
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
	}
	// A: 10 Dec 20:00 to 12 Dec 02:00 Berlin (19:00Z to 01:00Z two days on).
	add("A", occ{at(berlin, 10, 20), 30 * time.Hour})
	// B: 10 Dec 22:00 Los Angeles for two hours (11 Dec 06:00Z to 08:00Z).
	add("B", occ{at(la, 10, 22), 2 * time.Hour})
	// C: 09:00 to 10:00 Tokyo on three days (00:00Z to 01:00Z, 10-12 Dec).
	add("C", occ{at(tokyo, 10, 9), time.Hour}, occ{at(tokyo, 11, 9), time.Hour}, occ{at(tokyo, 12, 9), time.Hour})
	// D: an instant at midnight UTC, 11 Dec.
	add("D", occ{at(time.UTC, 11, 0), 0})
	// E: 20 Dec 12:00Z for an hour.
	add("E", occ{at(time.UTC, 20, 12), time.Hour})
	projectortest.RunUntilCaughtUp(t, store, db, 50, projectors.All()...)

	us := time.Microsecond
	cases := []struct {
		name         string
		since, until time.Time
		want         int
	}{
		{"10 Dec in Berlin holds A and C's first day", at(berlin, 10, 0), at(berlin, 11, 0), 2},
		{"11 Dec in Tokyo holds A under way, B, C's second day and D", at(tokyo, 11, 0), at(tokyo, 12, 0), 4},
		{"10 Dec in Los Angeles, until B starts, leaves B out", at(la, 10, 0), at(la, 10, 22), 3},
		{"10 Dec in Los Angeles a microsecond past B's start holds B", at(la, 10, 0), at(la, 10, 22).Add(us), 4},
		{"from B's end B is over", at(la, 11, 0), at(time.UTC, 11, 12), 1},
		{"a microsecond before B's end B is under way", at(la, 11, 0).Add(-us), at(time.UTC, 11, 12), 2},
		{"from the instant D, D, C's second day and A", at(time.UTC, 11, 0), at(time.UTC, 11, 0).Add(us), 3},
		{"a microsecond after D, D is over", at(time.UTC, 11, 0).Add(us), at(time.UTC, 11, 1), 2},
		{"C's last day in Tokyo meets A's last hour", at(tokyo, 12, 9), at(time.UTC, 12, 1), 2},
		{"from A's end in Berlin, A and C are over", at(berlin, 12, 2), at(time.UTC, 12, 1).Add(us), 0},
		{"until E starts, nothing after 12 Dec", at(time.UTC, 13, 0), at(time.UTC, 20, 12), 0},
		{"a microsecond past E's start holds E", at(time.UTC, 13, 0), at(time.UTC, 20, 12).Add(us), 1},
		{"the month in Tokyo holds all", at(tokyo, 1, 0), at(tokyo, 31, 0), 5},
	}
	remembering := happeningitems.NewQueries(db.Bun)
	for round := range 2 {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s (round %d)", c.name, round), func(t *testing.T) {
				f := happeningitems.Filter{Since: c.since, Until: c.until, Limit: 1, Now: c.since}
				for label, q := range map[string]*happeningitems.Queries{"counted": happeningitems.NewQueries(db.Bun), "remembered": remembering} {
					page, err := q.Items(ctx, org, feed.ID, f)
					if err != nil {
						t.Fatal(err)
					}
					if page.Total != c.want {
						t.Errorf("%s total of [%s, %s): %d, want %d", label, c.since.Format(time.RFC3339Nano), c.until.Format(time.RFC3339Nano), page.Total, c.want)
					}
				}
			})
		}
	}
}
