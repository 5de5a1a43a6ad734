// Package testdb gives each test its own freshly migrated Postgres database,
// dropped when the test ends, so test runs never collide.
package testdb

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/readmodel/migrations"
)

// ServerURL is the Postgres server tests use; TEST_DATABASE_URL overrides it.
func ServerURL() string {
	if v := os.Getenv("TEST_DATABASE_URL"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// New creates a migrated database for t and returns it open.
func New(t testing.TB) (*database.DB, string) {
	t.Helper()
	dsn := NewURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, err := migrations.Open(ctx, dsn)
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
	name := "feedsvc_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	dsn, err := database.WithDatabase(ServerURL(), name)
	if err != nil {
		t.Fatalf("test database url: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := database.EnsureDatabase(ctx, dsn); err != nil {
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
