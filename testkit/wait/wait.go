// Package wait is the one way tests wait for something that happens on its
// own time (a projection, a crawl, a delivery): they poll a condition
// instead of sleeping, so a fast machine goes on at once and a loaded one
// gets the whole timeout.
package wait

import (
	"testing"
	"time"
)

// Until polls cond, every 5 ms at first and every 50 ms at most, until it
// holds, and fails the test naming what it waited for when timeout passes
// first. cond is called once more after the deadline, so a condition that
// held just as time ran out is not reported as late.
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Within(timeout, cond) {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// Within polls cond as Until does and reports whether it held before
// timeout passed, for tests that check a condition never comes true or
// that fail in their own words.
func Within(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	pause := 5 * time.Millisecond
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return cond()
		}
		time.Sleep(min(pause, time.Until(deadline)+time.Millisecond))
		pause = min(2*pause, 50*time.Millisecond)
	}
}
