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

func TestThePublicURLIsAnAbsoluteHTTPAddress(t *testing.T) {
	cases := []struct {
		name, value, want string
		fails             bool
	}{
		{"unset leaves WebSub off", "", "", false},
		{"an https address is taken without its trailing slash", "https://feeds.example.com/", "https://feeds.example.com", false},
		{"a path prefix is kept", "http://10.0.0.5:8080/feedsvc", "http://10.0.0.5:8080/feedsvc", false},
		{"a relative address is an error", "feeds.example.com", "", true},
		{"another scheme is an error", "ftp://feeds.example.com", "", true},
		{"a query is an error", "https://feeds.example.com/?a=b", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("FEEDSVC_PUBLIC_URL", c.value)
			cfg, err := FromEnv()
			if c.fails != (err != nil) || !c.fails && cfg.PublicURL != c.want {
				t.Fatalf("public URL %q, %v", cfg.PublicURL, err)
			}
		})
	}
}

func TestTheIntervalsBesideThePollIntervalDefaultToTheCrawlersOwn(t *testing.T) {
	cases := []struct {
		name, min, max   string
		wantMin, wantMax time.Duration
		fails            bool
	}{
		{"unset they are left to the crawler (a minute, and the interval)", "", "", 0, 0, false},
		{"set they are taken", "30s", "2h", 30 * time.Second, 2 * time.Hour, false},
		{"a malformed one is an error, not a default", "soon", "", 0, 0, true},
		{"zero is an error: set the interval itself to poll every source at it", "0s", "", 0, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("FEEDSVC_MIN_POLL_INTERVAL", c.min)
			t.Setenv("FEEDSVC_MAX_POLL_INTERVAL", c.max)
			cfg, err := FromEnv()
			if c.fails != (err != nil) || !c.fails && (cfg.MinPollInterval != c.wantMin || cfg.MaxPollInterval != c.wantMax) {
				t.Fatalf("min %v, max %v, %v", cfg.MinPollInterval, cfg.MaxPollInterval, err)
			}
		})
	}
}

func TestTheReadReplicaSettingsAreReadFromTheEnvironment(t *testing.T) {
	cases := []struct {
		name, url, wait string
		wantURL         string
		wantWait        time.Duration
		fails           bool
	}{
		{"unset reads from the primary and waits 2s", "", "", "", 2 * time.Second, false},
		{"a read URL and a wait are taken", "postgres://standby:5433/feedsvc", "500ms", "postgres://standby:5433/feedsvc", 500 * time.Millisecond, false},
		{"a malformed wait is an error, not a default", "postgres://standby/feedsvc", "soon", "", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("DATABASE_READ_URL", c.url)
			t.Setenv("FEEDSVC_REPLICA_WAIT", c.wait)
			cfg, err := FromEnv()
			if c.fails != (err != nil) || !c.fails && (cfg.DatabaseReadURL != c.wantURL || cfg.ReplicaWait != c.wantWait) {
				t.Fatalf("read url %q, wait %s, %v", cfg.DatabaseReadURL, cfg.ReplicaWait, err)
			}
		})
	}
}
