package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest"
)

type takesArticles struct{ kind domain.FeedKind }

func (t takesArticles) FeedKind() domain.FeedKind { return t.kind }
func (takesArticles) AddArticles(_ context.Context, offers []ingest.ArticleOffer) ([]bool, error) {
	return make([]bool, len(offers)), nil
}

type takesEvents struct{ kind domain.FeedKind }

func (t takesEvents) FeedKind() domain.FeedKind { return t.kind }
func (takesEvents) AddHappening(context.Context, ingest.Attachment, uuid.UUID) (bool, error) {
	return false, nil
}

type takesNothing struct{}

func (takesNothing) FeedKind() domain.FeedKind { return "podcasts" }

func TestIntakesAreRegisteredOnePerFeedKindAndEachTakesSomething(t *testing.T) {
	tests := []struct {
		name    string
		intakes []ingest.Intake
		err     string
	}{
		{"one intake per kind registers", []ingest.Intake{takesArticles{domain.FeedNews}, takesEvents{domain.FeedHappenings}}, ""},
		{"a third kind is one more intake", []ingest.Intake{takesArticles{domain.FeedNews}, takesEvents{domain.FeedHappenings}, takesArticles{"podcasts"}}, ""},
		{"two intakes of one kind are refused", []ingest.Intake{takesArticles{domain.FeedNews}, takesEvents{domain.FeedNews}}, "two intakes"},
		{"an intake that takes nothing is refused", []ingest.Intake{takesNothing{}}, "takes nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ingest.NewIntakes(tt.intakes...)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("NewIntakes: %v, want an error saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range tt.intakes {
				if got, ok := r.For(in.FeedKind()); !ok || got != in {
					t.Errorf("For(%s) = %v, %v", in.FeedKind(), got, ok)
				}
			}
		})
	}
}
