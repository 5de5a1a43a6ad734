package migrate_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// files makes an owner's migration files from name -> up SQL; each has a
// down file too, as the service's do.
func files(up map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, sql := range up {
		fsys[name+".up.sql"] = &fstest.MapFile{Data: []byte(sql)}
		fsys[name+".down.sql"] = &fstest.MapFile{Data: []byte("SELECT 1")}
	}
	return fsys
}

func open(t *testing.T, dsn string) *database.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, err := database.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// applied lists the migrations bun_migrations records (by timestamp: the
// rest of a file's name is not kept), in the order they were applied, with
// their group.
func applied(t *testing.T, db *database.DB) []string {
	t.Helper()
	rows, err := db.Pool.Query(context.Background(), "SELECT name, group_id FROM bun_migrations ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var name string
		var group int64
		if err := rows.Scan(&name, &group); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s group %d", name, group))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// Files were written in timestamp order across owners and later ones build
// on earlier ones of others, so the owners' list does not reorder them.
func TestFilesOfSeveralOwnersApplyInTimestampOrderWhateverTheListsOrder(t *testing.T) {
	db := open(t, testdb.NewURL(t))
	readModel := migrate.Owner{Name: "read model", Files: files(map[string]string{
		"20260101000003_notes_owner": "ALTER TABLE owners ADD COLUMN notes text",
	})}
	auth := migrate.Owner{Name: "auth", Files: files(map[string]string{
		"20260101000001_owners": "CREATE TABLE owners (id int PRIMARY KEY)",
		"20260101000004_more":   "ALTER TABLE owners ADD COLUMN more text",
	})}
	store := migrate.Owner{Name: "store", Files: files(map[string]string{
		"20260101000002_log": "CREATE TABLE log (id int PRIMARY KEY)",
	})}
	if err := migrate.Run(context.Background(), db.Bun, readModel, store, auth); err != nil {
		t.Fatalf("run: %v", err)
	}
	want := []string{"20260101000001 group 1", "20260101000002 group 1", "20260101000003 group 1", "20260101000004 group 1"}
	if got := applied(t, db); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("applied:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// bun records a migration by its timestamp: two owners shipping one would
// have it applied as one migration, or one of them never.
func TestTwoOwnersShippingOneMigrationAreRefusedBeforeAnythingIsApplied(t *testing.T) {
	tests := []struct {
		name       string
		a, b       map[string]string
		wantInBoth string
	}{
		{"the same file name", map[string]string{"20260101000001_t": "CREATE TABLE t1 ()"}, map[string]string{"20260101000001_t": "CREATE TABLE t2 ()"}, "20260101000001_t"},
		{"one timestamp under two names", map[string]string{"20260101000001_a": "CREATE TABLE t1 ()"}, map[string]string{"20260101000001_b": "CREATE TABLE t2 ()"}, "20260101000001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := open(t, testdb.NewURL(t))
			err := migrate.Run(context.Background(), db.Bun,
				migrate.Owner{Name: "first owner", Files: files(tt.a)},
				migrate.Owner{Name: "second owner", Files: files(tt.b)})
			if err == nil || !strings.Contains(err.Error(), "first owner") || !strings.Contains(err.Error(), "second owner") || !strings.Contains(err.Error(), tt.wantInBoth) {
				t.Fatalf("run: %v, want an error naming %s and both owners", err, tt.wantInBoth)
			}
			var tables int
			if err := db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables); err != nil || tables != 0 {
				t.Fatalf("tables after the refusal: %d (err %v), want none", tables, err)
			}
		})
	}
}

// Owners' functions (River's migrator) run after every file, in the list's
// order, and may use what any owner's files made.
func TestOwnersFunctionsRunAfterEveryFileInTheListsOrder(t *testing.T) {
	db := open(t, testdb.NewURL(t))
	var order []string
	fn := func(name string) func(context.Context, *bun.DB) error {
		return func(ctx context.Context, db *bun.DB) error {
			order = append(order, name)
			_, err := db.ExecContext(ctx, "INSERT INTO made (by) VALUES (?)", name)
			return err
		}
	}
	err := migrate.Run(context.Background(), db.Bun,
		migrate.Owner{Name: "queue", Apply: fn("queue")},
		migrate.Owner{Name: "jobs", Apply: fn("jobs"), Files: files(map[string]string{
			"20260101000009_jobs": "CREATE TABLE jobs ()",
		})},
		migrate.Owner{Name: "last", Files: files(map[string]string{
			"20260101000010_made": "CREATE TABLE made (by text)",
		})})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if strings.Join(order, ",") != "queue,jobs" {
		t.Fatalf("functions ran in the order %v, want queue, jobs", order)
	}
}

// Processes starting together on a new installation (serve and migrate,
// replicas) each migrate: the lock has the first apply every file and the
// others wait and find nothing to do, none failing.
func TestProcessesMigratingANewDatabaseTogetherAllSucceedAndApplyEachFileOnce(t *testing.T) {
	dsn := testdb.NewURL(t)
	owners := []migrate.Owner{
		{Name: "store", Files: files(map[string]string{
			"20260101000001_log":   "CREATE TABLE log (id int PRIMARY KEY)",
			"20260101000003_index": "CREATE INDEX log_id ON log (id)",
		})},
		{Name: "read model", Files: files(map[string]string{
			"20260101000002_items": "CREATE TABLE items (id int PRIMARY KEY); SELECT pg_sleep(0.2)",
		})},
	}
	const processes = 6
	dbs := make([]*database.DB, processes)
	for i := range dbs {
		dbs[i] = open(t, dsn)
	}
	var wg sync.WaitGroup
	errs := make(chan error, processes)
	for _, db := range dbs {
		wg.Go(func() { errs <- migrate.Run(context.Background(), db.Bun, owners...) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a process failed to migrate: %v", err)
		}
	}
	want := []string{"20260101000001 group 1", "20260101000002 group 1", "20260101000003 group 1"}
	if got := applied(t, dbs[0]); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("applied:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTheFingerprintChangesWithAnOwnersNameOrFilesOnly(t *testing.T) {
	base := migrate.Owner{Name: "store", Files: files(map[string]string{"20260101000001_log": "CREATE TABLE log ()"})}
	fp := func(owners ...migrate.Owner) string {
		t.Helper()
		s, err := migrate.Fingerprint(owners...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	same := migrate.Owner{Name: "store", Files: files(map[string]string{"20260101000001_log": "CREATE TABLE log ()"})}
	if fp(base) != fp(same) {
		t.Fatal("the same owner's files gave two fingerprints")
	}
	for name, other := range map[string]migrate.Owner{
		"renamed owner": {Name: "log", Files: base.Files},
		"changed file":  {Name: "store", Files: files(map[string]string{"20260101000001_log": "CREATE TABLE log (id int)"})},
		"another file":  {Name: "store", Files: files(map[string]string{"20260101000002_log": "CREATE TABLE log ()"})},
	} {
		if fp(base) == fp(other) {
			t.Errorf("%s: same fingerprint", name)
		}
	}
	if fp(base) == fp(base, migrate.Owner{Name: "queue", Apply: func(context.Context, *bun.DB) error { return nil }}) {
		t.Error("an owner more: same fingerprint")
	}
}
