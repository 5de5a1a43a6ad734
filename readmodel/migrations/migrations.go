// Package migrations holds the schema of the service's database as ordered
// SQL files, applied by `feedsvc migrate` and on `feedsvc serve` start.
//
// Files are named <14-digit timestamp>_<what>.up.sql (and .down.sql). Each
// concern adds its own files; bun's migrator applies them in name order and
// records them in bun_migrations.
package migrations

import (
	"context"
	"embed"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

//go:embed *.sql
var files embed.FS

// Migrate applies every pending migration under a lock, so concurrent
// processes starting together do not race.
func Migrate(ctx context.Context, db *bun.DB) error {
	ms := migrate.NewMigrations()
	if err := ms.Discover(files); err != nil {
		return fmt.Errorf("discover migrations: %w", err)
	}
	m := migrate.NewMigrator(db, ms)
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("init migrations: %w", err)
	}
	if err := m.Lock(ctx); err != nil {
		return fmt.Errorf("lock migrations: %w", err)
	}
	defer m.Unlock(ctx) //nolint:errcheck // unlock failure leaves a stale lock row we report below
	if _, err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}
