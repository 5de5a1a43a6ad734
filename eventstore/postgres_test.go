package eventstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/eventstore/migrations"
	"github.com/feedsvc/feedsvc/eventstore/storetest"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

func newStore(t testing.TB) (*eventstore.Postgres, *database.DB, string) {
	t.Helper()
	// The store runs on the tables it ships, and no other owner's.
	db, dsn := testdb.NewFor(t, migrations.Owner)
	s := eventstore.NewPostgres(db.Pool)
	s.PollInterval = 20 * time.Millisecond
	return s, db, dsn
}

func TestPostgresStoreMeetsTheContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) eventstore.Store {
		s, _, _ := newStore(t)
		return s
	}, storetest.Features{
		Reopen: func(t *testing.T, s eventstore.Store) eventstore.Store {
			return eventstore.NewPostgres(eventstore.PoolOf(s.(*eventstore.Postgres)))
		},
		HoldWrite: holdWrite,
	})
}

// holdWrite opens a writing transaction on a connection of its own: in the
// server's postgres database (a temporary table's row), or in the store's
// (a row of projection_checkpoints, a table that is not the log).
func holdWrite(t *testing.T, s eventstore.Store, site storetest.HoldSite) func() error {
	t.Helper()
	ctx := context.Background()
	cfg := eventstore.PoolOf(s.(*eventstore.Postgres)).Config().ConnConfig.Copy()
	write := `INSERT INTO projection_checkpoints (name) VALUES ('held by ' || gen_random_uuid())`
	if site == storetest.AnotherDatabase {
		cfg.Database = "postgres"
		write = `CREATE TEMPORARY TABLE held (x int) ON COMMIT DROP; INSERT INTO held VALUES (1)`
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect to %s: %v", site, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) }) //nolint:errcheck // closing
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatalf("begin in %s: %v", site, err)
	}
	if _, err := tx.Exec(ctx, write, pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("write in %s: %v", site, err)
	}
	var xid string
	if err := tx.QueryRow(ctx, `SELECT pg_current_xact_id_if_assigned()::text`).Scan(&xid); err != nil {
		t.Fatalf("the held transaction's id: %v", err)
	}
	t.Logf("holding transaction %s open in %s", xid, site)
	return func() error {
		defer tx.Rollback(context.Background()) //nolint:errcheck // ends it
		var still *string
		if err := tx.QueryRow(ctx, `SELECT pg_current_xact_id_if_assigned()::text`).Scan(&still); err != nil {
			return fmt.Errorf("transaction %s: %w", xid, err)
		}
		if still == nil || *still != xid {
			return fmt.Errorf("transaction %s is now %v", xid, still)
		}
		return nil
	}
}

// This is the reason for the xid8 fence: an append that takes its position
// first but commits last must not be skipped by a reader.
func TestReadAllDoesNotPassATransactionThatCommitsOutOfOrder(t *testing.T) {
	s, db, _ := newStore(t)
	ctx := context.Background()

	early, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer early.Rollback(ctx) //nolint:errcheck // no-op after commit
	earlyID := uuid.New()
	if _, err := early.Exec(ctx,
		`INSERT INTO events (stream_id, stream_revision, event_id, event_type, data) VALUES ('early', 0, $1, 'Early', '{}')`,
		earlyID); err != nil {
		t.Fatalf("insert in the open transaction: %v", err)
	}

	late := storetest.Event("Late")
	res := storetest.MustAppend(t, s, "late", eventstore.NoStream(), late)

	got, err := s.ReadAll(ctx, eventstore.Start, 0)
	if err != nil {
		t.Fatalf("read all: %v", err)
	}
	if len(got) != 0 {
		t.Fatalf("read all returned %v while an older transaction is open: a reader would skip its event", storetest.IDs(got))
	}
	// A reader of other types must not be moved past it either.
	typed, reached, err := s.ReadAllOfTypes(ctx, eventstore.Start, 10, []string{"Early", "Other"})
	if err != nil {
		t.Fatalf("read all of types: %v", err)
	}
	if len(typed) != 0 || reached != eventstore.Start {
		t.Fatalf("read all of types returned %v and reached %s while an older transaction is open, want nothing and %s",
			storetest.IDs(typed), reached, eventstore.Start)
	}

	if err := early.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	got = storetest.ReadAllVisible(t, s, eventstore.Start, 2)
	if !slices.Equal(storetest.IDs(got), []uuid.UUID{earlyID, late.ID}) {
		t.Fatalf("log = %v, want the early transaction's event first: %v", storetest.IDs(got), []uuid.UUID{earlyID, late.ID})
	}
	if got[1].Position != res.Position || !got[0].Position.Less(got[1].Position) {
		t.Errorf("positions %s, %s; append reported %s", got[0].Position, got[1].Position, res.Position)
	}
}

func TestReadAllUsesThePrimaryKeyIndex(t *testing.T) {
	_, db, _ := newStore(t)
	ctx := context.Background()
	// Enough rows that a sequential scan would look cheaper if the index
	// could not serve the row comparison.
	if _, err := db.Pool.Exec(ctx, `
		INSERT INTO events (stream_id, stream_revision, event_id, event_type, data)
		SELECT 's-' || (g % 100), g / 100, gen_random_uuid(), 'Bulk', '{}'
		FROM generate_series(0, 19999) AS g`); err != nil {
		t.Fatalf("fill: %v", err)
	}
	if _, err := db.Pool.Exec(ctx, `ANALYZE events`); err != nil {
		t.Fatalf("analyze: %v", err)
	}
	rows, err := db.Pool.Query(ctx, "EXPLAIN "+eventstore.ReadAllSQL, "0", int64(0), int64(1000), "20000")
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "Index Scan using events_pkey") && !strings.Contains(text, "Sort") {
		return
	}
	t.Errorf("ReadAll does not use the primary key index:\n%s", strings.Join(plan, "\n"))
}

func TestReadAllOfTypesUsesThePrimaryKeyIndexInItsGenericPlan(t *testing.T) {
	_, db, _ := newStore(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `
		INSERT INTO events (stream_id, stream_revision, event_id, event_type, data)
		SELECT 's-' || (g % 100), g / 100, gen_random_uuid(), CASE WHEN g % 100 = 0 THEN 'Rare' ELSE 'Bulk' END, '{}'
		FROM generate_series(0, 19999) AS g`); err != nil {
		t.Fatalf("fill: %v", err)
	}
	if _, err := db.Pool.Exec(ctx, `ANALYZE events`); err != nil {
		t.Fatalf("analyze: %v", err)
	}
	// A subscriber runs the statement prepared: after five runs Postgres
	// may keep a plan made without the parameters' values.
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "RESET plan_cache_mode") //nolint:errcheck // the connection goes back to a test pool
	if _, err := conn.Exec(ctx, "PREPARE typed(text, bigint, bigint, text[], text) AS "+eventstore.ReadAllOfTypesSQL); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "DEALLOCATE typed") //nolint:errcheck // as above
	rows, err := conn.Query(ctx, "EXPLAIN EXECUTE typed('0', 0, 1000, '{Rare}', '20000')", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	text := strings.Join(plan, "\n")
	// The log may not be scanned.
	if strings.Count(text, "using events_pkey") == 2 && !strings.Contains(text, "Sort") && !strings.Contains(text, "Seq Scan on events") {
		return
	}
	t.Errorf("ReadAllOfTypes does not walk the primary key index:\n%s", text)
}
