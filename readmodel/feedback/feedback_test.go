package feedback_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/feedback"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

type scope struct {
	name string
	id   uuid.UUID
}

func TestFeedbackCountsAnswerWhatTheFeedbackInTheLogSaysBeforeAndAfterARebuild(t *testing.T) {
	h := servicetest.Start(t)
	servicetest.WriteFeedbackHistory(h, 11)
	ctx := context.Background()
	q := feedback.NewQueries(h.Service.DB.Bun)

	// Every entry counts once in its item's, its feed's and its source's
	// scope, whatever its feed became since.
	want := map[scope]feedback.Counts{}
	for _, e := range projectortest.Logged[domain.FeedbackGiven](t, h.Service.DB.Bun) {
		for _, s := range []scope{{feedback.ScopeItem, e.ItemID}, {feedback.ScopeFeed, e.FeedID}, {feedback.ScopeSource, e.SourceID}} {
			c := want[s]
			switch e.Rating {
			case domain.RatingPositive:
				c.Positive++
			case domain.RatingNegative:
				c.Negative++
			case domain.RatingNeutral:
				c.Neutral++
			default:
				t.Fatalf("feedback %s has unknown rating %q", e.FeedbackID, e.Rating)
			}
			want[s] = c
		}
	}
	if len(want) < 10 {
		t.Fatalf("the history rated %d scopes: too few to tell", len(want))
	}
	// A scope nobody rated counts nothing.
	want[scope{feedback.ScopeItem, uuid.New()}] = feedback.Counts{}

	answers := func() map[string]feedback.Counts {
		out := map[string]feedback.Counts{}
		for s := range want {
			got, err := q.Counts(ctx, s.name, s.id)
			if err != nil {
				t.Fatal(err)
			}
			out[s.name+" "+s.id.String()] = got
		}
		return out
	}
	live := answers()
	for s, w := range want {
		if got := live[s.name+" "+s.id.String()]; got != w {
			t.Errorf("%s %s counts %+v, want %+v", s.name, s.id, got, w)
		}
	}
	projectortest.RebuildAnswersTheSame(t, h.DSN, h.Service.DB, h.Service.Store, feedback.Projector{}, func() any { return answers() })
}
