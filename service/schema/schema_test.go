package schema_test

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	bunmigrate "github.com/uptrace/bun/migrate"

	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/service/schema"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// singleFolder is every file readmodel/migrations held when it held the
// whole schema. Installations made then have these recorded in
// bun_migrations; an upgrade must find them, so no file of this list is
// ever renamed or dropped, whichever owner ships it.
var singleFolder = []string{
	"20261122000001_events.down.sql",
	"20261122000001_events.up.sql",
	"20261122000002_auth.down.sql",
	"20261122000002_auth.up.sql",
	"20261122000010_feeds_sources.down.sql",
	"20261122000010_feeds_sources.up.sql",
	"20261122000020_items.down.sql",
	"20261122000020_items.up.sql",
	"20261122000030_crawl.down.sql",
	"20261122000030_crawl.up.sql",
	"20261122000060_ingestion_kinds.tx.down.sql",
	"20261122000060_ingestion_kinds.tx.up.sql",
	"20261122000061_crawl_connector_state.down.sql",
	"20261122000061_crawl_connector_state.up.sql",
	"20261123000100_source_views.down.sql",
	"20261123000100_source_views.up.sql",
	"20261123000200_feeds_of_every_kind.tx.down.sql",
	"20261123000200_feeds_of_every_kind.tx.up.sql",
	"20261123000300_ingest_events.down.sql",
	"20261123000300_ingest_events.up.sql",
	"20261124000400_event_items.down.sql",
	"20261124000400_event_items.up.sql",
	"20261124000410_feedback_of_every_kind.tx.down.sql",
	"20261124000410_feedback_of_every_kind.tx.up.sql",
	"20261124000800_webhooks.down.sql",
	"20261124000800_webhooks.up.sql",
	"20261124000900_ingest_event_holders.down.sql",
	"20261124000900_ingest_event_holders.up.sql",
	"20261125010000_platform_posts.down.sql",
	"20261125010000_platform_posts.up.sql",
	"20261125020000_rate_limits.down.sql",
	"20261125020000_rate_limits.up.sql",
	"20261125020001_idempotency_keys.down.sql",
	"20261125020001_idempotency_keys.up.sql",
	"20261125030000_item_changes.tx.down.sql",
	"20261125030000_item_changes.tx.up.sql",
	"20261125040000_feedback_insights.down.sql",
	"20261125040000_feedback_insights.up.sql",
	"20261125040100_negative_sources.down.sql",
	"20261125040100_negative_sources.up.sql",
	"20261125050000_projection_versions.down.sql",
	"20261125050000_projection_versions.up.sql",
	"20261126026100_event_store_identity.down.sql",
	"20261126026100_event_store_identity.up.sql",
	"20261126100000_facts_first_reread.down.sql",
	"20261126100000_facts_first_reread.up.sql",
}

// The owners ship the single folder's files, and any other file is newer
// than all of them: an installation that applied the folder would never
// run a file slipped in among them. (When this was written the owners
// shipped exactly the folder.)
func TestTheOwnersShipEveryFileOfTheSingleFolderAndOnlyNewerOnes(t *testing.T) {
	got, err := migrate.Files(schema.Owners()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range singleFolder {
		if !slices.Contains(got, name) {
			t.Errorf("no owner ships %s", name)
		}
	}
	last, _, _ := strings.Cut(slices.Max(singleFolder), "_")
	for _, name := range got {
		if stamp, _, _ := strings.Cut(name, "_"); !slices.Contains(singleFolder, name) && (len(stamp) != len(last) || stamp <= last) {
			t.Errorf("%s is not of the single folder yet no newer than its last file (%s)", name, last)
		}
	}
	if _, err := migrate.Collect(schema.Owners()...); err != nil {
		t.Fatalf("collect: %v", err)
	}
}

// A database migrated when every file sat in readmodel/migrations, by that
// release's migrator, is up to date under the owners: none of the folder's
// files is applied again, and only files newer than the folder are (in a
// group of their own, against the real tables the folder's files made).
func TestADatabaseMigratedFromTheSingleFolderIsUpToDate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := database.Open(ctx, testdb.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old := fstest.MapFS{}
	for _, o := range schema.Owners() {
		if o.Files == nil {
			continue
		}
		for _, name := range singleFolder {
			if b, err := fs.ReadFile(o.Files, name); err == nil {
				old[name] = &fstest.MapFile{Data: b}
			}
		}
	}
	if len(old) != len(singleFolder) {
		t.Fatalf("the owners ship %d of the folder's %d files", len(old), len(singleFolder))
	}
	ms := bunmigrate.NewMigrations()
	if err := ms.Discover(old); err != nil {
		t.Fatal(err)
	}
	m := bunmigrate.NewMigrator(db.Bun, ms)
	if err := m.Init(ctx); err != nil {
		t.Fatal(err)
	}
	group, err := m.Migrate(ctx)
	if err != nil || len(group.Migrations) != len(singleFolder)/2 {
		t.Fatalf("the old migrator applied %d migrations (err %v), want %d", len(group.Migrations), err, len(singleFolder)/2)
	}

	if err := schema.Migrate(ctx, db.Bun); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	all, err := migrate.Files(schema.Owners()...)
	if err != nil {
		t.Fatal(err)
	}
	newer := (len(all) - len(singleFolder)) / 2
	var rows, names, inFirst int
	err = db.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT name),
		count(*) FILTER (WHERE group_id = (SELECT min(group_id) FROM bun_migrations)) FROM bun_migrations`).Scan(&rows, &names, &inFirst)
	if err != nil {
		t.Fatal(err)
	}
	if rows != names {
		t.Fatalf("bun_migrations holds %d rows for %d migrations: files were applied twice", rows, names)
	}
	if inFirst != len(singleFolder)/2 || rows != len(singleFolder)/2+newer {
		t.Fatalf("bun_migrations holds %d rows, %d in the old group; want the old %d in it and the %d newer", rows, inFirst, len(singleFolder)/2, newer)
	}
}

// A read model's tables come with its folder: every table a registered
// projector owns exists in a database the schema made, so a new read model
// that forgets its migrations (or its Migrations method) fails here rather
// than on the first event it projects.
func TestEveryTableAProjectorOwnsIsMadeByTheSchema(t *testing.T) {
	db, _ := testdb.New(t)
	for _, p := range projectors.All() {
		for _, table := range p.Tables() {
			var exists bool
			if err := db.Bun.NewRaw("SELECT to_regclass(?) IS NOT NULL", table).Scan(context.Background(), &exists); err != nil {
				t.Fatalf("look up %s: %v", table, err)
			}
			if !exists {
				t.Errorf("projector %s owns table %s, but the schema does not make it", p.Name(), table)
			}
		}
	}
}
