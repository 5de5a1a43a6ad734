package testdb_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// An exhausted private cluster refuses the next connection as a server at
// max_connections does (53300, which the service answers 503), ends the
// sessions it did not open, and takes connections again once released.
func TestAnExhaustedClusterRefusesConnectionsUntilReleased(t *testing.T) {
	c := testdb.NewCluster(t, testdb.ClusterOptions{MaxConnections: 5})
	ctx := context.Background()
	before, err := pgx.Connect(ctx, c.Database("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close(ctx)
	release := c.Exhaust(t)
	if err := before.Ping(ctx); err == nil {
		t.Fatal("a session opened before Exhaust still answers")
	}
	_, err = pgx.Connect(ctx, c.URL)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "53300" || !database.Unavailable(err) {
		t.Fatalf("connecting to the exhausted cluster: %v; want too many clients (53300)", err)
	}
	release()
	conn, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatalf("connecting after release: %v", err)
	}
	conn.Close(ctx)
}
