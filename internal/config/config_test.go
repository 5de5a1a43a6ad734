package config

import (
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/internal/auth"
)

func TestTheDefaultRateLimitIsReadFromTheEnvironment(t *testing.T) {
	cases := []struct {
		name, value string
		want        auth.Rate
		fails       bool
	}{
		{"unset is 6000 a minute", "", auth.Rate{Limit: 6000, Window: time.Minute}, false},
		{"a rate is taken", "100/s", auth.Rate{Limit: 100, Window: time.Second}, false},
		{"unlimited turns it off", "unlimited", auth.Unlimited, false},
		{"a malformed rate is an error, not a default", "fast", auth.Rate{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("FEEDSVC_RATE_LIMIT", c.value)
			cfg, err := FromEnv()
			if c.fails != (err != nil) || !c.fails && cfg.RateLimit != c.want {
				t.Fatalf("rate %v, %v", cfg.RateLimit, err)
			}
		})
	}
}
