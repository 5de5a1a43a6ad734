package projections_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// Inserting without ON CONFLICT, and falling back to it on a unique
// violation, must give exactly the rows the ON CONFLICT statement gives,
// in a batch's transaction (which the failed attempt must not spoil) and
// outside one.
func TestAnInsertUnlessConflictGivesTheRowsOfTheSkippingInsert(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	if _, err := db.Bun.ExecContext(ctx, "CREATE TABLE test_unless (id int PRIMARY KEY, v text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	const plain = `INSERT INTO test_unless (id, v) SELECT id, v FROM unnest($1::int[], $2::text[]) WITH ORDINALITY AS r(id, v, ord) ORDER BY ord`
	const skipping = plain + ` ON CONFLICT DO NOTHING`

	tx, err := db.Bun.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // after commit a no-op
	for _, batch := range []struct {
		ids []int32
		vs  []string
	}{
		{[]int32{1, 2}, []string{"a", "b"}},           // all new
		{[]int32{2, 3}, []string{"late", "c"}},        // 2 is there: skipped, 3 added
		{[]int32{4, 4, 5}, []string{"d", "dup", "e"}}, // a duplicate within the rows: the first wins
	} {
		if err := projections.ExecArraysUnlessConflict(ctx, tx, plain, skipping, batch.ids, batch.vs); err != nil {
			t.Fatalf("batch %v: %v", batch.ids, err)
		}
	}
	// The transaction survived the failed attempts.
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit after conflicts: %v", err)
	}
	// Outside a transaction: the skipping statement.
	if err := projections.ExecArraysUnlessConflict(ctx, db.Bun, plain, skipping, []int32{5, 6}, []string{"again", "f"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := db.Bun.NewRaw("SELECT id || '=' || v FROM test_unless ORDER BY id").Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	want := "[1=a 2=b 3=c 4=d 5=e 6=f]"
	if g := fmt.Sprint(got); g != want {
		t.Fatalf("rows %s, want %s", g, want)
	}
}
