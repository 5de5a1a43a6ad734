package idempotency_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/internal/idempotency"
)

func TestAnIdempotentRequestMintsTheSameIDsOnEveryRunAndOthersDoNot(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 4, 5, 123_000_000, time.UTC)
	scope := idempotency.NewScope([32]byte{1}, at)
	other := idempotency.NewScope([32]byte{2}, at)
	var none idempotency.Scope
	feed := scope.NewID("feed")
	cases := []struct {
		name string
		a, b uuid.UUID
		same bool
	}{
		{"one purpose twice is one id", feed, scope.NewID("feed"), true},
		{"two purposes are two ids", feed, scope.NewID("attachment"), false},
		{"another request's seed gives another id", feed, other.NewID("feed"), false},
		{"outside a request ids are fresh", none.NewID("feed"), none.NewID("feed"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if (c.a == c.b) != c.same {
				t.Fatalf("%s and %s", c.a, c.b)
			}
		})
	}
	t.Run("ids are UUIDv7 of the request's first moment", func(t *testing.T) {
		if feed.Version() != 7 || feed.Variant() != uuid.RFC4122 {
			t.Fatalf("%s is version %d variant %v", feed, feed.Version(), feed.Variant())
		}
		sec, nsec := feed.Time().UnixTime()
		if got := time.Unix(sec, nsec).UTC(); !got.Equal(at) {
			t.Fatalf("id time %s, want %s", got, at)
		}
	})
	t.Run("event ids exist only in a request and differ per stream and index", func(t *testing.T) {
		if _, ok := none.EventID("s", 0); ok {
			t.Fatal("an event id outside a request")
		}
		a, _ := scope.EventID("newsfeed-1", 0)
		b, _ := scope.EventID("newsfeed-1", 1)
		c, _ := scope.EventID("newsfeed-2", 0)
		if a == b || a == c || b == c {
			t.Fatalf("%s %s %s", a, b, c)
		}
	})
}

func TestARequestFindsTheEventsItAppendedToAStream(t *testing.T) {
	scope := idempotency.NewScope([32]byte{7}, time.Now())
	mine := func(i int) uuid.UUID { id, _ := scope.EventID("s", i); return id }
	x, y := uuid.New(), uuid.New()
	cases := []struct {
		name  string
		ids   []uuid.UUID
		at, n int
	}{
		{"an empty stream holds none", nil, 0, 0},
		{"others' events only", []uuid.UUID{x, y}, 0, 0},
		{"one event after others", []uuid.UUID{x, mine(0), y}, 1, 1},
		{"an append of three, others after", []uuid.UUID{x, mine(0), mine(1), mine(2), y}, 1, 3},
		{"the second of an append alone is not the request's start", []uuid.UUID{x, mine(1)}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if at, n := scope.Stored("s", c.ids); at != c.at || n != c.n {
				t.Fatalf("Stored = %d, %d; want %d, %d", at, n, c.at, c.n)
			}
		})
	}
	t.Run("outside a request none is found", func(t *testing.T) {
		if at, n := (idempotency.Scope{}).Stored("s", []uuid.UUID{mine(0)}); at != 0 || n != 0 {
			t.Fatalf("Stored = %d, %d; want none", at, n)
		}
	})
}
