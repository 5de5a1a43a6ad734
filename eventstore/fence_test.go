package eventstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/eventstore/storetest"
)

// The fence's proof, checked: while appends of every kind run and a
// writing transaction in another database holds the server's oldest xid,
// readers read the fence together with the xids of the events below it, in
// one statement; once the appends are done, no event may have appeared
// below a fence a reader already read. (Before the fence read its
// holders' xids from pg_stat_get_activity, this caught pg_locks naming a
// committing transaction's locks under two different virtual transaction
// ids.)
func TestTheFenceNeverPassesAnEventThatShowsUpLater(t *testing.T) {
	s, db, _ := newStore(t)
	ctx := context.Background()
	release := holdWrite(t, s, storetest.AnotherDatabase)
	until := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := 0; time.Now().Before(until); i++ {
				var err error
				switch w % 3 {
				case 0:
					_, err = s.AppendToStream(ctx, fmt.Sprintf("shared-%d", w%2), eventstore.Any(), storetest.Event("A"))
				case 1:
					_, err = s.AppendToStreams(ctx,
						eventstore.StreamAppend{Stream: fmt.Sprintf("a-%d", i%3), Expected: eventstore.Any(), Events: []eventstore.EventData{storetest.Event("A")}},
						eventstore.StreamAppend{Stream: fmt.Sprintf("b-%d", i%3), Expected: eventstore.Any(), Events: []eventstore.EventData{storetest.Event("A")}})
				default:
					_, err = s.AppendToStream(ctx, fmt.Sprintf("own-%d-%d", w, i), eventstore.NoStream(), storetest.Event("A"))
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	type read struct {
		fence string
		below []string // the distinct xids of the events below it
	}
	var reads []read
	for time.Now().Before(until) {
		var r read
		if err := db.Pool.QueryRow(ctx, `WITH f AS MATERIALIZED (SELECT `+eventstore.FenceSQL+` AS f)
			SELECT f::text, (SELECT coalesce(array_agg(DISTINCT transaction_id::text), '{}') FROM events WHERE transaction_id < f)
			FROM f`).Scan(&r.fence, &r.below); err != nil {
			t.Fatalf("read the fence: %v", err)
		}
		reads = append(reads, r)
	}
	wg.Wait()
	if err := release(); err != nil {
		t.Fatalf("the transaction in another database: %v", err)
	}
	if len(reads) < 50 {
		t.Fatalf("only %d reads: the test proves little", len(reads))
	}
	for _, r := range reads {
		var now []string
		if err := db.Pool.QueryRow(ctx, `SELECT coalesce(array_agg(DISTINCT transaction_id::text), '{}') FROM events WHERE transaction_id < $1::text::xid8`,
			r.fence).Scan(&now); err != nil {
			t.Fatal(err)
		}
		for _, x := range now {
			if !slices.Contains(r.below, x) {
				t.Fatalf("a reader read below fence %s without transaction %s's events, which are there now: it would skip them", r.fence, x)
			}
		}
	}
	t.Logf("%d reads of the fence, none passed an event that showed up later", len(reads))
}

// The trigger takes the appenders' lock before the transaction has an
// xid; a transaction that wrote something else first cannot append,
// unless it took the lock first.
func TestAnAppendAfterAnotherWriteIsRefusedUnlessTheTransactionBeganAsAnAppend(t *testing.T) {
	_, db, _ := newStore(t)
	ctx := context.Background()
	insert := `INSERT INTO events (stream_id, stream_revision, event_id, event_type, data) VALUES ($1, 0, $2, 'E', '{}')`
	tests := []struct {
		name    string
		first   string
		refused bool
	}{
		{"an append first is taken", "", false},
		{"an append after another write is refused", `INSERT INTO projection_checkpoints (name) VALUES ('x')`, true},
		{"an append after eventstore_begin_append and another write is taken",
			`SELECT eventstore_begin_append(); INSERT INTO projection_checkpoints (name) VALUES ('y')`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx, err := db.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx) //nolint:errcheck // nothing kept
			if tt.first != "" {
				if _, err := tx.Exec(ctx, tt.first); err != nil {
					t.Fatalf("first write: %v", err)
				}
			}
			_, err = tx.Exec(ctx, insert, uuid.NewString(), uuid.New())
			var pgErr *pgconn.PgError
			refused := errors.As(err, &pgErr) && pgErr.Code == "55000"
			if err != nil && !refused {
				t.Fatalf("append: %v", err)
			}
			if refused != tt.refused {
				t.Fatalf("refused %v (%v), want %v", refused, err, tt.refused)
			}
		})
	}
}
