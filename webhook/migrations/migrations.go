// Package migrations is the webhook sender's schema, and its job queue's.
//
// Owner's one file, 20261124000800_webhooks, makes the sender's tables
// (routes, secrets, deliveries, payloads, attempts, health) and also the
// webhooks read model's table (webhooks), because it did so when every
// file sat in one folder and databases have it recorded whole; it stays
// with the sender, whose tables it mainly makes. The sender's
// webhook_delivered_through is made by the event store's identity file
// (eventstore/migrations).
//
// Queue is River's schema (the delivery jobs), which River versions itself.
package migrations

import (
	"context"
	"embed"
	"fmt"

	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/internal/migrate"
)

//go:embed *.sql
var files embed.FS

// Owner is the webhook sender in a list of owners for migrate.Run.
var Owner = migrate.Owner{Name: "webhook", Files: files}

// Queue is River's tables in a list of owners for migrate.Run: River's own
// migrator brings them to the version this build's River needs and records
// its versions in river_migration, so upgrading River needs no file here.
var Queue = migrate.Owner{Name: "queue (River)", Apply: migrateRiver}

func migrateRiver(ctx context.Context, db *bun.DB) error {
	migrator, err := rivermigrate.New(riverdatabasesql.New(db.DB), nil)
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("apply river migrations: %w", err)
	}
	return nil
}
