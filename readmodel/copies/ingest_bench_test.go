package copies_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/nearcopy"
	"github.com/feedsvc/feedsvc/readmodel/copies"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// batchSize is the articles stored at once, about what a crawl's batch
// holds (docs/architecture.md).
const batchSize = 32

// vocabulary gives generated articles words enough to differ.
var vocabulary = strings.Fields(`council budget vote tax school road bridge river storm flood power mayor police fire
	park library bus train station market price company battery solar wind report study court judge law health hospital
	doctor nurse patient water main break street downtown county state federal money plan year month week night morning
	city town village farm crop harvest weather rain snow heat season team game match goal coach player fans stadium`)

func article(r *rand.Rand, site string, i int) domain.ArticleContent {
	words := make([]string, 180)
	for j := range words {
		words[j] = vocabulary[r.IntN(len(vocabulary))]
	}
	title := strings.Join(words[:7], " ")
	sig := nearcopy.Sign(title, strings.Join(words, " "))
	published := time.Now().UTC().Add(-time.Duration(r.IntN(48)) * time.Hour)
	return domain.ArticleContent{URL: fmt.Sprintf("https://%s/news/%d-%s", site, i, words[0]), Title: title, PublishedAt: &published, Signature: &sig}
}

// BenchmarkIngestingArticles stores batches of new articles and adds them
// to one feed, as the crawler's batch does (commands.DiscoverArticles,
// then commands.AddNewsItems): today's exact-URL identity alone, and with
// the copy check (every article's candidates looked up in the feed's
// index, and compared), and with the feed's cross-process lock besides
// (held from the lookup until the copies read model shows the append),
// waking on the runner's progress as a process running the projectors
// does, or polling their checkpoints as a crawler-only process does. ns/op
// is per batch; item-µs is per article.
func BenchmarkIngestingArticles(b *testing.B) {
	h := servicetest.Start(b)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cmds *commands.Handler
	}{
		{"exact URL only", commands.New(h.Service.Store, h.Service.Lookups)},
		{"with the copy check", commands.New(h.Service.Store, h.Service.Lookups, commands.FindingCopies(copies.NewQueries(h.Service.DB.Bun)))},
		{"with the copy check and the feed lock", commands.New(h.Service.Store, h.Service.Lookups, commands.FindingCopies(copies.NewQueries(h.Service.DB.Bun)),
			commands.DecidingCopiesAlone(feedLocks(h)))},
		{"with the copy check and the feed lock, polling", commands.New(h.Service.Store, h.Service.Lookups, commands.FindingCopies(copies.NewQueries(h.Service.DB.Bun)),
			commands.DecidingCopiesAlone(pollingFeedLocks(h)))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			feed := h.DoWith("POST", "/feeds/news", map[string]any{"name": tc.name, "description": "bench"}, map[string]string{"Authorization": "Bearer " + h.Key}).Data()["id"].(string)
			site := strings.ReplaceAll(uuid.NewString(), "-", "") + ".example"
			att := h.DoWith("POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "site", "domain": site}, map[string]string{"Authorization": "Bearer " + h.Key}).Data()
			var org uuid.UUID
			if err := h.Service.DB.Bun.NewRaw(`SELECT organization_id FROM feeds WHERE id = ?`, feed).Scan(ctx, &org); err != nil {
				b.Fatal(err)
			}
			to := domain.ItemTarget{FeedID: uuid.MustParse(feed), OrganizationID: org, AttachmentID: uuid.MustParse(att["id"].(string)),
				SourceID: uuid.MustParse(att["sourceId"].(string)), SourceType: domain.SourceSite}
			r := rand.New(rand.NewPCG(1, 2))
			n := 0
			b.ResetTimer()
			for b.Loop() {
				found := make([]commands.DiscoverArticle, batchSize)
				for i := range found {
					found[i] = commands.DiscoverArticle{SourceID: to.SourceID, Content: article(r, site, n)}
					n++
				}
				stored, _, err := tc.cmds.DiscoverArticles(ctx, found)
				if err != nil {
					b.Fatal(err)
				}
				items := make([]commands.AddNewsItem, len(stored))
				for i, a := range stored {
					items[i] = commands.AddNewsItem{ItemTarget: to, Article: a.ArticleDiscovered}
				}
				added, _, err := tc.cmds.AddNewsItems(ctx, items)
				if err != nil {
					b.Fatal(err)
				}
				for i, ok := range added {
					if !ok {
						b.Fatalf("article %d of the batch was not added: a generated article taken for a copy", i)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "item-µs")
		})
	}
}

// BenchmarkAddingHappenings stores a new happening and adds it to one
// event feed, as the crawler does for each happening it finds
// (commands.DiscoverHappening, then commands.AddHappeningItem): without
// the copy check, with it (the feed's items starting at the happening's
// start looked up and compared), and with the feed's cross-process lock
// besides (held from the lookup until the event items read model shows
// the append), waking on the runner's progress or polling checkpoints.
// ns/op is per happening.
func BenchmarkAddingHappenings(b *testing.B) {
	h := servicetest.Start(b)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cmds *commands.Handler
	}{
		{"identity only", commands.New(h.Service.Store, h.Service.Lookups)},
		{"with the copy check", commands.New(h.Service.Store, h.Service.Lookups, commands.FindingHappeningCopies(happeningitems.NewQueries(h.Service.DB.Bun)))},
		{"with the copy check and the feed lock", commands.New(h.Service.Store, h.Service.Lookups, commands.FindingHappeningCopies(happeningitems.NewQueries(h.Service.DB.Bun)),
			commands.DecidingCopiesAlone(feedLocks(h)))},
		{"with the copy check and the feed lock, polling", commands.New(h.Service.Store, h.Service.Lookups, commands.FindingHappeningCopies(happeningitems.NewQueries(h.Service.DB.Bun)),
			commands.DecidingCopiesAlone(pollingFeedLocks(h)))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			to := newEventFeed(b, h, 1)[0]
			first := time.Date(2027, 6, 1, 18, 0, 0, 0, time.UTC)
			n := 0
			for b.Loop() {
				// A concert every quarter of an hour: each has other
				// items starting near it, none at its start.
				details := concert(to, n, fmt.Sprintf("Ensemble %d", n), first.Add(time.Duration(n)*15*time.Minute))
				n++
				found, _, err := tc.cmds.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: to.SourceID, Details: details})
				if err != nil {
					b.Fatal(err)
				}
				added, _, err := tc.cmds.AddHappeningItem(ctx, commands.AddHappeningItem{ItemTarget: to, HappeningID: found.HappeningID})
				if err != nil {
					b.Fatal(err)
				}
				if !added {
					b.Fatalf("concert %d was not added", n)
				}
			}
		})
	}
}

// pollingFeedLocks are the feed locks of a process that runs no
// projectors (the crawler role alone): their waits poll the checkpoints.
func pollingFeedLocks(h *servicetest.Harness) *copies.FeedLocks {
	return copies.NewFeedLocks(h.Service.DB.Bun, slog.New(slog.NewTextHandler(h.T.Output(), nil)))
}
