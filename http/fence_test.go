package http_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// Issue 38: a long writing transaction in another database of the same
// server (or in this one, writing no events) used to hold the log's fence,
// and every write answered 503 "saved but not visible yet" after the
// consistency timeout. Now writes answer as usual while it stays open.
func TestWritesAnswerAsUsualWhileALongTransactionWritesElsewhereOnTheServer(t *testing.T) {
	h := servicetest.Start(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		database string // "" is the service's own
		write    string
	}{
		{"in another database", "postgres", `CREATE TEMPORARY TABLE held (x int) ON COMMIT DROP; INSERT INTO held VALUES (1)`},
		{"in the service's database, writing no events", "", `INSERT INTO projection_checkpoints (name) VALUES ('held by a test')`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := pgx.ParseConfig(h.DSN)
			if err != nil {
				t.Fatal(err)
			}
			if tt.database != "" {
				cfg.Database = tt.database
			}
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx) //nolint:errcheck // closing
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx) //nolint:errcheck // ends the hold
			if _, err := tx.Exec(ctx, tt.write, pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Fatalf("the long transaction's write: %v", err)
			}
			for i := range 3 {
				start := time.Now()
				feed := h.Do("POST", "/feeds/news", map[string]string{"name": "held", "description": "d"}).MustStatus(t, 201).Data()
				h.Do("PATCH", "/feeds/news/"+feed["id"].(string), map[string]string{"name": "renamed"}).MustStatus(t, 200)
				got := h.Do("GET", "/feeds/news/"+feed["id"].(string), nil).MustStatus(t, 200).Data()
				if got["name"] != "renamed" {
					t.Fatalf("the feed reads %v after its rename was answered", got["name"])
				}
				if took := time.Since(start); took > 8*time.Second {
					t.Fatalf("write %d: create, rename and read took %s while the transaction was open", i, took)
				}
			}
			var open bool
			if err := tx.QueryRow(ctx, `SELECT pg_current_xact_id_if_assigned() IS NOT NULL`).Scan(&open); err != nil || !open {
				t.Fatalf("the long transaction did not stay open (%v, %v)", open, err)
			}
		})
	}
}
