// Package migrate applies the schema of the service's database, which its
// owners ship: the event store its log, auth its keys, the queue its jobs,
// each read model its tables. Each owner embeds its own migration files
// (<14-digit timestamp>_<what>.up.sql and .down.sql, a .tx. before .up
// for one transaction) or, for a schema that is someone else's to version
// (River's), brings a function; a program names its owners in one list
// and Run applies them, as River's and EventStoreDB's clients carry their
// own schema.
//
// The files of every owner are applied as one sequence in timestamp order,
// by bun's migrator, and recorded in bun_migrations by their timestamps:
// they were written in that order and later ones build on earlier ones of
// other owners (a read model's file may alter an auth table), and databases
// made when every file sat in one folder have them recorded so. A file is
// therefore never renamed once shipped. Owners' functions run afterwards,
// in the list's order.
package migrate

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/uptrace/bun"
	bunmigrate "github.com/uptrace/bun/migrate"

	"github.com/feedsvc/feedsvc/internal/database"
)

// Owner is one part of the program with tables of its own.
type Owner struct {
	// Name says who the tables belong to, in errors and in listings.
	Name string
	// Files holds the owner's migration files at its root; nil for none.
	Files fs.FS
	// Apply, when set, brings a schema versioned elsewhere up to date
	// (River's job queue, which River's own migrator keeps). It must do
	// nothing when there is nothing to do.
	Apply func(ctx context.Context, db *bun.DB) error
}

// The Postgres advisory lock Run holds, under the name every
// release of the service has used: a process of the previous release
// migrating beside one of this release waits for it.
const (
	lockSQL   = "SELECT pg_advisory_lock(hashtextextended('feedsvc:migrate', 0))"
	unlockSQL = "SELECT pg_advisory_unlock(hashtextextended('feedsvc:migrate', 0))"
)

// Run applies every pending migration of owners under a lock, so processes
// starting together do not race: the first migrates, the others wait for it
// and then find nothing to do. The lock is a Postgres session lock, which a
// process that dies lets go of with its connection (bun's own lock is a row
// that a crash would leave behind, and that a process starting beside
// another fails on instead of waiting).
func Run(ctx context.Context, db *bun.DB, owners ...Owner) error {
	ms, err := Collect(owners...)
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("lock migrations: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, lockSQL); err != nil {
		return fmt.Errorf("lock migrations: %w", err)
	}
	defer func() {
		_, err := conn.ExecContext(context.WithoutCancel(ctx), unlockSQL)
		if err != nil {
			// The pool must not keep a session holding the lock: a bad
			// connection is closed, and its session's locks go with it.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	m := bunmigrate.NewMigrator(db, ms)
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("init migrations: %w", err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	for _, o := range owners {
		if o.Apply == nil {
			continue
		}
		if err := o.Apply(ctx, db); err != nil {
			return fmt.Errorf("migrate %s: %w", o.Name, err)
		}
	}
	return nil
}

// Collect gathers the owners' files into one set of bun migrations. It
// refuses two owners shipping one migration: bun records a migration by its
// timestamp, so two files of one timestamp would be applied as one, or one
// not at all.
func Collect(owners ...Owner) (*bunmigrate.Migrations, error) {
	all := bunmigrate.NewMigrations()
	by := map[string]string{} // timestamp -> owner
	for _, o := range owners {
		if o.Files == nil {
			continue
		}
		ms := bunmigrate.NewMigrations()
		if err := ms.Discover(o.Files); err != nil {
			return nil, fmt.Errorf("discover migrations of %s: %w", o.Name, err)
		}
		for _, mig := range ms.Sorted() {
			if other, ok := by[mig.Name]; ok {
				return nil, fmt.Errorf("migration %s is shipped by both %s and %s", mig.String(), other, o.Name)
			}
			by[mig.Name] = o.Name
			all.Add(mig)
		}
	}
	return all, nil
}

// Files lists the migration files of owners (up and down), by name.
func Files(owners ...Owner) ([]string, error) {
	var names []string
	for _, o := range owners {
		if o.Files == nil {
			continue
		}
		err := fs.WalkDir(o.Files, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || path.Ext(p) != ".sql" {
				return err
			}
			names = append(names, p)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list migrations of %s: %w", o.Name, err)
		}
	}
	slices.Sort(names)
	return names, nil
}

// Fingerprint identifies the schema owners make: the same owners with the
// same files make the same schema (their Apply functions aside, which Run
// brings up to date on its own).
func Fingerprint(owners ...Owner) (string, error) {
	h := sha256.New()
	for _, o := range owners {
		fmt.Fprintf(h, "owner\x00%s\x00", o.Name)
		if o.Files == nil {
			continue
		}
		err := fs.WalkDir(o.Files, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(o.Files, p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s\x00%d\x00", p, len(data))
			h.Write(data)
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("fingerprint migrations of %s: %w", o.Name, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Open opens the database at dsn (creating it if the server has none of
// that name) and applies owners' migrations to it.
func Open(ctx context.Context, dsn string, owners ...Owner) (*database.DB, error) {
	db, err := database.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := Run(ctx, db.Bun, owners...); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}
