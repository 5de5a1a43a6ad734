package commands_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/idempotency"
)

// streamLen counts a stream's events.
func streamLen(t *testing.T, store eventstore.Store, stream string) int {
	t.Helper()
	recs, err := store.ReadStream(context.Background(), stream, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

func TestACommandRunAgainInItsIdempotentRequestStoresNothingAndAnswersTheFirstRun(t *testing.T) {
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			h, store := newStore(t)
			org := uuid.New()
			ctx := context.Background()
			run := h.Idempotent(idempotency.NewScope([32]byte{byte(len(name))}, time.Now()))
			create := commands.CreateFeed{Kind: domain.FeedNews, Org: org, Name: "n", Description: "d"}
			first, res, err := run.CreateFeed(ctx, create)
			if err != nil {
				t.Fatal(err)
			}
			stream := domain.FeedStream(domain.FeedNews, first.ID)
			t.Run("a create run again answers the feed it created", func(t *testing.T) {
				time.Sleep(2 * time.Millisecond) // a new decision would have a later time
				again, againRes, err := run.CreateFeed(ctx, create)
				if err != nil || again.ID != first.ID || !again.CreatedAt.Equal(first.CreatedAt) || againRes.Position != res.Position {
					t.Fatalf("rerun %+v %v, %v; first %+v %v", again, againRes, err, first, res)
				}
				if n := streamLen(t, store, stream); n != 1 {
					t.Fatalf("%d events after the rerun", n)
				}
			})
			t.Run("another request creates another feed", func(t *testing.T) {
				other, _, err := h.CreateFeed(ctx, create)
				if err != nil || other.ID == first.ID {
					t.Fatalf("%v, %v", other.ID, err)
				}
			})
			t.Run("a rename run again after another change answers as the run left the feed", func(t *testing.T) {
				rename := h.Idempotent(idempotency.NewScope([32]byte{9, byte(len(name))}, time.Now()))
				ref := commands.FeedRef{Kind: domain.FeedNews, Org: org, FeedID: first.ID}
				a, b := "A", "B"
				renamed, _, err := rename.UpdateFeed(ctx, commands.UpdateFeed{FeedRef: ref, Update: domain.FeedUpdate{Name: &a}})
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := h.UpdateFeed(ctx, commands.UpdateFeed{FeedRef: ref, Update: domain.FeedUpdate{Name: &b}}); err != nil {
					t.Fatal(err)
				}
				again, _, err := rename.UpdateFeed(ctx, commands.UpdateFeed{FeedRef: ref, Update: domain.FeedUpdate{Name: &a}})
				if err != nil || again.Name != "A" || !again.UpdatedAt.Equal(renamed.UpdatedAt) {
					t.Fatalf("rerun %+v, %v; first %+v", again, err, renamed)
				}
				if n := streamLen(t, store, stream); n != 3 {
					t.Fatalf("%d events: want created, renamed A, renamed B", n)
				}
			})
		})
	}
}
