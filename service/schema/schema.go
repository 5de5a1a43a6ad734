// Package schema is the service's database schema: the list of its owners,
// each embedding its own migrations, in the order internal/migrate runs
// them. `feedsvc migrate`, `feedsvc serve` and the tests' databases all
// migrate through it.
package schema

import (
	"context"

	"github.com/uptrace/bun"

	eventstoremigrations "github.com/feedsvc/feedsvc/eventstore/migrations"
	ingestmigrations "github.com/feedsvc/feedsvc/ingest/migrations"
	websubmigrations "github.com/feedsvc/feedsvc/ingest/websub/migrations"
	authmigrations "github.com/feedsvc/feedsvc/internal/auth/migrations"
	"github.com/feedsvc/feedsvc/internal/database"
	idempotencymigrations "github.com/feedsvc/feedsvc/internal/idempotency/migrations"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
	projectionsmigrations "github.com/feedsvc/feedsvc/projections/migrations"
	"github.com/feedsvc/feedsvc/service/projectors"
	webhookmigrations "github.com/feedsvc/feedsvc/webhook/migrations"
)

// Owners lists every owner of tables, from the bottom of the house up:
// the stores and the engine, then every registered projector that ships
// its tables' migrations (projections.Migrated: a new read model's tables
// come with its folder), then ingest, webhook and the queue. Their files
// run as one sequence in timestamp order whatever the list's order (see
// internal/migrate); the queue's function runs after them.
func Owners() []migrate.Owner {
	owners := []migrate.Owner{
		eventstoremigrations.Owner,
		authmigrations.Owner,
		idempotencymigrations.Owner,
		projectionsmigrations.Owner,
	}
	for _, p := range projectors.All() {
		if m, ok := p.(projections.Migrated); ok {
			owners = append(owners, m.Migrations())
		}
	}
	return append(owners,
		ingestmigrations.Owner,
		websubmigrations.Owner,
		webhookmigrations.Owner,
		webhookmigrations.Queue,
	)
}

// Migrate brings db to the service's current schema (see migrate.Run).
func Migrate(ctx context.Context, db *bun.DB) error {
	return migrate.Run(ctx, db, Owners()...)
}

// Open opens the database at dsn (creating it if the server has none of
// that name) and brings it to the current schema.
func Open(ctx context.Context, dsn string) (*database.DB, error) {
	return migrate.Open(ctx, dsn, Owners()...)
}

// Fingerprint identifies this build's schema: two builds with the same
// fingerprint make the same schema (River's part aside, which Migrate
// brings up to date on its own).
func Fingerprint() (string, error) {
	return migrate.Fingerprint(Owners()...)
}
