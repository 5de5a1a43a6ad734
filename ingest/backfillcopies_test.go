package ingest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/readmodel/articles"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// A backfill judges copies on the text, as a crawl does: a feed that takes
// two sites running one wire story under different addresses gets the
// story once, though both sites' articles reach it by backfill alone
// (another feed's crawls found them first). Before the articles read
// model kept each article's signature, a backfill offered articles
// without their text's signature and the second site's copy became a
// second item.
func TestABackfillAddsACopyOfAStoryInTheFeedAsACopyNotAnItem(t *testing.T) {
	t.Parallel()
	published := time.Now().UTC().Add(-2 * time.Hour)
	wire := &fakeArticle{Slug: "springfield-council-budget", Title: "Springfield council approves $412 million budget after late-night debate",
		Published: published, Markup: jsonLD, In: inNewsSitemap, Body: budgetStory}
	reject := &fakeArticle{Slug: "shelbyville-council-rejects-budget", Title: "Shelbyville council rejects $96 million budget after late-night debate",
		Published: published, Markup: jsonLD, In: inNewsSitemap, Body: rejectStory}
	paper := &fakeArticle{Slug: "council-approves-budget", Dir: "local", Title: "Council approves $412 million budget after late-night debate",
		Published: published.Add(20 * time.Minute), Markup: openGraph, In: inRSS,
		Body: append([]string{"Posted June 12 | By The Associated Press"}, append(slices.Clone(budgetStory), "Copyright The Associated Press. All rights reserved.")...)}
	wireSite, paperSite := newFakeSite(t, wire, reject), newFakeSite(t, paper)

	h := servicetest.Start(t, withPollInterval(time.Hour), servicetest.WithCrawler())
	c := client{h, h.Key}
	// The first feed takes each site in a feed of its own, so that its
	// crawls record the articles without judging one a copy of the other.
	for _, s := range []*fakeSite{wireSite, paperSite} {
		c.attach(c.createFeed("first of "+s.domain()), map[string]any{"sourceType": "site", "domain": s.domain()})
	}
	wait.Until(t, 30*time.Second, "every page read", func() bool {
		return wireSite.hitCount(wire.path()) > 0 && wireSite.hitCount(reject.path()) > 0 && paperSite.hitCount(paper.path()) > 0
	})
	wait.Until(t, 30*time.Second, "the three articles known with their signatures", func() bool {
		var n int
		return h.Service.DB.Bun.NewRaw(`SELECT count(*) FROM articles WHERE signature IS NOT NULL`).Scan(context.Background(), &n) == nil && n == 3
	})

	feed := c.createFeed("springfield")
	for _, s := range []*fakeSite{wireSite, paperSite} {
		c.attach(feed, map[string]any{"sourceType": "site", "domain": s.domain()})
	}
	wait.Until(t, 30*time.Second, "both backfills done", func() bool {
		var n int
		return h.Service.DB.Bun.NewRaw(`SELECT count(*) FROM ingest_backfills b JOIN ingest_attachments a USING (attachment_id)
			WHERE a.feed_id = ? AND b.done_at IS NOT NULL`, feed).Scan(context.Background(), &n) == nil && n == 2
	})
	var copies int
	wait.Until(t, 30*time.Second, "the paper's article recorded as a copy", func() bool {
		return h.Service.DB.Bun.NewRaw(`SELECT count(*) FROM news_item_copies WHERE feed_id = ?`, feed).Scan(context.Background(), &copies) == nil && copies >= 1
	})
	items := c.items(feed)
	if len(items) != 2 || items[wireSite.URL+reject.path()] == nil {
		t.Fatalf("the feed has %d items %v, want the story once and the other story", len(items), keys(items))
	}
	if copies != 1 {
		t.Errorf("the feed records %d copies, want 1", copies)
	}

	// The signatures come from the log: a rebuilt articles read model
	// holds the same.
	projectortest.RebuildAnswersTheSame(t, h.DSN, h.Service.DB, h.Service.Store, articles.Projector{}, func() any {
		var sigs []string
		if err := h.Service.DB.Bun.NewRaw(`SELECT id::text || coalesce(signature, '') FROM articles ORDER BY id`).Scan(context.Background(), &sigs); err != nil {
			t.Fatal(err)
		}
		return sigs
	})
}
