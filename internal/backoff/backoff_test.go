package backoff

import (
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	const base, max = time.Minute, time.Hour
	tests := []struct {
		name     string
		failures int
		lo, hi   time.Duration
	}{
		{"no failure means no wait", 0, 0, 0},
		{"a negative count means no wait", -3, 0, 0},
		{"the first failure waits about the base", 1, 30 * time.Second, 90 * time.Second},
		{"the second failure waits about twice the base", 2, time.Minute, 3 * time.Minute},
		{"the fourth failure waits about eight times the base", 4, 4 * time.Minute, 12 * time.Minute},
		{"many failures are capped at max", 20, max / 2, max},
		{"a huge count is capped at max without looping forever", 1 << 40, max / 2, max},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := 0; i < 200; i++ {
				got := Delay(tt.failures, base, max)
				if got < tt.lo || got > tt.hi {
					t.Fatalf("Delay(%d) = %v, want within [%v, %v]", tt.failures, got, tt.lo, tt.hi)
				}
			}
		})
	}
}

func TestDelayIsJittered(t *testing.T) {
	seen := map[time.Duration]bool{}
	for i := 0; i < 50; i++ {
		seen[Delay(3, time.Minute, time.Hour)] = true
	}
	if len(seen) < 10 {
		t.Errorf("only %d distinct delays in 50 draws; jitter is missing", len(seen))
	}
}
