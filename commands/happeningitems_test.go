package commands_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
)

func TestAnEventFoundAgainIsOneEventAndJoinsAFeedOncePerAttachment(t *testing.T) {
	h, store := inMemory(t)
	ctx := context.Background()
	start := time.Date(2026, 12, 4, 19, 0, 0, 0, time.UTC)
	d := domain.HappeningDetails{
		Identity: "https://e.com/concert", Title: "Concert", Source: domain.SiteBlock("https://e.com/concert"),
		Instances: []domain.HappeningInstance{{Key: "0", Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{{Start: start}}}},
	}
	src := uuid.New()
	cases := []struct {
		name         string
		details      domain.HappeningDetails
		new, changed bool
	}{
		{"the first finding is new", d, true, false},
		{"the same finding again changes nothing", d, false, false},
		{"a new date is a change of the same event", withStart(d, start.Add(24*time.Hour)), false, true},
	}
	for _, tc := range cases {
		found, _, err := h.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: src, Details: tc.details})
		if err != nil || found.HappeningID != domain.HappeningID(d.Identity) || found.New != tc.new || found.Changed != tc.changed {
			t.Fatalf("%s: %+v %v", tc.name, found, err)
		}
	}
	if _, _, err := h.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: src, Details: domain.HappeningDetails{Identity: "x"}}); err == nil {
		t.Fatal("an event without a title or occurrences was stored")
	}

	feed, org := uuid.New(), uuid.New()
	first, second := uuid.New(), uuid.New()
	for _, step := range []struct {
		name       string
		attachment uuid.UUID
		added      bool
		stored     string
	}{
		{"the first attachment adds it", first, true, "EventItemAdded"},
		{"the same attachment again does nothing", first, false, ""},
		{"another attachment links it", second, false, "EventItemLinked"},
	} {
		added, res, err := h.AddHappeningItem(ctx, commands.AddHappeningItem{
			ItemTarget:  domain.ItemTarget{FeedID: feed, OrganizationID: org, AttachmentID: step.attachment, SourceID: src, SourceType: domain.SourceSite},
			HappeningID: domain.HappeningID(d.Identity),
		})
		stored := ""
		if len(res.EventTypes) > 0 {
			stored = res.EventTypes[0]
		}
		if err != nil || added != step.added || stored != step.stored {
			t.Fatalf("%s: added %v, stored %q, err %v", step.name, added, stored, err)
		}
	}
	recs, err := store.ReadStream(ctx, domain.HappeningItemStream(feed, domain.HappeningID(d.Identity)), 0, 10)
	if err != nil || len(recs) != 2 {
		t.Fatalf("item stream: %d events, %v", len(recs), err)
	}
}

func withStart(d domain.HappeningDetails, start time.Time) domain.HappeningDetails {
	d.Instances = []domain.HappeningInstance{{Key: "0", Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{{Start: start}}}}
	return d
}
