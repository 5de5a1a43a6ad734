package lease_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/internal/lease"
	"github.com/feedsvc/feedsvc/testkit/testdb"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

var table = lease.Table{Name: "test_leases", Key: "id", Claimable: "t.done_at IS NULL"}

func newDB(t *testing.T) *bun.DB {
	t.Helper()
	db, _ := testdb.New(t)
	if _, err := db.Bun.ExecContext(context.Background(), `CREATE TABLE test_leases (
		id uuid PRIMARY KEY, n integer NOT NULL DEFAULT 0, done_at timestamptz, leased_until timestamptz, lease_owner text)`); err != nil {
		t.Fatal(err)
	}
	return db.Bun
}

func leases(db *bun.DB, owner string) *lease.Leases {
	return lease.New(db, table, owner, time.Minute, slog.New(slog.DiscardHandler))
}

// expire makes the row's lease run out, as if its holder had died.
func expire(t *testing.T, db *bun.DB, id uuid.UUID) {
	t.Helper()
	if _, err := db.NewRaw(`UPDATE test_leases SET leased_until = now() - interval '1 second' WHERE id = ?`, id).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// The cases share one database, each on rows of its own.
func TestLeases(t *testing.T) {
	db := newDB(t)
	t.Run("of processes claiming one row at once exactly one gets it", func(t *testing.T) { claimRace(t, db) })
	t.Run("a lease is held until released or expired and only its holder changes the row", func(t *testing.T) { holding(t, db) })
	t.Run("work is stopped when its lease is lost", func(t *testing.T) { losing(t, db) })
	t.Run("a kept lease outlives its duration and lapses once the keeping stops", func(t *testing.T) { keeping(t, db) })
}

func claimRace(t *testing.T, db *bun.DB) {
	id := uuid.New()
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := leases(db, fmt.Sprintf("p%d", i)).Claim(context.Background(), id, "")
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d processes got the lease, want 1", wins.Load())
	}
}

func holding(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	id := uuid.New()
	a, b := leases(db, "a"), leases(db, "b")
	var n int
	if ok, err := a.Claim(ctx, id, "t.n", &n); !ok || err != nil {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	t.Run("a live lease cannot be claimed by another", func(t *testing.T) {
		if ok, err := b.Claim(ctx, id, ""); ok || err != nil {
			t.Fatalf("claimed a held row: %v %v", ok, err)
		}
	})
	t.Run("an expired lease is claimed by another, and its old holder can no longer change the row", func(t *testing.T) {
		expire(t, db, id)
		if ok, err := b.Claim(ctx, id, ""); !ok || err != nil {
			t.Fatalf("claim after expiry: %v %v", ok, err)
		}
		if held, err := a.Renew(ctx, id); held || err != nil {
			t.Fatalf("the old holder renewed: %v %v", held, err)
		}
		if err := a.Release(ctx, id, "n = n + 1"); err != nil {
			t.Fatal(err)
		}
		if ok, err := b.Update(ctx, id, "n = n + 10"); !ok || err != nil {
			t.Fatalf("the holder's update: %v %v", ok, err)
		}
	})
	t.Run("a released row with its outcome recorded is no longer claimable", func(t *testing.T) {
		if err := b.Release(ctx, id, "done_at = now(), n = n + ?", 100); err != nil {
			t.Fatal(err)
		}
		if ok, err := a.Claim(ctx, id, "t.n", &n); ok || err != nil {
			t.Fatalf("claimed a finished row: %v %v", ok, err)
		}
		if err := db.NewRaw(`SELECT n FROM test_leases WHERE id = ?`, id).Scan(ctx, &n); err != nil || n != 110 {
			t.Fatalf("n = %d (%v), want 110: only the holder's changes", n, err)
		}
	})
}

func losing(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	id := uuid.New()
	a := lease.New(db, table, "a", 150*time.Millisecond, slog.New(slog.DiscardHandler))
	if ok, err := a.Claim(ctx, id, ""); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	lost := make(chan struct{})
	stop := a.Keep(ctx, id, func() { close(lost) })
	defer stop()
	// Another process takes the row over.
	if _, err := db.NewRaw(`UPDATE test_leases SET lease_owner = 'b' WHERE id = ?`, id).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lost:
	case <-time.After(5 * time.Second):
		t.Fatal("the work was not told its lease was lost")
	}
}

func keeping(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	id := uuid.New()
	const d = 300 * time.Millisecond
	a := lease.New(db, table, "a", d, slog.New(slog.DiscardHandler))
	b := lease.New(db, table, "b", d, slog.New(slog.DiscardHandler))
	if ok, err := a.Claim(ctx, id, ""); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	stop := a.Keep(ctx, id, func() { t.Error("a kept lease was lost") })
	// Four durations later the renewals have held it.
	time.Sleep(4 * d)
	if ok, err := b.Claim(ctx, id, ""); ok || err != nil {
		t.Fatalf("another process claimed a kept lease: %v %v", ok, err)
	}
	stop()
	stop() // stopping twice is harmless
	// Once stopped, nothing renews it: it lapses within a duration.
	wait.Until(t, 10*d, "the lease to lapse once its keeping stopped", func() bool {
		ok, err := b.Claim(ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	})
}
