package ingest

import (
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/connector"
)

// The date window is judged here, for candidates of every kind of listing;
// connectors list what the listings give (see crawl's
// TestSitemapCandidatesListsEveryURLWithItsDates, whose sitemap these are).
func TestCandidatesOfEveryListingAreJudgedByOneDateWindow(t *testing.T) {
	since := time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)
	day := func(d int) time.Time { return time.Date(2024, 5, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name string
		c    connector.Candidate
		want bool
	}{
		{"a sitemap URL published after since", connector.Candidate{PublishedAt: time.Date(2024, 5, 3, 8, 0, 0, 0, time.UTC)}, true},
		{"a sitemap URL whose only date, its lastmod, is before since", connector.Candidate{LastMod: day(1)}, false},
		{"an undated sitemap URL", connector.Candidate{}, true},
		{"a sitemap URL modified exactly at since", connector.Candidate{LastMod: since}, true},
		// The article will be judged by its publication date, so the
		// listing's is what counts.
		{"a sitemap URL published before since and modified after", connector.Candidate{PublishedAt: time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC), LastMod: day(4)}, false},
		{"a feed entry published before since", connector.Candidate{PublishedAt: day(1)}, false},
		{"a feed entry published after since", connector.Candidate{PublishedAt: day(3)}, true},
		{"an index page link, undated", connector.Candidate{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := inWindow(tt.c, since); got != tt.want {
				t.Errorf("inWindow(%+v) = %v, want %v", tt.c, got, tt.want)
			}
		})
	}
}
