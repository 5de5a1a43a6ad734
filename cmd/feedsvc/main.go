// Command feedsvc is the feed aggregation service: `serve` runs it,
// `migrate` brings the database schema up to date, `keys` issues and
// revokes API keys, and `projections` rebuilds and inspects read models.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	// Events are read in the zones their pages name: the zone database
	// travels in the binary, so a minimal image without one still has it.
	_ "time/tzdata"

	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/internal/logctx"
	"github.com/feedsvc/feedsvc/service"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/service/schema"
)

const usage = `usage: feedsvc <command> [arguments]

commands:
  serve                      run the API, projections, crawler and webhook sender
                             (FEEDSVC_ROLES=api,projections,crawler,webhooks selects a subset)
  migrate                    create the database if needed and apply migrations
  keys create|list|revoke|rate
                             manage API keys and their rates (feedsvc keys -h)
  projections list|rebuild   inspect or rebuild read models (feedsvc projections -h)
  events export|import|seal-key
                             write the event log as NDJSON (sealed), load one into
                             an empty store, or print the seal key (feedsvc events -h)
  feeds events enable|disable FEED_ID [--reason TEXT]
                             switch an event feed as the operator (enabledSource admin)

configuration is read from the environment: DATABASE_URL, DATABASE_READ_URL
and FEEDSVC_REPLICA_WAIT (reads from a streaming replica), FEEDSVC_ADDR,
FEEDSVC_ROLES, FEEDSVC_POLL_INTERVAL (every source is checked at least this
often unless its site asks for less), FEEDSVC_MIN_POLL_INTERVAL (busy sources,
sooner), FEEDSVC_MAX_POLL_INTERVAL (quiet sources, later, if the operator wants),
FEEDSVC_CRAWL_CONCURRENCY, FEEDSVC_CRAWL_LEASE, FEEDSVC_PUBLIC_URL,
FEEDSVC_ALLOW_PRIVATE_NETWORKS,
FEEDSVC_WEBHOOK_BACKOFF_BASE, FEEDSVC_REQUIRE_HTTPS, FEEDSVC_TRUSTED_PROXIES,
FEEDSVC_CONSISTENCY_TIMEOUT, FEEDSVC_HEADER_TIMEOUT, FEEDSVC_DB_MAX_CONNS, FEEDSVC_MAX_CONNS,
FEEDSVC_MAX_CONNS_PER_IP, FEEDSVC_RATE_LIMIT, FEEDSVC_RATE_LIMIT_FAILURE,
FEEDSVC_STREAMS_PER_KEY, FEEDSVC_STREAMS_MAX, FEEDSVC_STREAM_KEEPALIVE,
FEEDSVC_STREAM_POLL_INTERVAL, FEEDSVC_STREAM_MAX_AGE (live item streams),
FEEDSVC_LOG_LEVEL, FEEDSVC_LOG_FORMAT;
FEEDSVC_MAX_CALENDAR_BYTES, FEEDSVC_MAX_EVENTS_PER_DOCUMENT, FEEDSVC_MAX_RECURRENCE_STEPS,
FEEDSVC_MAX_DOCUMENT_TIME, FEEDSVC_MAX_EVENTS_PER_CRAWL (limits on documents);
platform sources (docs/platforms.md): FEEDSVC_TWITTER_API_URL,
FEEDSVC_TWITTER_BEARER_TOKEN, FEEDSVC_INSTAGRAM_API_URL,
FEEDSVC_INSTAGRAM_ACCESS_TOKEN, FEEDSVC_INSTAGRAM_BUSINESS_ID,
FEEDSVC_TIKTOK_API_URL, FEEDSVC_TIKTOK_CLIENT_KEY, FEEDSVC_TIKTOK_CLIENT_SECRET,
FEEDSVC_FACEBOOK_API_URL, FEEDSVC_FACEBOOK_ACCESS_TOKEN, FEEDSVC_RSSHUB_URL,
FEEDSVC_<PLATFORM>_REQUESTS_PER_MINUTE
(defaults and meanings: docs/operating.md).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := execute(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "feedsvc:", err)
		os.Exit(1)
	}
}

func execute(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	logger := newLogger(cfg, stderr)
	// Code that logs through slog's default (auth, for one) writes in the
	// same format and names its request too.
	slog.SetDefault(logger)
	switch args[0] {
	case "serve":
		return serve(ctx, cfg, logger)
	case "migrate":
		return migrate(ctx, cfg, logger)
	case "keys":
		return withDatabase(ctx, cfg, func(db *database.DB) error {
			return runKeys(ctx, db, args[1:], stdout, stderr)
		})
	case "feeds":
		return withDatabase(ctx, cfg, func(db *database.DB) error {
			return runFeeds(ctx, db, args[1:], stdout, stderr)
		})
	case "events":
		return withDatabase(ctx, cfg, func(db *database.DB) error {
			return runEvents(ctx, db, args[1:], os.Stdin, stdout, stderr, logger)
		})
	case "projections":
		return withDatabase(ctx, cfg, func(db *database.DB) error {
			return runProjections(ctx, cfg, db, args[1:], stdout, logger)
		})
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

func serve(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	svc, err := service.New(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer svc.Close()
	err = svc.Run(ctx)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func migrate(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	return withDatabase(ctx, cfg, func(db *database.DB) error {
		logger.Info("database migrated")
		return nil
	})
}

// withDatabase opens (creating if needed) and migrates the database, so
// every command works on a fresh machine.
func withDatabase(ctx context.Context, cfg config.Config, fn func(*database.DB) error) error {
	db, err := schema.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db)
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if strings.EqualFold(cfg.LogFormat, "text") {
		return logctx.New(slog.NewTextHandler(w, opts))
	}
	return logctx.New(slog.NewJSONHandler(w, opts))
}
