package crawlstate

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// A quick poll's release names when the next poll is due at the latest
// (package ingest, quick.go): the schedule never goes past it, unless the
// site itself asked for longer than the poll interval.
func TestAReleasesDueByBoundsItsNextPollUnlessTheSiteAskedForLonger(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ctx := context.Background()
	const interval = 10 * time.Minute
	s := New(db.Bun, db.Pool, Options{Owner: "release-test", LeaseDuration: 5 * time.Minute,
		Schedule: Schedule{PollInterval: interval, MinPollInterval: time.Minute, MaxPollInterval: interval,
			PollsPerArticle: 20, RecentArticles: 20, MaxCacheHint: time.Hour, MaxRetryAfter: 24 * time.Hour}})
	tests := []struct {
		name     string
		dueBy    time.Duration
		throttle document.Hint
		// the next poll, from the release's end
		atLeast, atMost time.Duration
	}{
		{"without a bound the interval decides", 0, document.Hint{}, interval * 9 / 10, interval},
		{"a bound within the interval brings the next poll forward", 3 * time.Minute, document.Hint{}, 3 * time.Minute, 3 * time.Minute},
		{"a bound past the jittered interval leaves it", 20 * time.Minute, document.Hint{}, interval * 9 / 10, interval},
		{"the site's own throttle beyond the interval wins over the bound", 3 * time.Minute,
			document.Hint{For: 2 * time.Hour, By: document.ByRetryAfter}, 2 * time.Hour * 9 / 10, 2 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := uuid.New()
			if _, err := db.Pool.Exec(ctx, `INSERT INTO crawl_state (source_id, next_at, leased_until, lease_owner)
				VALUES ($1, now(), now() + interval '1 minute', 'release-test')`, id); err != nil {
				t.Fatal(err)
			}
			ended := time.Now()
			r := Release{SourceID: id, Ended: ended, Throttle: tt.throttle}
			if tt.dueBy > 0 {
				r.DueBy = ended.Add(tt.dueBy)
			}
			if err := s.FlushReleases(ctx, []Release{r}); err != nil {
				t.Fatal(err)
			}
			var next time.Time
			if err := db.Pool.QueryRow(ctx, `SELECT next_at FROM crawl_state WHERE source_id = $1`, id).Scan(&next); err != nil {
				t.Fatal(err)
			}
			// A second for the two clocks and the statement's time.
			if got := next.Sub(ended); got < tt.atLeast-time.Second || got > tt.atMost+time.Second {
				t.Errorf("next poll %v after the release, want %v to %v", got.Round(time.Second), tt.atLeast, tt.atMost)
			}
		})
	}
}
