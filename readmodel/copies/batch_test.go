package copies_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/copies"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// TestTheIndexWrittenAtTheEndOfABatchIsTheIndexWrittenPerEvent has the
// live projector index items and copies a few events at a time, a copy
// split off (its row deleted, then indexed again as an item of its own)
// among them, and then rebuilds the read model from the log, where one
// batch holds every event: the index rows and bands a batch writes at its
// end, flushed before the split reads them, must be what writing them
// event by event left.
func TestTheIndexWrittenAtTheEndOfABatchIsTheIndexWrittenPerEvent(t *testing.T) {
	h := servicetest.Start(t)
	ctx := context.Background()
	auth := map[string]string{"Authorization": "Bearer " + h.Key}
	feed := uuid.MustParse(h.DoWith("POST", "/feeds/news", map[string]any{"name": "batch", "description": "batch"}, auth).Data()["id"].(string))
	var org uuid.UUID
	if err := h.Service.DB.Bun.NewRaw(`SELECT organization_id FROM feeds WHERE id = ?`, feed).Scan(ctx, &org); err != nil {
		t.Fatal(err)
	}
	targets := make([]domain.ItemTarget, 2)
	sites := make([]string, 2)
	for p := range targets {
		sites[p] = strings.ReplaceAll(uuid.NewString(), "-", "") + ".example"
		att := h.DoWith("POST", "/feeds/news/"+feed.String()+"/sources", map[string]any{"sourceType": "site", "domain": sites[p]}, auth).Data()
		targets[p] = domain.ItemTarget{FeedID: feed, OrganizationID: org, AttachmentID: uuid.MustParse(att["id"].(string)),
			SourceID: uuid.MustParse(att["sourceId"].(string)), SourceType: domain.SourceSite}
	}
	cmds := h.Service.Commands
	r := rand.New(rand.NewPCG(40, 1))
	var splitItem, splitPage uuid.UUID
	for s := range 12 {
		story := article(r, sites[0], s)
		var adds []commands.AddNewsItem
		for p := range targets {
			content := story
			content.URL = strings.Replace(story.URL, sites[0], sites[p], 1)
			stored, _, err := cmds.DiscoverArticles(ctx, []commands.DiscoverArticle{{SourceID: targets[p].SourceID, Content: content}})
			if err != nil {
				t.Fatal(err)
			}
			adds = append(adds, commands.AddNewsItem{ItemTarget: targets[p], Article: stored[0].ArticleDiscovered})
		}
		added, _, err := cmds.AddNewsItems(ctx, adds)
		if err != nil {
			t.Fatal(err)
		}
		if !added[0] || added[1] {
			t.Fatalf("story %d: added %v, want the first an item and the second its copy", s, added)
		}
		if s == 5 {
			if err := h.Service.DB.Bun.NewRaw(`SELECT id FROM news_items WHERE feed_id = ? AND news_page_id = ?`, feed, adds[0].Article.NewsPageID).Scan(ctx, &splitItem); err != nil {
				// The item's row may not be projected yet: wait for it.
				waitProjected(t, h)
				if err := h.Service.DB.Bun.NewRaw(`SELECT id FROM news_items WHERE feed_id = ? AND news_page_id = ?`, feed, adds[0].Article.NewsPageID).Scan(ctx, &splitItem); err != nil {
					t.Fatal(err)
				}
			}
			splitPage = adds[1].Article.NewsPageID
			if _, _, err := cmds.SplitCopy(ctx, commands.SplitCopy{FeedRef: commands.FeedRef{Kind: domain.FeedNews, Org: org, FeedID: feed}, ItemID: splitItem, NewsPageID: splitPage}); err != nil {
				t.Fatal(err)
			}
		}
		waitProjected(t, h)
	}
	answers := func() any { return projectortest.Dump(t, h.Service.DB.Bun, copies.Projector{}) }
	dump := answers().(string)
	for _, want := range []string{"news_copy_index 24 rows", "news_copy_bands ", "news_item_copies 11 rows"} {
		if !strings.Contains(dump, want) {
			t.Fatalf("the live read model lacks %q:\n%.600s", want, dump)
		}
	}
	projectortest.RebuildAnswersTheSame(t, h.DSN, h.Service.DB, h.Service.Store, copies.Projector{}, answers)
}

// waitProjected waits until every projector of h has projected the log's
// last event.
func waitProjected(t *testing.T, h *servicetest.Harness) {
	t.Helper()
	head := projectortest.HeadPosition(t, h.Service.DB)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range []string{"copies", "newsitems"} {
		if err := h.Service.Runner.Progress(name).WaitFor(ctx, head); err != nil {
			t.Fatalf("%s did not catch up: %v", name, err)
		}
	}
}
