package eventshape_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/eventshape"
)

var t0 = time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)

func details(instances ...domain.EventInstance) domain.EventDetails {
	return domain.EventDetails{Title: "T", Description: "D", Instances: instances}
}

func occ(start time.Time, d time.Duration) domain.EventOccurrence {
	o := domain.EventOccurrence{ID: uuid.New(), Start: start}
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
		o    domain.EventOccurrence
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
			d := details(domain.EventInstance{ID: uuid.New(), Status: domain.StatusScheduled, Occurrences: []domain.EventOccurrence{tc.o}})
			block := eventshape.InWindow(d, eventshape.Window{From: &from, To: &to}, "", from)
			if got := len(block.Selected) == 1; got != tc.in {
				t.Fatalf("selected %v, want %v", got, tc.in)
			}
		})
	}
}

func TestStatusesAreJudgedAtTheTimeOfTheQuery(t *testing.T) {
	d := details(
		domain.EventInstance{ID: uuid.New(), Status: domain.StatusScheduled, Occurrences: []domain.EventOccurrence{occ(t0, time.Hour)}},
		domain.EventInstance{ID: uuid.New(), Status: domain.StatusCancelled, Occurrences: []domain.EventOccurrence{occ(t0, time.Hour)}},
		domain.EventInstance{ID: uuid.New(), Status: domain.StatusRescheduled, Occurrences: []domain.EventOccurrence{occ(t0.Add(48*time.Hour), 0)}},
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
			block := eventshape.Everything(d, tc.now)
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
	d := details(domain.EventInstance{ID: uuid.New(), Status: domain.StatusScheduled, Occurrences: []domain.EventOccurrence{occ(t0, 0)}})
	scorer := eventshape.RelevanceFunc(func(d domain.EventDetails, cfg domain.FeedConfig) (float64, bool) {
		return 42.5, cfg.Geo != nil
	})
	geo, err := domain.ParseFeedConfig([]byte(`{"geo":{"lat":52.5,"lng":13.4,"radiusKm":10}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		scorer eventshape.RelevanceFunc
		config domain.FeedConfig
		want   string
	}{
		{"a feed with a geo config is scored", scorer, geo, `"relevanceScore":42.5`},
		{"a feed the scorer declines is not", scorer, domain.DefaultFeedConfig(), ""},
		{"no scorer wired scores nothing", nil, geo, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			it := eventshape.Item{Details: d, Occurrences: eventshape.Everything(d, t0), Relevance: tc.scorer.Score(d, tc.config)}
			current, _ := json.Marshal(eventshape.Current(it, false))
			legacy, _ := json.Marshal(eventshape.Legacy(it))
			if tc.want != "" && !strings.Contains(string(current), tc.want) || tc.want == "" && strings.Contains(string(current), "relevanceScore") {
				t.Fatalf("current shape %s, want %q", current, tc.want)
			}
			if strings.Contains(string(legacy), "relevanceScore") {
				t.Fatalf("legacy shape %s has a relevanceScore", legacy)
			}
		})
	}
}

func TestTheWebhookDataIsTheLegacyLayoutWithoutSourceType(t *testing.T) {
	d := details(domain.EventInstance{ID: uuid.New(), Status: domain.StatusScheduled, Occurrences: []domain.EventOccurrence{occ(t0, 0)}})
	it := eventshape.Item{ID: uuid.New(), EventID: uuid.New(), SourceType: "site", Details: d, Occurrences: eventshape.Everything(d, t0)}
	data, _ := json.Marshal(eventshape.Legacy(it).Data)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["sourceType"]; ok {
		t.Fatalf("webhook data has sourceType: %s", data)
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
}
