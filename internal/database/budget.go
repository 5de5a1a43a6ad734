package database

import (
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strconv"
)

// DefaultMaxConns is a process's connection budget when
// FEEDSVC_DB_MAX_CONNS is not set: five processes fit a default Postgres
// (max_connections = 100) with room for migrations, psql and monitoring.
const DefaultMaxConns = 20

// minMainConns is the least the main pool works with: a migration holds
// its lock on one connection while it migrates on another.
const minMainConns = 4

// Budget is a process's connections to Postgres, split among its pools.
// Each pool is capped at its share, so the process never holds more than
// Total.
type Budget struct {
	Total int
	// Main is the pool of the API, the event store, the projectors and
	// the crawler (and of a rebuild's lock, held for the rebuild).
	Main int
	// Sender is the webhook sender's pool (River's fetches and
	// completions, the attempts' loads and records); Listener is River's
	// LISTEN connection. Both 0 without the webhooks role.
	Sender, Listener int
	// Watch is the projections' head watch's LISTEN connection (for the
	// appends every process announces): 1 where projectors run (the
	// projections or webhooks role), else 0.
	Watch int
	// CrawlWatch is the crawler's LISTEN connection (package pgnotify:
	// new attachments to crawl or backfill, WebSub pushes queued by
	// another process): 1 where the crawler role runs, else 0.
	CrawlWatch int
	// Rebuild is the pool of a rebuild's shadow copy (0 without the
	// projections role, which runs rebuilds).
	Rebuild int
}

// SplitBudget shares total among the pools the roles need: the sender
// gets a quarter (at least 3: River's fetches and completions and the
// attempts' batched statements), the listener 1, the head watch 1, the
// crawler's listener 1, a rebuild 3, the main pool the rest.
func SplitBudget(total int, webhooks, rebuilds, crawler bool) (Budget, error) {
	if total <= 0 {
		total = DefaultMaxConns
	}
	b := Budget{Total: total}
	if webhooks {
		b.Sender, b.Listener = max(3, total/4), 1
	}
	if rebuilds {
		b.Rebuild = 3
	}
	if webhooks || rebuilds {
		b.Watch = 1
	}
	if crawler {
		b.CrawlWatch = 1
	}
	b.Main = total - b.Sender - b.Listener - b.Watch - b.CrawlWatch - b.Rebuild
	if b.Main < minMainConns {
		return Budget{}, fmt.Errorf("FEEDSVC_DB_MAX_CONNS=%d is too small for this process's roles: it needs at least %d (webhook sender %d, its listener %d, the head watch %d, the crawler's listener %d, rebuilds %d, and %d for the rest)",
			total, total-b.Main+minMainConns, b.Sender, b.Listener, b.Watch, b.CrawlWatch, b.Rebuild, minMainConns)
	}
	return b, nil
}

// Instance names one service instance in application_name: host, pid and
// a random part (two instances in one process, as in tests, differ by it;
// it also covers pid reuse across container restarts), cut so that a
// pool's suffix still fits Postgres's 63 bytes.
func Instance() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	if len(host) > 24 {
		host = host[:24]
	}
	b := make([]byte, 3)
	_, _ = crand.Read(b) // crypto/rand.Read never fails on supported platforms
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b)
}

// AppName is the application_name of a pool of an instance: pg_stat_activity
// shows which process, and which of its pools, holds each connection.
func AppName(instance, pool string) string {
	name := "feedsvc:" + instance + ":" + pool
	if len(name) > 63 {
		name = name[:63]
	}
	return name
}

// WithPool returns dsn with its pool capped at maxConns connections (pgx's
// pool_max_conns) that name themselves appName.
func WithPool(dsn string, maxConns int, appName string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("parse database url: %w", err)
	}
	q := u.Query()
	q.Set("pool_max_conns", strconv.Itoa(maxConns))
	if appName != "" {
		q.Set("application_name", appName)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}
