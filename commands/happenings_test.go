package commands_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
)

func concert(start time.Time, status string) domain.HappeningDetails {
	end := start.Add(2 * time.Hour)
	return domain.HappeningDetails{
		Identity: "https://venue.example/events/quartet", Title: "String quartet", Description: "Haydn and Bartók",
		Time:      domain.HappeningTime{TemporalPattern: domain.PatternSingular, Timezone: "Europe/Berlin", DisplayText: "Fri 19:00"},
		Instances: []domain.HappeningInstance{{Key: "k1", Status: status, Occurrences: []domain.Occurrence{{Start: start, End: &end}}}},
		Source:    domain.SiteBlock("https://venue.example/events/quartet"),
	}
}

func TestFindingAnEventAgainRecordsOnlyWhatChanged(t *testing.T) {
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			h, _ := newStore(t)
			ctx := context.Background()
			source := uuid.New()
			start := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
			steps := []struct {
				what         string
				details      domain.HappeningDetails
				wantNew      bool
				wantChanged  bool
				wantAppended bool
			}{
				{"the first finding discovers it", concert(start, domain.StatusScheduled), true, false, true},
				{"the same finding again changes nothing", concert(start, domain.StatusScheduled), false, false, false},
				{"a cancellation is a change", concert(start, domain.StatusCancelled), false, true, true},
				{"a new date is a change", concert(start.Add(24*time.Hour), domain.StatusCancelled), false, true, true},
			}
			var id uuid.UUID
			for _, s := range steps {
				found, res, err := h.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: source, Details: s.details})
				if err != nil {
					t.Fatalf("%s: %v", s.what, err)
				}
				if found.New != s.wantNew || found.Changed != s.wantChanged || res.Empty() == s.wantAppended {
					t.Fatalf("%s: new=%t changed=%t appended=%t", s.what, found.New, found.Changed, !res.Empty())
				}
				if id == uuid.Nil {
					id = found.HappeningID
				}
				if found.HappeningID != id || found.Details.Instances[0].Status != s.details.Instances[0].Status {
					t.Fatalf("%s: stored %s with status %s", s.what, found.HappeningID, found.Details.Instances[0].Status)
				}
			}
		})
	}
}

func TestAnEventWithoutATitleOrOccurrenceIsRefused(t *testing.T) {
	h, _ := inMemory(t)
	start := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	untitled := concert(start, domain.StatusScheduled)
	untitled.Title = " "
	timeless := concert(start, domain.StatusScheduled)
	timeless.Instances = nil
	for _, d := range []domain.HappeningDetails{untitled, timeless} {
		if _, res, err := h.DiscoverHappening(context.Background(), commands.DiscoverHappening{SourceID: uuid.New(), Details: d}); err == nil || !res.Empty() {
			t.Fatalf("stored an invalid event: %v", err)
		}
	}
}
