package ingest_test

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/migrations"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// An installation from before facts were recorded whatever feeds exist
// has a source crawled for its news feed only: no events recorded. The
// upgrade's migration makes the next crawl read the recent documents again,
// by every reader, so an event feed attached afterwards fills.
func TestAfterTheUpgradeAFeedOfTheKindASourceWasNeverReadForFills(t *testing.T) {
	t.Parallel()
	sql, err := fs.ReadFile(migrations.Owner.Files, "20261126100000_facts_first_reread.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	site := newVenueSite(t)
	h := servicetest.Start(t, withPollInterval(time.Hour), servicetest.WithCrawler())
	c := client{h, h.Key}
	news := c.createFeed("Hall news")
	source := c.attach(news, map[string]any{"sourceType": "site", "domain": hostOf(site)})["sourceId"].(string)
	wait.Until(t, 30*time.Second, "the news feed's articles", func() bool { return slices.Equal(c.articleURLs(news), venueArticles(site)) })
	// The crawl that listed them may still be finishing (following the
	// calendar link, releasing its lease and scheduling the next poll an
	// hour away); the upgrade comes after it, as it does after a stop.
	db := h.Service.DB.Bun
	wait.Until(t, 30*time.Second, "the first crawl to release the source", func() bool {
		var idle bool
		err := db.QueryRowContext(t.Context(), `SELECT lease_owner IS NULL AND last_crawl_at IS NOT NULL FROM crawl_state WHERE source_id = ?`, source).Scan(&idle)
		return err == nil && idle
	})
	// What the old crawler left: the documents seen, no event recorded.
	for _, table := range []string{"ingest_source_events", "ingest_event_documents"} {
		if _, err := db.ExecContext(t.Context(), "DELETE FROM "+table+" WHERE source_id = ?", source); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(t.Context(), "DELETE FROM ingest_event_holders"); err != nil {
		t.Fatal(err)
	}

	for _, stmt := range strings.Split(string(sql), "--bun:split") {
		if _, err := db.ExecContext(t.Context(), stmt); err != nil {
			t.Fatalf("the upgrade's migration: %v", err)
		}
	}
	events := c.createEventFeed("Hall events")
	c.attachEvents(events, source)
	wait.Until(t, 30*time.Second, "the event feed attached after the upgrade to get the site's events", func() bool { return slices.Equal(c.eventTitles(events), venueEvents) })
	if got := c.articleURLs(news); !slices.Equal(got, venueArticles(site)) {
		t.Fatalf("after the re-read the news feed lists %v", got)
	}
}
