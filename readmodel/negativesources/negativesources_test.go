package negativesources_test

import (
	"cmp"
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/negativesources"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// counts is a source's feedback as the log tells it.
type counts struct{ positive, negative, neutral int }

func (c counts) entries() int { return c.positive + c.negative + c.neutral }

// fromTheLog counts, per organization and source, the FeedbackGiven
// events in the log: what the ranking must answer.
func fromTheLog(t *testing.T, h *servicetest.Harness) map[uuid.UUID]map[uuid.UUID]counts {
	t.Helper()
	out := map[uuid.UUID]map[uuid.UUID]counts{}
	for _, e := range projectortest.Logged[domain.FeedbackGiven](t, h.Service.DB.Bun) {
		if out[e.OrganizationID] == nil {
			out[e.OrganizationID] = map[uuid.UUID]counts{}
		}
		c := out[e.OrganizationID][e.SourceID]
		switch e.Rating {
		case domain.RatingPositive:
			c.positive++
		case domain.RatingNegative:
			c.negative++
		case domain.RatingNeutral:
			c.neutral++
		default:
			t.Fatalf("feedback %s has unknown rating %q", e.FeedbackID, e.Rating)
		}
		out[e.OrganizationID][e.SourceID] = c
	}
	return out
}

// ranked is the ranking the query promises, worked out from the counts:
// sources with at least min entries, by share of negative entries, then
// by negative entries, then by id.
func ranked(bySource map[uuid.UUID]counts, min int) []negativesources.SourceRating {
	out := []negativesources.SourceRating{}
	for id, c := range bySource {
		if c.entries() >= min {
			out = append(out, negativesources.SourceRating{SourceID: id, Positive: c.positive, Negative: c.negative, Neutral: c.neutral})
		}
	}
	slices.SortFunc(out, func(a, b negativesources.SourceRating) int {
		share := func(r negativesources.SourceRating) float64 {
			return float64(r.Negative) / float64(r.Positive+r.Negative+r.Neutral)
		}
		return cmp.Or(cmp.Compare(share(b), share(a)), cmp.Compare(b.Negative, a.Negative), cmp.Compare(a.SourceID.String(), b.SourceID.String()))
	})
	return out
}

func TestTheRankingOfNegativeSourcesAnswersWhatTheFeedbackInTheLogSaysBeforeAndAfterARebuild(t *testing.T) {
	h := servicetest.Start(t)
	history := servicetest.WriteFeedbackHistory(h, 7)
	ctx := context.Background()
	q := negativesources.NewQueries(h.Service.DB.Bun)
	logged := fromTheLog(t, h)
	if len(logged[history.Org]) < 3 || len(logged[history.Other]) == 0 {
		t.Fatalf("the history rated %d sources of acme and %d of the other organization: too few to rank", len(logged[history.Org]), len(logged[history.Other]))
	}

	type page struct {
		org                uuid.UUID
		min, limit, offset int
	}
	pages := []page{
		{history.Org, 1, 100, 0},
		{history.Org, 4, 100, 0},
		{history.Org, 1, 2, 1},
		{history.Other, 1, 100, 0},
		{uuid.New(), 1, 100, 0},
	}
	answers := func() []negativesources.SourceRatingPage {
		t.Helper()
		var out []negativesources.SourceRatingPage
		for _, p := range pages {
			got, err := q.NegativeSources(ctx, p.org, p.min, p.limit, p.offset)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, got)
		}
		return out
	}

	live := answers()
	for i, p := range pages {
		want := ranked(logged[p.org], p.min)
		got := live[i]
		if got.Total != len(want) {
			t.Errorf("org %s, at least %d entries: total %d, want %d", p.org, p.min, got.Total, len(want))
		}
		want = want[min(p.offset, len(want)):min(p.offset+p.limit, len(want))]
		if len(got.Sources) != len(want) {
			t.Fatalf("org %s, at least %d entries, page %d+%d: %d sources, want %d", p.org, p.min, p.offset, p.limit, len(got.Sources), len(want))
		}
		for j, w := range want {
			g := got.Sources[j]
			if g.SourceID != w.SourceID || g.Positive != w.Positive || g.Negative != w.Negative || g.Neutral != w.Neutral {
				t.Errorf("org %s, rank %d: %s %d/%d/%d, want %s %d/%d/%d (positive/negative/neutral)", p.org, p.offset+j+1,
					g.SourceID, g.Positive, g.Negative, g.Neutral, w.SourceID, w.Positive, w.Negative, w.Neutral)
			}
			if g.Details.SourceType == "" {
				t.Errorf("org %s: source %s is ranked without the record's details", p.org, g.SourceID)
			}
		}
	}

	projectortest.RebuildAnswersTheSame(t, h.DSN, h.Service.DB, h.Service.Store, negativesources.Projector{}, func() any { return answers() })
}
