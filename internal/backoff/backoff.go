// Package backoff says how long to wait before trying again something that
// keeps failing: a crawl of a source, a webhook delivery.
package backoff

import (
	"time"

	cenkalti "github.com/cenkalti/backoff/v4"
)

// Delay returns how long to wait after failures failures in a row:
// exponential backoff from base, doubling per failure, with ±50% jitter
// (cenkalti/backoff's randomisation) so that things that failed together do
// not retry together, and capped at max. Zero or fewer failures means no
// wait.
//
// For failure n the un-jittered interval is min(base·2^(n-1), max); the
// result lies in [interval/2, min(interval·3/2, max)].
func Delay(failures int, base, max time.Duration) time.Duration {
	if failures <= 0 || base <= 0 {
		return 0
	}
	if max < base {
		max = base
	}
	b := cenkalti.NewExponentialBackOff(
		cenkalti.WithInitialInterval(base),
		cenkalti.WithMultiplier(2),
		cenkalti.WithRandomizationFactor(0.5),
		cenkalti.WithMaxInterval(max),
		cenkalti.WithMaxElapsedTime(0),
	)
	// The library only exposes successive intervals. After 64 doublings any
	// base has reached max, so more steps change nothing.
	var d time.Duration
	for range min(failures, 64) {
		d = b.NextBackOff()
	}
	return min(d, max)
}
