// Package service assembles the process: database, event store, commands,
// projections and the HTTP API, in the roles the configuration asks for.
// `feedsvc serve` and the end-to-end tests start the service the same way.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/eventstore"
	apihttp "github.com/feedsvc/feedsvc/http"
	"github.com/feedsvc/feedsvc/http/transport"
	"github.com/feedsvc/feedsvc/ingest"
	"github.com/feedsvc/feedsvc/ingest/calendar"
	"github.com/feedsvc/feedsvc/ingest/connector/social"
	"github.com/feedsvc/feedsvc/ingest/connector/web"
	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/ingest/crawlstate"
	"github.com/feedsvc/feedsvc/ingest/parse"
	"github.com/feedsvc/feedsvc/ingest/websub"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/internal/idempotency"
	"github.com/feedsvc/feedsvc/internal/lease"
	"github.com/feedsvc/feedsvc/internal/metrics"
	"github.com/feedsvc/feedsvc/internal/pgnotify"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel"
	"github.com/feedsvc/feedsvc/readmodel/copies"
	"github.com/feedsvc/feedsvc/readmodel/extracts"
	"github.com/feedsvc/feedsvc/readmodel/feeds"
	"github.com/feedsvc/feedsvc/readmodel/feedsubscriptions"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/readmodel/history"
	"github.com/feedsvc/feedsvc/readmodel/insights"
	"github.com/feedsvc/feedsvc/readmodel/negativesources"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/readmodel/orglog"
	"github.com/feedsvc/feedsvc/readmodel/sources"
	"github.com/feedsvc/feedsvc/readmodel/webhooks"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/service/schema"
	"github.com/feedsvc/feedsvc/webhook"
)

// Service is a running instance's parts.
type Service struct {
	Config   config.Config
	DB       *database.DB
	Store    *eventstore.Postgres
	Commands *commands.Handler
	// Social reads platform accounts: the API looks accounts up through
	// it, the crawler reads them.
	Social *social.Connector
	// Lookups resolve the references commands take.
	Lookups *readmodel.Lookups
	Runner  *projections.Runner
	// Rebuilds rebuilds read models an older projector version built.
	Rebuilds *projections.Rebuilder
	Ingest   *ingest.Worker
	Waiter   *projections.Waiter
	Keys     *auth.Store
	Limiter  *auth.Limiter
	// Idempotency keeps the answers of writes sent with an Idempotency-Key.
	Idempotency *idempotency.Store
	Webhooks    *webhook.Service
	// WebSub is the WebSub subscriber: the API answers hubs through it, the
	// crawler subscribes and ingests pushes.
	WebSub *websub.Subscriber
	// CrawlNotifications tells the crawler and the WebSub subscriber of
	// attachments made crawlable and pushes queued, on a connection of
	// its own; nil without the crawler role.
	CrawlNotifications *pgnotify.Listener
	Metrics            *metrics.Registry
	App                *fiber.App
	// Budget is how the process's Postgres connections are split; every
	// connection's application_name starts with "feedsvc:" + Instance + ":".
	Budget   database.Budget
	Instance string
	// Replica serves the API's reads when DATABASE_READ_URL is set; nil
	// otherwise.
	Replica *database.Replica
	logger  *slog.Logger
}

