// Package testdb gives each test its own freshly migrated Postgres database,
// dropped when the test ends, so test runs never collide.
//
// Applying every migration (River's too) takes a second or more; copying a
// migrated database is a file copy. So the first test of a run migrates a
// template database named for the schema's fingerprint, and every test's
// database is created from it. A test of one owner's store (the event
// store's) gets that owner's schema alone, from a template of its own. Test binaries of other checkouts and
// runs share a template when their migrations are the same, and make their
// own otherwise; the schema is still brought up to date on open, so a
// template never gives a test an old schema.
package testdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/service/schema"
)

// ServerURL is the Postgres server tests use; TEST_DATABASE_URL overrides it.
func ServerURL() string {
	if v := os.Getenv("TEST_DATABASE_URL"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// New creates a database for t with the service's schema and returns it
// open.
func New(t testing.TB) (*database.DB, string) {
	t.Helper()
	return NewFor(t, schema.Owners()...)
}

// NewFor creates a database for t with the schema of owners alone and
// returns it open: a store's tests run on the tables the store ships.
func NewFor(t testing.TB, owners ...migrate.Owner) (*database.DB, string) {
	t.Helper()
	dsn := newMigratedURL(t, owners)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, err := migrate.Open(ctx, dsn, owners...)
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(db.Close)
	return db, dsn
}

// NewURL creates an empty database for t and returns its URL; it is dropped
// when the test ends.
func NewURL(t testing.TB) string {
	t.Helper()
	return create(t, "")
}

// NewMigratedURL creates a database for t with the current schema, copied
// from the template, and returns its URL; it is dropped when the test ends.
func NewMigratedURL(t testing.TB) string {
	t.Helper()
	return newMigratedURL(t, schema.Owners())
}

func newMigratedURL(t testing.TB, owners []migrate.Owner) string {
	t.Helper()
	tmpl, err := template(owners)
	if err != nil {
		t.Fatalf("migrated template database: %v", err)
	}
	return create(t, tmpl)
}

func create(t testing.TB, from string) string {
	t.Helper()
	name := "feedsvc_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	dsn, err := database.WithDatabase(ServerURL(), name)
	if err != nil {
		t.Fatalf("test database url: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if from == "" {
		err = database.EnsureDatabase(ctx, dsn)
	} else {
		err = admin(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{from}.Sanitize())
	}
	if err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := database.DropDatabase(ctx, dsn); err != nil {
			fmt.Fprintf(os.Stderr, "drop test database %s: %v\n", name, err)
		}
	})
	return dsn
}

// templates holds, per fingerprint of a list of owners, the making of its
// template database: once per test binary, when no earlier run made it.
var templates sync.Map // fingerprint -> func() (string, error)

// template returns the name of the template database migrated by owners.
func template(owners []migrate.Owner) (string, error) {
	fp, err := migrate.Fingerprint(owners...)
	if err != nil {
		return "", err
	}
	build, _ := templates.LoadOrStore(fp, sync.OnceValues(func() (string, error) {
		return makeTemplate("feedsvc_template_"+fp[:16], owners)
	}))
	return build.(func() (string, error))()
}

func makeTemplate(name string, owners []migrate.Owner) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if ok, err := exists(ctx, name); err != nil || ok {
		return name, err
	}
	// Made under a temporary name and renamed when complete, so a copy is
	// never taken of a half-migrated template, whichever binary wins.
	building := "feedsvc_tmpl_building_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	dsn, err := database.WithDatabase(ServerURL(), building)
	if err != nil {
		return "", err
	}
	if err := database.EnsureDatabase(ctx, dsn); err != nil {
		return "", err
	}
	db, err := migrate.Open(ctx, dsn, owners...)
	if err != nil {
		_ = database.DropDatabase(ctx, dsn)
		return "", err
	}
	db.Close()
	err = admin(ctx, "ALTER DATABASE "+pgx.Identifier{building}.Sanitize()+" RENAME TO "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database: another binary finished first
		return name, database.DropDatabase(ctx, dsn)
	}
	if err != nil {
		_ = database.DropDatabase(ctx, dsn)
		return "", err
	}
	// Nobody connects to a template: a connection would make every copy
	// fail until it closed.
	return name, admin(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH ALLOW_CONNECTIONS false")
}

func exists(ctx context.Context, name string) (bool, error) {
	conn, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		return false, fmt.Errorf("connect to test server: %w", err)
	}
	defer conn.Close(ctx)
	var ok bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&ok)
	return ok, err
}

func admin(ctx context.Context, statement string) error {
	conn, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		return fmt.Errorf("connect to test server: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, statement); err != nil {
		return fmt.Errorf("%s: %w", strings.Fields(statement)[0], err)
	}
	return nil
}
