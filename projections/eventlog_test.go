package projections_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// newsWorkload stores articles found by the sources of news feeds, their
// items, feedback on some of them and a webhook: with workload and
// eventWorkload, every projector of All has something to project.
func newsWorkload(t *testing.T, store eventstore.Store, db *database.DB, cmds *commands.Handler, org uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var feeds []uuid.UUID
	for f := range 3 {
		feed, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedNews, Org: org, Name: fmt.Sprintf("news %d", f), Description: "d"})
		must(err)
		feeds = append(feeds, feed.ID)
		site := fmt.Sprintf("news%d.example", f%2)
		att, _, err := cmds.AttachSource(ctx, commands.AttachSource{
			FeedRef: commands.FeedRef{Kind: domain.FeedNews, Org: org, FeedID: feed.ID}, Request: domain.SourceRequest{SourceType: "site", Domain: &site},
		})
		must(err)
		for a := range 8 {
			published := time.Date(2026, 11, 1+a, 9, 0, 0, 0, time.UTC)
			found, _, err := cmds.DiscoverArticle(ctx, commands.DiscoverArticle{SourceID: att.SourceID, Content: domain.ArticleContent{
				URL: fmt.Sprintf("https://%s/story-%d", site, a), Title: fmt.Sprintf("Story %d", a), PublishedAt: &published,
			}})
			must(err)
			_, _, err = cmds.AddNewsItem(ctx, commands.AddNewsItem{
				ItemTarget: domain.ItemTarget{FeedID: feed.ID, OrganizationID: org, AttachmentID: att.ID, SourceID: att.SourceID, SourceType: att.SourceType},
				Article:    found.ArticleDiscovered,
			})
			must(err)
		}
	}
	// Feedback names items the read model knows.
	projectortest.RunUntilCaughtUp(t, store, db, 50, projectors.All()...)
	var items []struct {
		ID     uuid.UUID `bun:"id"`
		FeedID uuid.UUID `bun:"feed_id"`
	}
	must(db.Bun.NewRaw("SELECT id, feed_id FROM news_items ORDER BY id").Scan(ctx, &items))
	for i, it := range items {
		if i%3 == 2 {
			continue
		}
		_, _, err := cmds.GiveFeedback(ctx, commands.GiveFeedback{
			FeedRef: commands.FeedRef{Kind: domain.FeedNews, Org: org, FeedID: it.FeedID}, ItemID: it.ID,
			Rating: []string{"positive", "negative", "neutral"}[i%3], Comment: fmt.Sprintf("comment %d", i),
		})
		must(err)
	}
	hook, _, err := cmds.CreateWebhook(ctx, commands.CreateWebhook{Org: org, SecretID: uuid.New(), Config: domain.WebhookConfig{
		URL: "https://hooks.example/a", Events: []string{"event.item_added"},
	}})
	must(err)
	off := false
	_, _, err = cmds.UpdateWebhook(ctx, commands.UpdateWebhook{WebhookRef: commands.WebhookRef{Org: org, ID: hook.ID}, Update: domain.WebhookUpdate{Enabled: &off}})
	must(err)
	// Two subscription addresses of a feed, one revoked.
	ref := commands.FeedRef{Kind: domain.FeedNews, Org: org, FeedID: items[0].FeedID}
	for i := range 2 {
		sub, _, err := cmds.CreateFeedSubscription(ctx, commands.CreateFeedSubscription{FeedRef: ref,
			Prefix: fmt.Sprintf("prefix%06d", i), SecretHash: fmt.Sprintf("%064x", i+1)})
		must(err)
		if i == 0 {
			_, err = cmds.RevokeFeedSubscription(ctx, commands.RevokeFeedSubscription{FeedRef: ref, ID: sub.SubscriptionID})
			must(err)
		}
	}
}

func TestALogExportedAndImportedIntoAFreshDatabaseProjectsTheSameReadModels(t *testing.T) {
	ctx := context.Background()
	src, _ := testdb.New(t)
	store, cmds := projectortest.Commands(src)
	org := uuid.New()
	projectortest.FeedWorkload(t, cmds, org, 12)
	projectortest.HappeningWorkload(t, cmds, org)
	newsWorkload(t, store, src, cmds, org)
	projectortest.RunUntilCaughtUp(t, store, src, 50, projectors.All()...)

	var file bytes.Buffer
	exported, err := store.Export(ctx, &file, eventstore.ExportFilter{}, nil)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	if total := countEvents(t, src); int(exported.Events) != total {
		t.Fatalf("exported %d of %d events", exported.Events, total)
	}

	dst, _ := testdb.New(t)
	dstStore, dstCmds := projectortest.Commands(dst)
	key, err := store.SealKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	imported, err := dstStore.Import(ctx, bytes.NewReader(file.Bytes()), eventstore.ImportOptions{SealKey: key})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if imported.Events != exported.Events {
		t.Fatalf("imported %d of %d events", imported.Events, exported.Events)
	}
	projectortest.RunUntilCaughtUp(t, dstStore, dst, 50, projectors.All()...)
	for _, p := range projectors.All() {
		var rows int
		if err := src.Bun.NewRaw("SELECT count(*) FROM "+p.Tables()[0]).Scan(ctx, &rows); err != nil || rows == 0 {
			t.Fatalf("the workload left %s empty (%v): the comparison would prove nothing", p.Tables()[0], err)
		}
		if want, got := dumpPlaceless(t, src.Bun, p), dumpPlaceless(t, dst.Bun, p); want != got {
			t.Fatalf("%s differs after export and import:\noriginal:\n%s\nimported:\n%s", p.Name(), want, got)
		}
	}

	// The imported installation takes commands on the imported streams.
	var feed uuid.UUID
	if err := dst.Bun.NewRaw("SELECT id FROM feeds WHERE kind = 'news' ORDER BY id LIMIT 1").Scan(ctx, &feed); err != nil {
		t.Fatal(err)
	}
	name := "renamed after the import"
	if _, _, err := dstCmds.UpdateFeed(ctx, commands.UpdateFeed{
		FeedRef: commands.FeedRef{Kind: domain.FeedNews, Org: org, FeedID: feed}, Update: domain.FeedUpdate{Name: &name},
	}); err != nil {
		t.Fatalf("a command on an imported feed: %v", err)
	}
}

// dumpPlaceless is dump without the log positions rows keep (items' change
// keys, the insights' tie-breakers): an imported log has the new store's
// positions, in the same order.
func dumpPlaceless(t *testing.T, db bun.IDB, p projections.Projector) string {
	t.Helper()
	var out string
	for _, table := range p.Tables() {
		var rows []string
		err := db.NewRaw(fmt.Sprintf("SELECT (to_jsonb(t) - 'change_commit' - 'change_prepare' - 'log_commit' - 'log_prepare')::text AS r FROM %s AS t ORDER BY r", table)).
			Scan(context.Background(), &rows)
		if err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		out += fmt.Sprintf("%s %d rows\n%v\n", table, len(rows), rows)
	}
	return out
}
