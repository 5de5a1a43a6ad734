package shape_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

var t0 = time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)

func details(instances ...domain.HappeningInstance) domain.HappeningDetails {
	return domain.HappeningDetails{Title: "T", Description: "D", Instances: instances}
}

func occ(start time.Time, d time.Duration) domain.Occurrence {
	o := domain.Occurrence{ID: uuid.New(), Start: start}
	if d > 0 {
		end := start.Add(d)
		o.End = &end
	}
	return o
}

func TestAWindowSelectsTheOccurrencesGoingOnInIt(t *testing.T) {
	from, to := t0, t0.Add(24*time.Hour)
	cases := []struct {
		name string
		o    domain.Occurrence
		in   bool
	}{
		{"an instant at the start of the window", occ(from, 0), true},
		{"an instant just before it", occ(from.Add(-time.Second), 0), false},
		{"a span that ends as the window starts", occ(from.Add(-time.Hour), time.Hour), false},
		{"a span under way when the window starts", occ(from.Add(-time.Hour), 2*time.Hour), true},
		{"a span that starts as the window ends", occ(to, time.Hour), false},
		{"a span that starts just before it ends", occ(to.Add(-time.Second), time.Hour), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := details(domain.HappeningInstance{ID: uuid.New(), Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{tc.o}})
			block := shape.InWindow(shape.Flatten(d), shape.Window{From: &from, To: &to}, "", from)
			if got := len(block.Selected) == 1; got != tc.in {
				t.Fatalf("selected %v, want %v", got, tc.in)
			}
		})
	}
}

func TestStatusesAreJudgedAtTheTimeOfTheQuery(t *testing.T) {
	d := details(
		domain.HappeningInstance{ID: uuid.New(), Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{occ(t0, time.Hour)}},
		domain.HappeningInstance{ID: uuid.New(), Status: domain.StatusCancelled, Occurrences: []domain.Occurrence{occ(t0, time.Hour)}},
		domain.HappeningInstance{ID: uuid.New(), Status: domain.StatusRescheduled, Occurrences: []domain.Occurrence{occ(t0.Add(48*time.Hour), 0)}},
	)
	cases := []struct {
		name     string
		now      time.Time
		want     []string
		upcoming int
	}{
		{"before anything", t0.Add(-time.Hour), []string{"scheduled", "cancelled", "rescheduled"}, 2},
		{"during the first instance", t0.Add(30 * time.Minute), []string{"scheduled", "cancelled", "rescheduled"}, 1},
		{"after the first instance: completed, but the cancelled one stays cancelled", t0.Add(2 * time.Hour), []string{"completed", "cancelled", "rescheduled"}, 1},
		{"after everything", t0.Add(72 * time.Hour), []string{"completed", "cancelled", "completed"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			block := shape.Everything(shape.Flatten(d), tc.now)
			var got []string
			for _, e := range block.Selected {
				got = append(got, e.Status)
			}
			// Both instances at t0 sort by id: compare as sets of statuses
			// of the first two, then the third.
			if len(got) != 3 || got[2] != tc.want[2] || !sameSet(got[:2], tc.want[:2]) || block.Upcoming != tc.upcoming {
				t.Fatalf("statuses %v upcoming %d, want %v and %d", got, block.Upcoming, tc.want, tc.upcoming)
			}
		})
	}
}

func sameSet(a, b []string) bool {
	return len(a) == 2 && len(b) == 2 && (a[0] == b[0] && a[1] == b[1] || a[0] == b[1] && a[1] == b[0])
}

func TestRelevanceIsShownOnlyInTheCurrentShapeAndOnlyWhenScored(t *testing.T) {
	d := details(domain.HappeningInstance{ID: uuid.New(), Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{occ(t0, 0)}})
	scorer := shape.RelevanceFunc(func(d domain.HappeningDetails, cfg domain.FeedConfig) (float64, bool) {
		return 42.5, cfg.Geo != nil
	})
	geo, err := domain.ParseFeedConfig([]byte(`{"geo":{"lat":52.5,"lng":13.4,"radiusKm":10}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		scorer shape.RelevanceFunc
		config domain.FeedConfig
		want   string
	}{
		{"a feed with a geo config is scored", scorer, geo, `"relevanceScore":42.5`},
		{"a feed the scorer declines is not", scorer, domain.DefaultFeedConfig(), ""},
		{"no scorer wired scores nothing", nil, geo, ""},
	}
	current, _ := shape.RenderStatic(d, false)
	legacy, _ := shape.RenderStatic(d, true)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			it := shape.Item{Static: current, Occurrences: shape.Everything(shape.Flatten(d), t0), Relevance: tc.scorer.Score(d, tc.config)}
			cur := shape.AppendCurrent(nil, it)
			it.Static = legacy
			leg := shape.AppendLegacy(nil, it, true)
			if !json.Valid(cur) || !json.Valid(leg) {
				t.Fatalf("invalid JSON: %s / %s", cur, leg)
			}
			if tc.want != "" && !strings.Contains(string(cur), tc.want) || tc.want == "" && strings.Contains(string(cur), "relevanceScore") {
				t.Fatalf("current shape %s, want %q", cur, tc.want)
			}
			if strings.Contains(string(leg), "relevanceScore") {
				t.Fatalf("legacy shape %s has a relevanceScore", leg)
			}
		})
	}
}

func TestTheWebhookDataIsTheLegacyLayoutWithoutSourceType(t *testing.T) {
	d := details(domain.HappeningInstance{ID: uuid.New(), Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{occ(t0, 0)}})
	legacy, err := shape.RenderStatic(d, true)
	if err != nil {
		t.Fatal(err)
	}
	it := shape.Item{ID: uuid.New(), HappeningID: uuid.New(), SourceType: "site", Static: legacy, Occurrences: shape.Everything(shape.Flatten(d), t0)}
	var m map[string]any
	if err := json.Unmarshal(shape.AppendLegacy(nil, it, false), &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["sourceType"]; ok {
		t.Fatalf("webhook data has sourceType: %v", m)
	}
	for _, k := range []string{"publishedAt", "shortDescription", "primaryImage", "primaryUrl", "time", "location", "capacity", "organizer"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("%s is %v (present %v), want null", k, v, ok)
		}
	}
	for _, k := range []string{"supportingImages", "urls", "geoLocations"} {
		if v, ok := m[k].([]any); !ok || len(v) != 0 {
			t.Errorf("%s is %v, want an empty array", k, m[k])
		}
	}
	var withType map[string]any
	if err := json.Unmarshal(shape.AppendLegacy(nil, it, true), &withType); err != nil || withType["sourceType"] != "site" || len(withType) != len(m)+1 {
		t.Fatalf("the v0 item is the webhook data plus sourceType: %v, %v", withType, err)
	}
}

func TestCoordinatesThatAreNoNumbersAreLeftOutRatherThanStoppingTheProjector(t *testing.T) {
	d := details()
	d.Location = &domain.Location{Coordinates: &domain.Coordinates{Lat: math.NaN(), Lng: 13.4}, DisplayAddress: "Somewhere"}
	s, err := shape.RenderStatic(d, false)
	if err != nil || strings.Contains(string(s.Tail), "coordinates") || !strings.Contains(string(s.Tail), "Somewhere") {
		t.Fatalf("tail %s, %v", s.Tail, err)
	}
}
