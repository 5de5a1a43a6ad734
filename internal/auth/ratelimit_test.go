package auth

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/service/schema"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// twoProcesses opens the same fresh database twice, as two API processes
// would, and returns a Limiter over each.
func twoProcesses(t testing.TB, def Rate) (*Limiter, *Limiter) {
	t.Helper()
	db, dsn := testdb.New(t)
	other, err := schema.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	return NewLimiter(db.Pool, def, FailClosedForOwnRates), NewLimiter(other.Pool, def, FailClosedForOwnRates)
}

// freshWindow waits, when the current window of rate is about to end, for
// the next one, so a test's requests all fall in one window.
func freshWindow(t *testing.T, l *Limiter, rate Rate) {
	t.Helper()
	u, err := l.Take(context.Background(), uuid.New(), rate)
	if err != nil {
		t.Fatal(err)
	}
	if u.Reset < 10 {
		time.Sleep(time.Duration(u.Reset+1) * time.Second)
	}
}

func TestEveryProcessCountsAKeysRequestsInOneSharedWindow(t *testing.T) {
	a, b := twoProcesses(t, Unlimited)
	rate := Rate{Limit: 5, Window: 24 * time.Hour}
	freshWindow(t, a, rate)
	ctx := context.Background()
	key, other := uuid.New(), uuid.New()
	for i := 1; i <= 7; i++ {
		l := a
		if i%2 == 0 {
			l = b
		}
		u, err := l.Take(ctx, key, rate)
		if err != nil {
			t.Fatal(err)
		}
		if u.Used != i || u.Allowed() != (i <= 5) || u.Remaining() != max(0, 5-i) {
			t.Fatalf("request %d: used %d allowed %v remaining %d", i, u.Used, u.Allowed(), u.Remaining())
		}
		if u.Reset < 1 || u.Reset > 86400 {
			t.Fatalf("reset %d s is outside the day window", u.Reset)
		}
	}
	t.Run("another key has its own count", func(t *testing.T) {
		u, err := b.Take(ctx, other, rate)
		if err != nil || u.Used != 1 || !u.Allowed() {
			t.Fatalf("other key: %+v, %v", u, err)
		}
	})
}

func TestConcurrentRequestsOfOneKeyAreEachCountedOnce(t *testing.T) {
	a, b := twoProcesses(t, Unlimited)
	rate := Rate{Limit: 1000, Window: 24 * time.Hour}
	freshWindow(t, a, rate)
	key := uuid.New()
	const n = 60
	var mu sync.Mutex
	var used []int
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := a
			if i%2 == 1 {
				l = b
			}
			u, err := l.Take(context.Background(), key, rate)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			used = append(used, u.Used)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(used)
	for i, u := range used {
		if u != i+1 {
			t.Fatalf("counts %v: want each of 1..%d once", used, n)
		}
	}
}

func TestAWindowStartsAfreshWhenItEndsAndEndedWindowsAreForgotten(t *testing.T) {
	a, _ := twoProcesses(t, Unlimited)
	ctx := context.Background()
	perSecond := Rate{Limit: 1, Window: time.Second}
	daily := Rate{Limit: 1, Window: 24 * time.Hour}
	key, kept := uuid.New(), uuid.New()
	if _, err := a.Take(ctx, kept, daily); err != nil {
		t.Fatal(err)
	}
	first, err := a.Take(ctx, key, perSecond)
	if err != nil || first.Reset != 1 {
		t.Fatalf("first: %+v, %v", first, err)
	}
	time.Sleep(1100 * time.Millisecond) // the one-second window ends: a clock, not a condition
	next, err := a.Take(ctx, key, perSecond)
	if err != nil || next.Used != 1 || !next.Allowed() {
		t.Fatalf("a new window counts from 1: %+v, %v", next, err)
	}
	time.Sleep(1100 * time.Millisecond) // and so does the next
	n, err := a.Forget(ctx)
	if err != nil || n != 2 {
		t.Fatalf("Forget removed %d windows, %v; want the two ended ones", n, err)
	}
	u, err := a.Take(ctx, kept, daily)
	if err != nil || u.Used != 2 {
		t.Fatalf("the daily window was forgotten: %+v, %v", u, err)
	}
}

func TestAKeyCarriesItsOwnRateOrTheDefault(t *testing.T) {
	s, _, _ := newTestStore(t)
	ctx := context.Background()
	def := Rate{Limit: 100, Window: time.Minute}
	l := NewLimiter(nil, def, FailClosedForOwnRates)
	own := Rate{Limit: 600, Window: time.Minute}
	cases := []struct {
		name string
		opts []KeyOption
		want Rate
	}{
		{"a key created without a rate has the default", nil, def},
		{"a key created with 600/min has it", []KeyOption{WithRate(own)}, own},
		{"a key created unlimited is never limited", []KeyOption{WithRate(Unlimited)}, Unlimited},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plain, key, err := s.CreateKey(ctx, "acme", AllScopes(), nil, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Authenticate(ctx, plain)
			if err != nil || l.RateFor(p) != c.want {
				t.Fatalf("rate %v, %v; want %v", l.RateFor(p), err, c.want)
			}
			keys, err := s.ListKeys(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				if k.ID == key.ID && l.RateFor(Principal{Rate: k.Rate}) != c.want {
					t.Fatalf("listed rate %v; want %v", k.Rate, c.want)
				}
			}
		})
	}
	t.Run("SetRate changes a key's rate and nil returns it to the default", func(t *testing.T) {
		plain, key, err := s.CreateKey(ctx, "acme", AllScopes(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []*Rate{&own, &Unlimited, nil} {
			if err := s.SetRate(ctx, key.ID, r); err != nil {
				t.Fatal(err)
			}
			p, err := s.Authenticate(ctx, plain)
			want := def
			if r != nil {
				want = *r
			}
			if err != nil || l.RateFor(p) != want {
				t.Fatalf("after SetRate(%v): %v, %v", r, l.RateFor(p), err)
			}
		}
	})
	t.Run("a rate out of bounds is refused", func(t *testing.T) {
		for _, r := range []Rate{{Limit: 5, Window: 0}, {Limit: 5, Window: 1500 * time.Millisecond}, {Limit: 5, Window: 48 * time.Hour}, {Limit: -1, Window: time.Second}} {
			if _, _, err := s.CreateKey(ctx, "acme", AllScopes(), nil, WithRate(r)); err == nil {
				t.Fatalf("CreateKey with rate %+v succeeded", r)
			}
		}
		if err := s.SetRate(ctx, uuid.New(), &own); err == nil {
			t.Fatal("SetRate of an unknown key succeeded")
		}
	})
}

// BenchmarkLimiterTake measures the one statement every rate-limited
// request costs: the upsert that counts it and reads the window.
func BenchmarkLimiterTake(b *testing.B) {
	db, _ := testdb.New(b)
	l := NewLimiter(db.Pool, Unlimited, FailClosedForOwnRates)
	rate := Rate{Limit: maxRateLimit, Window: time.Hour}
	ctx := context.Background()
	b.Run("one key, serial", func(b *testing.B) {
		key := uuid.New()
		for b.Loop() {
			if _, err := l.Take(ctx, key, rate); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("one key, 16 at once", func(b *testing.B) {
		key := uuid.New()
		b.SetParallelism(8) // 8 × GOMAXPROCS (2) goroutines
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := l.Take(ctx, key, rate); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("a key per goroutine, 16 at once", func(b *testing.B) {
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			key := uuid.New()
			for pb.Next() {
				if _, err := l.Take(ctx, key, rate); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
