package webhooks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/webhooks"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

func TestTheWebhooksReadModelRebuiltFromTheLogIsTheOneProjected(t *testing.T) {
	db, dsn := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	ctx := context.Background()
	org := uuid.New()
	feed := uuid.New()
	off, on := false, true
	for i := range 6 {
		w, _, err := cmds.CreateWebhook(ctx, commands.CreateWebhook{Org: org, SecretID: uuid.New(), Config: domain.WebhookConfig{
			URL: "https://example.com/hook", Events: []string{domain.WebhookItemAdded}, EventFeedIDs: []uuid.UUID{},
		}})
		if err != nil {
			t.Fatal(err)
		}
		ref := commands.WebhookRef{Org: org, ID: w.ID}
		url, ids := "https://example.com/changed", []string{feed.String()}
		steps := []func() error{
			func() error {
				_, _, err := cmds.UpdateWebhook(ctx, commands.UpdateWebhook{WebhookRef: ref, Update: domain.WebhookUpdate{
					Request: domain.WebhookRequest{URL: &url, EventFeedIDs: &ids}, Enabled: &off}})
				return err
			},
			func() error {
				_, _, err := cmds.UpdateWebhook(ctx, commands.UpdateWebhook{WebhookRef: ref, Update: domain.WebhookUpdate{Enabled: &on}})
				return err
			},
			func() error {
				_, _, err := cmds.RotateWebhookSecret(ctx, commands.RotateWebhookSecret{WebhookRef: ref, SecretID: uuid.New()})
				return err
			},
			func() error { _, err := cmds.DeleteWebhook(ctx, ref); return err },
		}
		for _, step := range steps[:i%5] {
			if err := step(); err != nil {
				t.Fatal(err)
			}
		}
	}
	projectortest.RunUntilCaughtUp(t, store, db, 3, webhooks.Projector{})
	before := projectortest.Dump(t, db.Bun, webhooks.Projector{})
	if !strings.HasPrefix(before, "webhooks 5 rows") {
		t.Fatalf("projected %s; want the five webhooks not deleted", before)
	}
	if err := projections.Rebuild(ctx, dsn, db, store, webhooks.Projector{}, servicetest.Logger()); err != nil {
		t.Fatal(err)
	}
	if after := projectortest.Dump(t, db.Bun, webhooks.Projector{}); after != before {
		t.Fatalf("rebuilt:\n%s\nprojected:\n%s", after, before)
	}
}