// New opens and migrates the database and wires every part. Nothing runs
// until Run.
func New(ctx context.Context, cfg config.Config, logger *slog.Logger) (*Service, error) {
	// One budget of Postgres connections for the process, split among its
	// pools, each named in application_name (docs/operating.md,
	// "Connections").
	budget, err := database.SplitBudget(cfg.DBMaxConns, cfg.Roles[config.RoleWebhooks], cfg.Roles[config.RoleProjections], cfg.Roles[config.RoleCrawler])
	if err != nil {
		return nil, err
	}
	instance := database.Instance()
	mainDSN, err := database.WithPool(cfg.DatabaseURL, budget.Main, database.AppName(instance, "main"))
	if err != nil {
		return nil, err
	}
	db, err := schema.Open(ctx, mainDSN)
	if err != nil {
		return nil, err
	}
	s := &Service{Config: cfg, DB: db, Budget: budget, Instance: instance, logger: logger}
	s.Store = eventstore.NewPostgres(db.Pool)
	// An analysis copy imported from a filtered export lacks events of its
	// streams: serving it would answer lists with holes, and commands
	// could not append.
	if err := s.Store.CheckServable(ctx); err != nil {
		db.Close()
		return nil, err
	}
	s.Lookups = readmodel.NewLookups(db.Bun)
	s.Social = social.New(social.Providers(cfg.Platforms, cfg.AllowPrivateNetworks), logger)
	// The feeds' copy locks wake on the runner's progress once it exists
	// (WakeOn below): the runner needs the handler that holds them.
	feedLocks := copies.NewFeedLocks(db.Bun, logger)
	s.Commands = commands.New(s.Store, s.Lookups, commands.CheckingSources(s.Social), commands.FindingCopies(copies.NewQueries(db.Bun)), commands.DecidingCopiesAlone(feedLocks),
		commands.FindingHappeningCopies(happeningitems.NewQueries(db.Bun)))
	s.Keys = auth.NewStore(db.Bun)
	s.Limiter = auth.NewLimiter(db.Pool, cfg.RateLimit, cfg.RateLimitFailure)
	s.Idempotency = idempotency.NewStore(db.Pool)
	s.Webhooks, err = webhook.New(webhook.Parts{DB: db, Store: s.Store, Commands: s.Commands, Queries: webhooks.NewQueries(db.Bun), Logger: logger}, webhook.Config{
		BackoffBase: cfg.WebhookBackoffBase, AllowPrivateNetworks: cfg.AllowPrivateNetworks, Work: cfg.Roles[config.RoleWebhooks],
		SenderConns: budget.Sender, Instance: instance,
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	var run []projections.Projector
	if cfg.Roles[config.RoleProjections] {
		run = append(run, projectors.All()...)
	}
	// The webhook dispatcher is a projector run by the webhooks role: where
	// no process sends, nothing is queued, and its checkpoint keeps what is
	// still to be queued.
	if cfg.Roles[config.RoleWebhooks] {
		run = append(run, s.Webhooks.Dispatcher())
	}
	if len(run) > 0 {
		// The head watch listens for other processes' appends on a
		// connection of its own.
		listenDSN, err := database.WithPool(cfg.DatabaseURL, budget.Watch, database.AppName(instance, "events-listener"))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.Runner, err = projections.NewRunner(s.Store, db.Bun, logger, projections.RunnerConfig{ListenDSN: listenDSN}, run...)
		if err != nil {
			s.Close()
			return nil, err
		}
		feedLocks.WakeOn(s.Runner)
	}
	// One crawling client per process, so that its per-host limits and
	// robots.txt cache hold for the crawler and the parse endpoint alike.
	client := crawl.New(crawl.Options{UserAgent: crawl.DefaultUserAgent, AllowPrivateNetworks: cfg.AllowPrivateNetworks})
	// Read models an older projector built are rebuilt on start where the
	// projections role runs.
	if cfg.Roles[config.RoleProjections] {
		rebuildDSN, err := database.WithPool(cfg.DatabaseURL, budget.Rebuild, database.AppName(instance, "rebuild"))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.Rebuilds = &projections.Rebuilder{DSN: rebuildDSN, DB: db, Store: s.Store, Logger: logger, Owner: lease.DefaultOwner()}
	}
	s.WebSub = websub.New(db.Bun, db.Pool, websub.Config{PublicURL: cfg.PublicURL, AllowPrivateNetworks: cfg.AllowPrivateNetworks}, logger)
	if cfg.Roles[config.RoleCrawler] {
		// The crawler looks for new attachments and queued pushes when
		// told, on a connection of its own, rather than every tick.
		listenDSN, err := database.WithPool(cfg.DatabaseURL, budget.CrawlWatch, database.AppName(instance, "crawl-listener"))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.CrawlNotifications = pgnotify.New(listenDSN, logger)
		s.WebSub.HearPushes(s.CrawlNotifications)
		if s.Ingest, err = s.NewIngestWorker(client, ingest.Config{
			PollInterval: cfg.PollInterval, MinPollInterval: cfg.MinPollInterval, MaxPollInterval: cfg.MaxPollInterval,
			Concurrency:   cfg.CrawlConcurrency,
			LeaseDuration: cfg.CrawlLease,
			Documents:     cfg.Documents, MaxHappeningsPerCrawl: cfg.MaxHappeningsPerCrawl,
		}, s.CrawlNotifications); err != nil {
			s.Close()
			return nil, err
		}
	}
	s.Metrics = metrics.New()
	if s.Runner != nil {
		s.Metrics.MustRegister(s.Runner.Collector())
	}
	if s.Rebuilds != nil {
		s.Metrics.MustRegister(s.Rebuilds.Collector())
	}
	s.Metrics.MustRegister(s.Webhooks.Metrics())
	s.Metrics.MustRegister(calendar.Metrics())
	s.Metrics.MustRegister(ingest.PollingCollector(db.Bun))
	s.Metrics.MustRegister(ingest.Metrics())
	s.Metrics.MustRegister(s.WebSub.Collector())
	s.Waiter = projections.NewWaiter(db.Bun, s.Runner, cfg.ConsistencyTimeout, projectors.Consistent()...)
	// Reads go through one handle: the primary, or the replica router
	// when a standby is configured. Writes wait for it to replay them.
	var reads bun.IDB = db.Bun
	readLookups := s.Lookups
	var waiter commands.Waiter = s.Waiter
	if cfg.DatabaseReadURL != "" {
		readDSN, err := database.WithPool(cfg.DatabaseReadURL, budget.Main, database.AppName(instance, "replica"))
		if err != nil {
			s.Close()
			return nil, err
		}
		if s.Replica, err = database.OpenReplica(db, readDSN, cfg.ReplicaWait, logger); err != nil {
			s.Close()
			return nil, err
		}
		s.Metrics.MustRegister(s.Replica.Collectors()...)
		reads, readLookups = s.Replica, readmodel.NewLookups(s.Replica)
		waiter = replicaWaiter{Waiter: s.Waiter, replica: s.Replica}
	}
	s.App = apihttp.New(apihttp.Config{
		RequireHTTPS: cfg.RequireHTTPS, TrustedProxies: cfg.TrustedProxies,
		HeaderTimeout: cfg.HeaderTimeout, AllowPrivateNetworks: cfg.AllowPrivateNetworks,
		Streams: transport.StreamConfig{
			PerKey: cfg.StreamsPerKey, Total: cfg.StreamsMax, KeepAlive: cfg.StreamKeepAlive, Poll: cfg.StreamPoll, MaxAge: cfg.StreamMaxAge,
		},
	}, apihttp.Deps{
		Commands: s.Commands, Reads: apiReads(reads, readLookups), Waiter: waiter, Keys: s.Keys, Limiter: s.Limiter, Idempotency: s.Idempotency, Ready: s.Ready, Logger: logger, Metrics: s.Metrics,
		Webhooks: s.Webhooks,
		History:  history.New(s.Store, sources.NewQueries(db.Bun)),
		Parser:   parse.New(client, logger).WithLimits(cfg.Documents),
		Polling: func(ctx context.Context, org, sourceID uuid.UUID) (apihttp.SourcePolling, bool, error) {
			p, ok, err := ingest.PollingOf(ctx, db.Bun, org, sourceID)
			return apihttp.SourcePolling(p), ok, err
		},
		WebSub:  s.WebSub,
		Replica: replicaStatus(s.Replica),
		Push: func(ctx context.Context, sourceID uuid.UUID) (websub.Push, bool, error) {
			return websub.PushOf(ctx, db.Bun, sourceID)
		},
		DiscoveredFeed: func(ctx context.Context, org, sourceID uuid.UUID) (string, bool, error) {
			state, ok, err := crawlstate.ConnectorStateOf(ctx, db.Bun, org, sourceID)
			if feeds := web.DiscoveredFeeds(state); ok && len(feeds) > 0 {
				return feeds[0], true, nil
			}
			return "", false, err
		},
	})
	return s, nil
}

// replicaWaiter makes a write visible on the read replica too: after the
// projectors applied it on the primary, it waits for the standby to
// replay the primary's WAL up to then (or, past the bound, reads fall back
// to the primary until it has).
type replicaWaiter struct {
	*projections.Waiter
	replica *database.Replica
}

func (w replicaWaiter) Wait(ctx context.Context, pos eventstore.Position, eventTypes []string) error {
	if err := w.Waiter.Wait(ctx, pos, eventTypes); err != nil {
		return err
	}
	if len(eventTypes) == 0 {
		return nil
	}
	return w.replica.WaitReplayed(ctx)
}

// replicaStatus is the readyz view of the replica; nil without one.
func replicaStatus(r *database.Replica) func() error {
	if r == nil {
		return nil
	}
	return r.Status
}

// apiReads are the read models' queries the API answers from.
func apiReads(db bun.IDB, lookups *readmodel.Lookups) apihttp.Reads {
	return apihttp.Reads{
		Feeds: feeds.NewQueries(db), Sources: sources.NewQueries(db), News: newsitems.NewQueries(db),
		Happenings: happeningitems.NewQueries(db), Insights: insights.NewQueries(db),
		NegativeSources: negativesources.NewQueries(db), Webhooks: webhooks.NewQueries(db), Items: lookups,
		Subscriptions: feedsubscriptions.NewQueries(db), Log: orglog.NewQueries(db),
		Extracts: extracts.NewQueries(db), Copies: copies.NewQueries(db),
	}
}

// Run runs the configured roles until ctx ends, then shuts down in order:
// stop taking requests, then stop projecting.
func (s *Service) Run(ctx context.Context) error {
	errs := make(chan error, 4)
	if s.Runner != nil {
		go func() { errs <- s.Runner.Run(ctx) }()
		<-s.Runner.Running()
		s.logger.Info("projections running", "projectors", len(s.Runner.Projectors()))
	}
	// Read models built by an older projector are rebuilt in the
	// background while they keep serving.
	rebuildCtx, stopRebuilds := context.WithCancel(ctx)
	rebuildDone := make(chan struct{})
	go func() {
		defer close(rebuildDone)
		if s.Rebuilds == nil {
			return
		}
		if err := s.Rebuilds.RebuildOutdated(rebuildCtx, projectors.All()); err != nil && !errors.Is(err, context.Canceled) {
			s.logger.Error("rebuilding outdated read models", "err", err)
		}
	}()
	// River stops when told to (shutdown), not when ctx ends: attempts in
	// flight get to finish and record themselves.
	if err := s.Webhooks.Start(context.WithoutCancel(ctx)); err != nil {
		errs <- err
	}
	// The replica's measures run wherever the API's handlers read from it,
	// served on a listener or not.
	if s.Replica != nil {
		go s.Replica.Run(ctx)
	}
	if s.Config.Roles[config.RoleAPI] {
		go func() {
			ln, err := net.Listen("tcp", s.Config.Addr)
			if err != nil {
				errs <- fmt.Errorf("listen on %s: %w", s.Config.Addr, err)
				return
			}
			s.logger.Info("api listening", "addr", ln.Addr().String())
			go s.housekeep(ctx)
			if err := s.Serve(ln); err != nil {
				errs <- fmt.Errorf("serve on %s: %w", ln.Addr(), err)
			}
		}()
	}
	// The crawler gets its own context so it also stops, and is waited
	// for, when another part fails; it must stop before the database closes.
	crawlCtx, stopCrawl := context.WithCancel(ctx)
	crawlDone := make(chan struct{})
	go func() {
		defer close(crawlDone)
		if s.Ingest != nil {
			listenDone := make(chan struct{})
			go func() {
				defer close(listenDone)
				s.CrawlNotifications.Run(crawlCtx)
			}()
			defer func() { <-listenDone }()
			// The WebSub subscriber is the crawler's too: it ingests
			// pushes through the worker.
			pushDone := make(chan struct{})
			go func() {
				defer close(pushDone)
				if err := s.WebSub.Run(crawlCtx, s.Ingest); err != nil {
					errs <- err
				}
			}()
			if err := s.Ingest.Run(crawlCtx); err != nil {
				errs <- err
			}
			<-pushDone
		}
	}()
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errs:
	}
	stopCrawl()
	<-crawlDone
	stopRebuilds()
	<-rebuildDone
	return errors.Join(runErr, s.shutdown())
}

// Serve answers API requests on ln until the service shuts down, holding
// no more connections than the configuration allows.
func (s *Service) Serve(ln net.Listener) error {
	return s.App.Listener(transport.LimitConns(ln, transport.ConnLimits{
		Total: s.Config.MaxConns, PerIP: s.Config.MaxConnsPerIP,
	}, s.logger))
}

// housekeepEvery is how often an API process removes what the API keeps
// only for a while (ended rate limit windows, idempotency keys past their
// 24 hours).
const housekeepEvery = 10 * time.Minute

// housekeep removes expired API bookkeeping until ctx ends. Every API
// process does it; the deletes are idempotent, so they need no leader.
func (s *Service) housekeep(ctx context.Context) {
	tick := time.NewTicker(housekeepEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n, err := s.Limiter.Forget(ctx); err != nil {
			s.logger.WarnContext(ctx, "housekeeping", "err", err)
		} else if n > 0 {
			s.logger.DebugContext(ctx, "housekeeping: ended rate limit windows removed", "rows", n)
		}
		if n, err := s.Idempotency.Expire(ctx); err != nil {
			s.logger.WarnContext(ctx, "housekeeping", "err", err)
		} else if n > 0 {
			s.logger.DebugContext(ctx, "housekeeping: expired idempotency keys removed", "rows", n)
		}
	}
}

func (s *Service) shutdown() error {
	var errs []error
	if s.Config.Roles[config.RoleAPI] {
		if err := s.App.ShutdownWithTimeout(10 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("stop api: %w", err))
		}
	}
	stop, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Webhooks.Stop(stop); err != nil {
		errs = append(errs, err)
	}
	if s.Runner != nil {
		if err := s.Runner.Close(); err != nil {
			errs = append(errs, fmt.Errorf("stop projections: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Close releases the database.
func (s *Service) Close() {
	if s.Webhooks != nil {
		s.Webhooks.Close()
	}
	if s.Replica != nil {
		s.Replica.Close()
	}
	s.DB.Close()
}

// Ready is the readiness check: the database answers and no projector run
// here is failing.
func (s *Service) Ready(ctx context.Context) error {
	if err := s.DB.Pool.Ping(ctx); err != nil {
		return fmt.Errorf("database unreachable: %w", err)
	}
	if s.Runner == nil {
		return nil
	}
	for _, p := range s.Runner.Projectors() {
		if err := s.Runner.Progress(p.Name()).Err(); err != nil {
			return fmt.Errorf("projector %s failing: %w", p.Name(), err)
		}
	}
	return nil
}
