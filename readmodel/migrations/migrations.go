// Package migrations holds the schema of the service's database as ordered
// SQL files, applied by `feedsvc migrate` and on `feedsvc serve` start.
//
// Files are named <14-digit timestamp>_<what>.up.sql (and .down.sql). Each
// concern adds its own files; bun's migrator applies them in name order and
// records them in bun_migrations.
package migrations

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/feedsvc/feedsvc/internal/database"
)

//go:embed *.sql
var files embed.FS

// Migrate applies every pending migration under a lock, so concurrent
// processes starting together do not race: the first migrates, the others
// wait for it and then find nothing to do. The lock is a Postgres session
// lock, which a process that dies lets go of with its connection (bun's
// own lock is a row that a crash would leave behind, and that a process
// starting beside another fails on instead of waiting).
func Migrate(ctx context.Context, db *bun.DB) error {
	ms := migrate.NewMigrations()
	if err := ms.Discover(files); err != nil {
		return fmt.Errorf("discover migrations: %w", err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("lock migrations: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(hashtextextended('feedsvc:migrate', 0))"); err != nil {
		return fmt.Errorf("lock migrations: %w", err)
	}
	defer func() {
		_, err := conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtextextended('feedsvc:migrate', 0))")
		if err != nil {
			// The pool must not keep a session holding the lock: a bad
			// connection is closed, and its session's locks go with it.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	m := migrate.NewMigrator(db, ms)
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("init migrations: %w", err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return migrateRiver(ctx, db)
}

// migrateRiver brings River's tables (the webhook job queue) to the
// version this build's River needs. River's own migrator does it, under
// the lock above, and records its versions in river_migration: its schema
// is its own, so upgrading River needs no file here.
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

// Open opens the database at dsn (creating it if the server has none of
// that name) and brings it to the current schema.
func Open(ctx context.Context, dsn string) (*database.DB, error) {
	db, err := database.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := Migrate(ctx, db.Bun); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Fingerprint identifies this build's migration files: two builds with the
// same fingerprint make the same schema (River's part aside, which Migrate
// brings up to date on its own).
func Fingerprint() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("fingerprint migrations: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
