// Package config reads the operator's settings from the environment (D11).
package config

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/feedsvc/feedsvc/ingest/calendar"
	"github.com/feedsvc/feedsvc/ingest/platform"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/internal/database"
)

// Roles a process can take; `serve` takes all of them unless FEEDSVC_ROLES
// names a subset, so each can be scaled as its own process.
const (
	RoleAPI         = "api"
	RoleProjections = "projections"
	RoleCrawler     = "crawler"
	RoleWebhooks    = "webhooks"
)

// DefaultRateLimit is the request rate of a key without its own: 100
// requests a second on average, which a client polling many feeds stays
// under, while one that loops without pause is stopped.
const DefaultRateLimit = "6000/min"

// Config is every setting of the service.
type Config struct {
	DatabaseURL string
	// DatabaseReadURL is a streaming standby of DatabaseURL the API reads
	// the read models from (docs/operating.md, "Running with a read
	// replica"); empty reads everything from the primary.
	DatabaseReadURL string
	// ReplicaWait bounds how long a write waits for the standby to replay
	// it before reads fall back to the primary.
	ReplicaWait time.Duration
	Addr        string
	// PollInterval is the longest any enabled source waits between two
	// checks unless its site asks for less; busy sources are checked
	// sooner, down to MinPollInterval; MaxPollInterval, set above
	// PollInterval, lets quiet ones wait up to it (ingest.Config). Zero
	// Min and Max are ingest's defaults (a minute, and PollInterval).
	PollInterval    time.Duration
	MinPollInterval time.Duration
	MaxPollInterval time.Duration
	// CrawlConcurrency is how many sources one crawler process polls at
	// once.
	CrawlConcurrency int
	// CrawlLease is how long a crawler process holds a source without
	// renewing it: how soon another takes over a source of one that died.
	CrawlLease           time.Duration
	AllowPrivateNetworks bool
	WebhookBackoffBase   time.Duration
	RequireHTTPS         bool
	TrustedProxies       []string
	Roles                map[string]bool
	// ConsistencyTimeout bounds how long a write waits for its read models.
	ConsistencyTimeout time.Duration
	// MaxConns caps the connections the API holds open at once; past it a
	// new connection is answered 503 and closed.
	MaxConns int
	// DBMaxConns is the process's budget of Postgres connections, split
	// among its pools (database.SplitBudget).
	DBMaxConns int
	// MaxConnsPerIP caps the open connections of one client address; past
	// it a new connection is answered 429 and closed. 0 turns the cap off
	// (behind a proxy every connection comes from the proxy's address).
	MaxConnsPerIP int
	// HeaderTimeout bounds the wait for a request's line and headers.
	HeaderTimeout time.Duration
	// RateLimit is the request rate of keys without their own; the zero
	// Rate limits nothing.
	RateLimit auth.Rate
	// RateLimitFailure is what a request gets while its rate cannot be
	// counted in Postgres.
	RateLimitFailure auth.FailureMode
	LogLevel         string
	LogFormat        string
	// Platforms are the providers' settings of platform sources.
	Platforms platform.Settings
	// Documents bound the work of reading one document for events,
	// whatever reaches it (crawl, POST /parse, a linked calendar).
	Documents calendar.Limits
	// MaxHappeningsPerCrawl bounds the happenings one crawl of a source records;
	// the rest wait for the next crawl.
	MaxHappeningsPerCrawl int
	// PublicURL is the service's address as the internet reaches it
	// (FEEDSVC_PUBLIC_URL): WebSub hubs call back under it. Empty turns
	// WebSub subscribing off.
	PublicURL string
	// StreamsPerKey and StreamsMax bound the live item streams an API
	// process holds open, per API key and in all; StreamKeepAlive is a
	// quiet stream's comment interval, StreamPoll how often the process
	// looks for new items of the streamed feeds, StreamMaxAge when a
	// stream ends for its client to reconnect (docs/feeds-out.md).
	StreamsPerKey   int
	StreamsMax      int
	StreamKeepAlive time.Duration
	StreamPoll      time.Duration
	StreamMaxAge    time.Duration
}

