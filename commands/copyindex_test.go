package commands

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/nearcopy"
)

// recentArticle is an article of text (enough words to be signed) at url.
func recentArticle(feedID uuid.UUID, url, text string, at time.Time) *recentItem {
	sig := nearcopy.Sign("A story", text)
	a := domain.ArticleDiscovered{NewsPageID: uuid.New(), EffectiveAt: at, Content: domain.ArticleContent{URL: url, Title: "A story", Signature: &sig}}
	return newRecentItem(feedID, a.NewsPageID, a, at)
}

func TestTheRecentIndexListsEachItemAtTheAddressOrSharingABandOnce(t *testing.T) {
	feedID := uuid.New()
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	same := strings.Repeat("the council approved the budget after a long debate on roads and schools ", 12)
	other := strings.Repeat("a storm closed the harbour while the ferries waited for the wind to drop ", 12)
	tests := []struct {
		name  string
		index []*recentItem
		look  *recentItem
		want  []int // positions in index, in the order listed
	}{
		{
			name:  "an empty index lists nothing",
			look:  recentArticle(feedID, "https://a.example/1", same, now),
			index: nil,
			want:  nil,
		},
		{
			name: "items sharing every band and one at the address are each listed once, the address first",
			index: []*recentItem{
				recentArticle(feedID, "https://a.example/2", same, now),
				recentArticle(feedID, "https://a.example/1", other, now),
				recentArticle(feedID, "https://a.example/3", same, now),
			},
			look: recentArticle(feedID, "https://a.example/1", same, now),
			want: []int{1, 0, 2},
		},
		{
			name: "an item at another address sharing no band is not listed",
			index: []*recentItem{
				recentArticle(feedID, "https://a.example/2", other, now),
				recentArticle(feedID, "https://a.example/3", same, now),
			},
			look: recentArticle(feedID, "https://a.example/1", same, now),
			want: []int{1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var x pageIndex
			for _, r := range tc.index {
				x.add(r)
			}
			var got []int
			for _, c := range x.candidates(tc.look) {
				got = append(got, slices.Index(tc.index, c))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("candidates at %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTheRecentIndexListsWhatAPruneKeptOnceAndNotWhatItDropped(t *testing.T) {
	feedID := uuid.New()
	start := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	text := strings.Repeat("the council approved the budget after a long debate on roads and schools ", 12)
	var x pageIndex
	var items []*recentItem
	for i := range 200 {
		r := recentArticle(feedID, fmt.Sprintf("https://a.example/%d", i), text, start.Add(time.Duration(i)*time.Second))
		items = append(items, r)
		x.add(r)
	}
	// The oldest is older than since by more than recentFor (2 minutes):
	// the prune rebuilds the index with the items from since on, which
	// take new places.
	since := start.Add(150 * time.Second)
	x.prune(since)
	got := x.candidates(recentArticle(feedID, "https://a.example/new", text, start.Add(time.Hour)))
	if want := items[150:]; !slices.Equal(got, want) {
		t.Fatalf("%d candidates, want the %d kept", len(got), len(want))
	}
}
