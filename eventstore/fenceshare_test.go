package eventstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Readers share a fence only when its computation began after they asked:
// those that ask while one is under way wait it out and share the next,
// so no reader is given a fence older than its call.
func TestReadersShareOnlyAFenceComputedAfterTheyAsked(t *testing.T) {
	var f fenceShare
	var computed atomic.Int32
	release := make(chan struct{})
	compute := func(context.Context) (string, error) {
		n := computed.Add(1)
		if n == 1 {
			<-release
		}
		return fmt.Sprint(n), nil
	}
	ctx := context.Background()
	first := make(chan string)
	go func() {
		v, _ := f.get(ctx, compute)
		first <- v
	}()
	waitFor(t, func() bool { return computed.Load() == 1 })

	// Five readers ask while the first computation runs.
	var wg sync.WaitGroup
	got := make([]string, 5)
	for i := range got {
		wg.Go(func() { got[i], _ = f.get(ctx, compute) })
	}
	waitFor(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.started == 1 // nobody started a second while the first runs
	})
	time.Sleep(20 * time.Millisecond) // let every reader reach its wait
	close(release)
	if v := <-first; v != "1" {
		t.Fatalf("the first reader got fence %s, want its own (1)", v)
	}
	wg.Wait()
	for i, v := range got {
		if v != "2" {
			t.Errorf("reader %d got fence %s, want 2: the one computed after it asked, shared", i, v)
		}
	}
	if n := computed.Load(); n != 2 {
		t.Errorf("%d computations for six readers in two waves, want 2", n)
	}
}

// A failed computation (its caller gave up) does not fail the readers
// that were sharing it: one of them computes again.
func TestAFailedFenceIsComputedAgainForTheReadersSharingIt(t *testing.T) {
	var f fenceShare
	var computed atomic.Int32
	started := make(chan struct{})
	fail := make(chan struct{})
	compute := func(ctx context.Context) (string, error) {
		if computed.Add(1) == 1 {
			close(started)
			<-fail
			return "", context.Canceled
		}
		return "fresh", nil
	}
	leaderCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.get(leaderCtx, compute) //nolint:errcheck // its error is the point
	<-started
	done := make(chan string)
	go func() {
		v, err := f.get(context.Background(), compute)
		if err != nil {
			v = err.Error()
		}
		done <- v
	}()
	time.Sleep(10 * time.Millisecond)
	close(fail)
	if v := <-done; v != "fresh" {
		t.Fatalf("the waiting reader got %q, want a fence computed for it", v)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