// FromEnv reads the configuration; malformed values are errors, not defaults.
func FromEnv() (Config, error) {
	c := Config{
		DatabaseURL:     env("DATABASE_URL", database.DefaultURL),
		DatabaseReadURL: env("DATABASE_READ_URL", ""),
		Addr:            env("FEEDSVC_ADDR", ":8080"),
		LogLevel:        env("FEEDSVC_LOG_LEVEL", "info"),
		LogFormat:       env("FEEDSVC_LOG_FORMAT", "json"),
		Roles:           map[string]bool{},
	}
	var err error
	if c.PollInterval, err = duration("FEEDSVC_POLL_INTERVAL", 10*time.Minute); err != nil {
		return Config{}, err
	}
	if c.MinPollInterval, err = duration("FEEDSVC_MIN_POLL_INTERVAL", 0); err != nil {
		return Config{}, err
	}
	if c.MaxPollInterval, err = duration("FEEDSVC_MAX_POLL_INTERVAL", 0); err != nil {
		return Config{}, err
	}
	if c.CrawlConcurrency, err = count("FEEDSVC_CRAWL_CONCURRENCY", 4, 1); err != nil {
		return Config{}, err
	}
	if c.CrawlLease, err = duration("FEEDSVC_CRAWL_LEASE", 5*time.Minute); err != nil {
		return Config{}, err
	}
	if c.WebhookBackoffBase, err = duration("FEEDSVC_WEBHOOK_BACKOFF_BASE", 30*time.Second); err != nil {
		return Config{}, err
	}
	if c.ConsistencyTimeout, err = duration("FEEDSVC_CONSISTENCY_TIMEOUT", 10*time.Second); err != nil {
		return Config{}, err
	}
	if c.ReplicaWait, err = duration("FEEDSVC_REPLICA_WAIT", 2*time.Second); err != nil {
		return Config{}, err
	}
	if c.HeaderTimeout, err = duration("FEEDSVC_HEADER_TIMEOUT", 10*time.Second); err != nil {
		return Config{}, err
	}
	if c.MaxConns, err = count("FEEDSVC_MAX_CONNS", 10_000, 1); err != nil {
		return Config{}, err
	}
	if c.DBMaxConns, err = count("FEEDSVC_DB_MAX_CONNS", database.DefaultMaxConns, 1); err != nil {
		return Config{}, err
	}
	if c.MaxConnsPerIP, err = count("FEEDSVC_MAX_CONNS_PER_IP", 256, 0); err != nil {
		return Config{}, err
	}
	if c.Documents.MaxCalendarBytes, err = count("FEEDSVC_MAX_CALENDAR_BYTES", calendar.DefaultMaxCalendarBytes, 1); err != nil {
		return Config{}, err
	}
	if c.Documents.MaxHappenings, err = count("FEEDSVC_MAX_EVENTS_PER_DOCUMENT", calendar.DefaultMaxHappenings, 1); err != nil {
		return Config{}, err
	}
	if c.Documents.MaxRecurrenceSteps, err = count("FEEDSVC_MAX_RECURRENCE_STEPS", calendar.DefaultMaxRecurrenceSteps, 1); err != nil {
		return Config{}, err
	}
	if c.Documents.MaxTime, err = duration("FEEDSVC_MAX_DOCUMENT_TIME", calendar.DefaultMaxTime); err != nil {
		return Config{}, err
	}
	if c.MaxHappeningsPerCrawl, err = count("FEEDSVC_MAX_EVENTS_PER_CRAWL", calendar.DefaultMaxHappeningsPerCrawl, 1); err != nil {
		return Config{}, err
	}
	if c.StreamsPerKey, err = count("FEEDSVC_STREAMS_PER_KEY", 5, 1); err != nil {
		return Config{}, err
	}
	if c.StreamsMax, err = count("FEEDSVC_STREAMS_MAX", 1000, 1); err != nil {
		return Config{}, err
	}
	if c.StreamKeepAlive, err = duration("FEEDSVC_STREAM_KEEPALIVE", 15*time.Second); err != nil {
		return Config{}, err
	}
	if c.StreamPoll, err = duration("FEEDSVC_STREAM_POLL_INTERVAL", time.Second); err != nil {
		return Config{}, err
	}
	if c.StreamMaxAge, err = duration("FEEDSVC_STREAM_MAX_AGE", 30*time.Minute); err != nil {
		return Config{}, err
	}
	if c.AllowPrivateNetworks, err = boolean("FEEDSVC_ALLOW_PRIVATE_NETWORKS"); err != nil {
		return Config{}, err
	}
	if c.RequireHTTPS, err = boolean("FEEDSVC_REQUIRE_HTTPS"); err != nil {
		return Config{}, err
	}
	if c.RateLimit, err = auth.ParseRate(env("FEEDSVC_RATE_LIMIT", DefaultRateLimit)); err != nil {
		return Config{}, fmt.Errorf("FEEDSVC_RATE_LIMIT: %w", err)
	}
	if c.RateLimitFailure, err = auth.ParseFailureMode(env("FEEDSVC_RATE_LIMIT_FAILURE", string(auth.FailClosedForOwnRates))); err != nil {
		return Config{}, fmt.Errorf("FEEDSVC_RATE_LIMIT_FAILURE: %w", err)
	}
	if c.Platforms, err = platform.SettingsFromEnv(os.LookupEnv); err != nil {
		return Config{}, err
	}
	if c.PublicURL, err = publicURL("FEEDSVC_PUBLIC_URL"); err != nil {
		return Config{}, err
	}
	c.TrustedProxies = list(os.Getenv("FEEDSVC_TRUSTED_PROXIES"))
	roles := list(env("FEEDSVC_ROLES", strings.Join([]string{RoleAPI, RoleProjections, RoleCrawler, RoleWebhooks}, ",")))
	for _, r := range roles {
		switch r {
		case RoleAPI, RoleProjections, RoleCrawler, RoleWebhooks:
			c.Roles[r] = true
		default:
			return Config{}, fmt.Errorf("FEEDSVC_ROLES: unknown role %q (want api, projections, crawler, webhooks)", r)
		}
	}
	return c, nil
}

func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

func duration(key string, def time.Duration) (time.Duration, error) {
	v := env(key, "")
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: %q is not a positive duration like 10m", key, v)
	}
	return d, nil
}

// count reads a whole number of at least min.
func count(key string, def, min int) (int, error) {
	v := env(key, "")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min {
		return 0, fmt.Errorf("%s: %q is not a whole number of at least %d", key, v, min)
	}
	return n, nil
}

func boolean(key string) (bool, error) {
	v := env(key, "")
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s: %q is not true or false", key, v)
	}
	return b, nil
}

// publicURL reads an absolute http(s) URL without query or fragment,
// dropping a trailing slash; empty when unset.
func publicURL(key string) (string, error) {
	v := env(key, "")
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%s: %q is not an absolute http(s) URL like https://feeds.example.com", key, v)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

func list(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
