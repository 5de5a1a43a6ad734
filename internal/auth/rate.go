package auth

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Rate is how many requests a key may make per window. The zero Rate is no
// limit at all.
type Rate struct {
	Limit  int
	Window time.Duration
}

// Unlimited is the rate of a key that is never limited.
var Unlimited = Rate{}

// Bounds of a rate: windows from a second to a day (counters live as long
// as their window), and a limit a 32-bit counter holds.
const (
	minRateWindow = time.Second
	maxRateWindow = 24 * time.Hour
	maxRateLimit  = 1_000_000_000
)

// IsUnlimited reports whether r limits nothing.
func (r Rate) IsUnlimited() bool { return r.Limit == 0 }

// rateUnits are the window units ParseRate reads, largest first (String
// writes the largest that divides the window).
var rateUnits = []struct {
	names []string
	d     time.Duration
}{
	{[]string{"day", "d"}, 24 * time.Hour},
	{[]string{"h", "hour"}, time.Hour},
	{[]string{"min", "m", "minute"}, time.Minute},
	{[]string{"s", "sec", "second"}, time.Second},
}

// ParseRate reads a rate such as "600/min", "10/s", "5000/h", "100000/day"
// or "100/30s" (a count of units), or "unlimited".
func ParseRate(s string) (Rate, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "unlimited" {
		return Unlimited, nil
	}
	count, per, ok := strings.Cut(s, "/")
	if !ok {
		return Rate{}, fmt.Errorf("rate %q: want REQUESTS/WINDOW such as 600/min, or unlimited", s)
	}
	limit, err := strconv.Atoi(strings.TrimSpace(count))
	if err != nil || limit < 1 || limit > maxRateLimit {
		return Rate{}, fmt.Errorf("rate %q: the number of requests must be a whole number from 1 to %d", s, maxRateLimit)
	}
	window, err := parseWindow(strings.TrimSpace(per))
	if err != nil {
		return Rate{}, fmt.Errorf("rate %q: %w", s, err)
	}
	return Rate{Limit: limit, Window: window}, nil
}

// parseWindow reads "min", "30s", "15min", "2h".
func parseWindow(s string) (time.Duration, error) {
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	n := 1
	if digits > 0 {
		var err error
		if n, err = strconv.Atoi(s[:digits]); err != nil || n < 1 {
			return 0, fmt.Errorf("window %q: bad count", s)
		}
	}
	unit := s[digits:]
	for _, u := range rateUnits {
		for _, name := range u.names {
			if unit != name {
				continue
			}
			if n > int(maxRateWindow/u.d) {
				return 0, fmt.Errorf("window %q is longer than a day", s)
			}
			return time.Duration(n) * u.d, nil
		}
	}
	return 0, fmt.Errorf("window %q: unit must be s, min, h or day", s)
}

// String is the form ParseRate reads: "600/min", "100/30s", "unlimited".
func (r Rate) String() string {
	if r.IsUnlimited() {
		return "unlimited"
	}
	for _, u := range rateUnits {
		if r.Window%u.d != 0 {
			continue
		}
		if n := r.Window / u.d; n != 1 {
			return fmt.Sprintf("%d/%d%s", r.Limit, n, u.names[0])
		}
		return fmt.Sprintf("%d/%s", r.Limit, u.names[0])
	}
	return fmt.Sprintf("%d/%ds", r.Limit, int(r.Window/time.Second))
}

// valid checks a rate built in code rather than parsed.
func (r Rate) valid() error {
	if r.IsUnlimited() {
		return nil
	}
	if r.Limit < 1 || r.Limit > maxRateLimit || r.Window < minRateWindow || r.Window > maxRateWindow || r.Window%time.Second != 0 {
		return fmt.Errorf("rate %d per %s: want 1 to %d requests per whole seconds from 1s to 24h", r.Limit, r.Window, maxRateLimit)
	}
	return nil
}
