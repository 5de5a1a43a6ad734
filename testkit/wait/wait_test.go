package wait

import (
	"testing"
	"time"
)

func TestWithinReportsWhetherTheConditionHeldInTime(t *testing.T) {
	for _, tt := range []struct {
		name    string
		holdsAt int // the call from which cond holds; 0 for never
		want    bool
	}{
		{"a condition that holds at once", 1, true},
		{"a condition that holds after a few polls", 4, true},
		{"a condition that never holds", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			got := Within(200*time.Millisecond, func() bool { calls++; return tt.holdsAt > 0 && calls >= tt.holdsAt })
			if got != tt.want {
				t.Fatalf("Within = %v after %d calls, want %v", got, calls, tt.want)
			}
		})
	}
}
