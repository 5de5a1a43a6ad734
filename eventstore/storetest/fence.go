package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
)

// HoldSite is where a held writing transaction runs, for
// Features.HoldWrite.
type HoldSite int

const (
	// AnotherDatabase is another database on the store's server.
	AnotherDatabase HoldSite = iota
	// ThisDatabase is the store's own database, writing something other
	// than the log.
	ThisDatabase
)

func (h HoldSite) String() string {
	if h == ThisDatabase {
		return "this database"
	}
	return "another database"
}

// HoldEnv names how long the held-transaction cases hold their
// transaction (a Go duration); the default, holdDefault, keeps the suite
// quick. The 60 s: FEEDSVC_STORETEST_HOLD=60s.
const HoldEnv = "FEEDSVC_STORETEST_HOLD"

const holdDefault = 3 * time.Second

// visibleWithin is how soon an append must reach a subscriber while the
// transaction is held: half a write's consistency timeout (10 s), however
// long the hold. Deliveries take milliseconds; the slowest seen was 1.4 s,
// with the machine's load average at 28.
const visibleWithin = 5 * time.Second

func holdFor(t *testing.T) time.Duration {
	v := os.Getenv(HoldEnv)
	if v == "" {
		return holdDefault
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration such as 60s", HoldEnv, v)
	}
	return d
}

// aHeldWritingTransactionHoldsNoReaderBack: a transaction that writes, but
// not to the log, stays open while writers append (command-style, shared
// streams under Any, multi-stream appends) and a subscriber reads. Every
// append must reach the subscriber within visibleWithin while the
// transaction is still open, and the subscriber must get every event once,
// in order, with each stream's revisions consecutive.
func aHeldWritingTransactionHoldsNoReaderBack(t *testing.T, s eventstore.Store, site HoldSite, hold func(*testing.T, eventstore.Store, HoldSite) (release func() error)) {
	if hold == nil {
		t.Skip("the store has no transactions another session could hold open")
	}
	d := holdFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()

	release := hold(t, s, site)
	held := true
	defer func() {
		if held {
			release() //nolint:errcheck // the test failed already
		}
	}()

	sub, err := s.SubscribeToAll(ctx, eventstore.Start)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	defer sub.Close()

	const writers = 8
	var (
		mu       sync.Mutex
		appended = make(map[uuid.UUID]time.Time) // when its append returned
		count    int
		wg       sync.WaitGroup
		errs     = make(chan error, writers)
		until    = time.Now().Add(d)
	)
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 2))
			own := fmt.Sprintf("own-%d", w)
			var last uint64
			for i := 0; time.Now().Before(until); i++ {
				batch := numbered(2 + rng.IntN(2))
				var err error
				switch {
				case w%4 == 0:
					_, err = s.AppendToStream(ctx, fmt.Sprintf("shared-%d", rng.IntN(2)), eventstore.Any(), batch...)
				case w%4 == 1:
					_, err = s.AppendToStreams(ctx,
						part(fmt.Sprintf("multi-a-%d", rng.IntN(3)), eventstore.Any(), batch[:1]...),
						part(fmt.Sprintf("multi-b-%d", rng.IntN(3)), eventstore.Any(), batch[1:]...))
				case i == 0:
					var res eventstore.AppendResult
					res, err = s.AppendToStream(ctx, own, eventstore.NoStream(), batch...)
					last = res.NextExpectedRevision
				default:
					var res eventstore.AppendResult
					res, err = s.AppendToStream(ctx, own, eventstore.Exact(last), batch...)
					last = res.NextExpectedRevision
				}
				if err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
				now := time.Now()
				mu.Lock()
				for _, e := range batch {
					appended[e.ID] = now
				}
				count += len(batch)
				mu.Unlock()
				time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
			}
		})
	}

	var (
		seen      = newDelivery()
		appending = make(chan struct{})
		slowest   time.Duration
		tick      = time.NewTicker(100 * time.Millisecond)
	)
	defer tick.Stop()
	go func() { wg.Wait(); close(appending) }()
	total := -1 // known once every writer is done
	for total < 0 || len(seen.got) < total {
		select {
		case <-appending:
			appending = nil
			mu.Lock()
			total = count
			mu.Unlock()
		case err := <-errs:
			t.Fatalf("append: %v", err)
		case e, ok := <-sub.Events():
			if !ok {
				t.Fatalf("subscription ended: %v", sub.Err())
			}
			seen.take(t, e)
			mu.Lock()
			at, ok := appended[e.ID]
			mu.Unlock()
			if ok {
				slowest = max(slowest, time.Since(at))
			}
		case <-tick.C:
			// An append not delivered within visibleWithin is held back.
			mu.Lock()
			for id, at := range appended {
				if !seen.got[id] && time.Since(at) > visibleWithin {
					mu.Unlock()
					t.Fatalf("event %s appended %s ago is not delivered while a writing transaction in %s is open: the log's fence waits for it",
						id, time.Since(at).Round(time.Millisecond), site)
				}
			}
			mu.Unlock()
		case <-ctx.Done():
			t.Fatalf("received %d events, want %d (-1: writers still running)", len(seen.got), total)
		}
	}
	// The transaction was open all along: the case proves nothing if it
	// ended early.
	held = false
	if err := release(); err != nil {
		t.Fatalf("the held transaction in %s did not stay open: %v", site, err)
	}
	if len(seen.got) != len(appended) {
		t.Fatalf("delivered %d events, appended %d", len(seen.got), len(appended))
	}
	for id := range seen.got {
		if _, ok := appended[id]; !ok {
			t.Errorf("delivered event %s that nobody appended", id)
		}
	}
	// A reader from the start reads the same log.
	all, err := s.ReadAll(context.Background(), eventstore.Start, 0)
	if err != nil {
		t.Fatalf("read all: %v", err)
	}
	if len(all) != len(seen.got) {
		t.Fatalf("read all returned %d events, the subscription delivered %d", len(all), len(seen.got))
	}
	t.Logf("%d events from %d writers over %s with a writing transaction open in %s; slowest delivery %s",
		len(seen.got), writers, d, site, slowest.Round(time.Millisecond))
}
