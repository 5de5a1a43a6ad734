package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

func TestMigrateCreatesAMissingDatabaseAndProjectionsListReadsIt(t *testing.T) {
	// A URL naming a database the server does not have yet (D11).
	dsn := testdb.NewURL(t)
	ctx := context.Background()
	if err := database.DropDatabase(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DATABASE_URL", dsn)
	t.Setenv("FEEDSVC_LOG_LEVEL", "error")
	var out, errOut bytes.Buffer
	if err := execute(ctx, []string{"migrate"}, &out, &errOut); err != nil {
		t.Fatalf("migrate: %v (%s)", err, errOut.String())
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("the database does not exist after migrate: %v", err)
	}
	defer conn.Close(ctx)
	var tables int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename IN ('events', 'feeds', 'api_keys')").Scan(&tables); err != nil || tables != 3 {
		t.Fatalf("migrated tables %d (err %v), want 3", tables, err)
	}
	out.Reset()
	if err := execute(ctx, []string{"projections", "list"}, &out, &errOut); err != nil {
		t.Fatalf("projections list: %v", err)
	}
	if !strings.Contains(out.String(), "feeds ") || !strings.Contains(out.String(), "never run") {
		t.Fatalf("projections list printed:\n%s", out.String())
	}
}
