package attachments_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/ingest/attachments"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// migrationFile runs one of the service's migration files in a
// transaction, as bun runs a .tx.up.sql file.
func migrationFile(t *testing.T, db *database.DB, name string) {
	t.Helper()
	body, err := fs.ReadFile(attachments.Projector{}.Migrations().Files, name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tx, err := db.Bun.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after commit
	for _, stmt := range strings.Split(string(body), "--bun:split") {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// The migration that reshaped ingest_attachments found it full and its
// projector's checkpoint at the head of the log: it must leave a read model
// that the projector rebuilds from the events, equal to a fresh one.
func TestTheMigrationThatReshapedTheIngestionReadModelHasItRebuiltFromTheEvents(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	store, cmds := projectortest.Commands(db)
	projectortest.FeedWorkload(t, cmds, uuid.New(), 20)
	p := attachments.Projector{}
	projectortest.RunUntilCaughtUp(t, store, db, 7, p)
	fresh := projectortest.Dump(t, db.Bun, p)

	// Back to the old shape, full and caught up, as the migration found it.
	var commit, prepare int64
	if err := db.Bun.NewRaw(`SELECT commit_position, prepare_position FROM projection_checkpoints WHERE name = 'ingestion'`).
		Scan(ctx, &commit, &prepare); err != nil || commit == 0 {
		t.Fatalf("checkpoint %d (%v): the projector projected nothing", commit, err)
	}
	for _, q := range []string{`CREATE TABLE old_attachments AS SELECT * FROM ingest_attachments`, `CREATE TABLE old_feeds AS SELECT * FROM ingest_feeds`} {
		if _, err := db.Bun.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// Later migrations undone first, and done again after, as a database
	// that had the old shape met them.
	migrationFile(t, db, "20261128100300_feed_rules.down.sql")
	migrationFile(t, db, "20261122000060_ingestion_kinds.tx.down.sql")
	for _, q := range []string{
		`INSERT INTO ingest_attachments (attachment_id, feed_id, organization_id, source_id, source_type, details,
			source_enabled, feed_enabled, active_since, attached_at)
		 SELECT attachment_id, feed_id, organization_id, source_id, source_type, details, source_enabled, feed_enabled,
			greatest(attached_at - interval '14 days', source_enabled_at, feed_enabled_at), attached_at FROM old_attachments`,
		`INSERT INTO ingest_feeds (feed_id, enabled) SELECT feed_id, enabled FROM old_feeds`,
	} {
		if _, err := db.Bun.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Bun.NewRaw(`UPDATE projection_checkpoints SET commit_position = ?, prepare_position = ? WHERE name = 'ingestion'`,
		commit, prepare).Exec(ctx); err != nil {
		t.Fatal(err)
	}

	migrationFile(t, db, "20261122000060_ingestion_kinds.tx.up.sql")
	migrationFile(t, db, "20261128100300_feed_rules.up.sql")
	if got := projectortest.Dump(t, db.Bun, p); !strings.Contains(got, "ingest_attachments 0 rows") {
		t.Fatalf("the migration kept rows of the old shape:\n%s", got)
	}
	projectortest.RunUntilCaughtUp(t, store, db, 7, p)
	if got := projectortest.Dump(t, db.Bun, p); got != fresh {
		t.Fatalf("after the migration the read model is not rebuilt:\nfresh:\n%s\nmigrated:\n%s", fresh, got)
	}
}
