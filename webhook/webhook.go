// Package webhook delivers the event.item_added webhook (api.md 6, D10):
// signed POSTs to each subscribed endpoint, retried, never lost.
//
// The path of one delivery: an EventItemAdded in the log reaches the
// dispatcher, a projector that keeps its own copy of the subscriptions
// (webhook_routes) at its own position in the log. For every subscription
// that matches, it renders the body once, records the delivery and queues a
// River job, all in the transaction that moves its checkpoint: a delivery
// is queued exactly once per event and webhook, whatever crashes. River
// (Postgres-backed jobs) runs the sender: one signed POST per attempt, at
// most five attempts with exponential backoff, pending ones surviving
// restarts. Every attempt is recorded in the delivery log the API shows.
//
// The dispatcher is never rebuilt from position 0 (it is not among
// service/projectors): replaying it would send every past event again. On an
// installation moved by export and import it does start at 0, to build its
// subscriptions from the imported log, but queues nothing for the items
// the import recorded as delivered (RecordDeliveredThrough).
package webhook

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/shape"
	"github.com/feedsvc/feedsvc/readmodel/webhooks"
)

// Defaults for zero Config members.
const (
	// DefaultAttemptTimeout bounds one attempt (D10: 10 s).
	DefaultAttemptTimeout = 10 * time.Second
	// DefaultConcurrency bounds attempts in flight in one process.
	DefaultConcurrency = 64
	// DefaultPerHost bounds attempts in flight to one receiver (host:port),
	// so a slow receiver holds at most this many of the process's slots.
	DefaultPerHost = 8
	// MaxAttempts is every attempt a delivery gets, the first included (D10).
	MaxAttempts = 5
	// maxRetryDelay caps the backoff between attempts.
	maxRetryDelay = time.Hour
)

// Config is how the webhook machinery behaves.
type Config struct {
	// BackoffBase is the first retry's delay; each further one doubles,
	// with jitter (FEEDSVC_WEBHOOK_BACKOFF_BASE).
	BackoffBase time.Duration
	// AllowPrivateNetworks lets endpoints be private addresses (tests, dev).
	AllowPrivateNetworks bool
	// Work makes this process dispatch and send (the webhooks role); without
	// it, the service only answers the API (which queues redeliveries).
	Work           bool
	AttemptTimeout time.Duration
	Concurrency    int
	PerHost        int
	// Render makes a delivery's data; shape.ItemAddedData when nil.
	Render Render
	// Now is the sender's clock (attempt times, the 3-day rule); tests move
	// it forward.
	Now func() time.Time
	// RescueAfter is how long an attempt may look running before River
	// hands it to another process: the time a crashed process's attempts
	// wait. Default: the job timeout plus 30 s.
	RescueAfter time.Duration
	// SenderConns sizes the sender's own pool (default 16); the service
	// gives it its share of FEEDSVC_DB_MAX_CONNS.
	SenderConns int
	// Instance names the process in the sender's and the listener's
	// application_name (database.AppName); unset, they keep the main pool's.
	Instance string
	// SenderIdle is how long the job client runs with no job to work
	// before it stops (gate.go; default DefaultSenderIdle).
	SenderIdle time.Duration
	// RecordPatience is how long a sent attempt's outcome is retried to be
	// recorded before the job gives up on it (default 15 s; tests shorten
	// it).
	RecordPatience time.Duration
}

func (c Config) withDefaults() Config {
	if c.BackoffBase <= 0 {
		c.BackoffBase = 30 * time.Second
	}
	if c.AttemptTimeout <= 0 {
		c.AttemptTimeout = DefaultAttemptTimeout
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.PerHost <= 0 {
		c.PerHost = DefaultPerHost
	}
	if c.Render == nil {
		c.Render = shape.ItemAddedData
	}
	if c.Now == nil {
		c.Now = domain.Now
	}
	if c.SenderConns <= 0 {
		c.SenderConns = senderConns
	}
	if c.SenderIdle <= 0 {
		c.SenderIdle = DefaultSenderIdle
	}
	if c.RecordPatience <= 0 {
		c.RecordPatience = recordPatience
	}
	if c.RescueAfter < c.jobTimeout() {
		c.RescueAfter = c.jobTimeout() + 30*time.Second
	}
	return c
}

// jobTimeout bounds a whole job: the attempt and the bookkeeping around it.
func (c Config) jobTimeout() time.Duration { return c.AttemptTimeout + 5*time.Second }

// Parts are what the service shares with the webhook machinery.
type Parts struct {
	DB       *database.DB
	Store    eventstore.Store
	Commands *commands.Handler
	Queries  *webhooks.Queries
	Logger   *slog.Logger
}

// Service is the webhook machinery of one process: the dispatcher, the
// sender and the delivery log.
type Service struct {
	cfg      Config
	parts    Parts
	logger   *slog.Logger
	river    *river.Client[*sql.Tx]
	listener *pgxpool.Pool
	// pool and db are the sender's own connections (the webhooks role), so
	// that attempts never wait for connections the API and the projectors
	// need, nor the reverse. Elsewhere db is the service's.
	pool    *pgxpool.Pool
	db      *bun.DB
	sender  *Sender
	secrets *Secrets
	metrics *Metrics
	// gate runs the job client while it has jobs (gate.go).
	gate gate
	// loads and records batch the attempts' statements (webhooks role).
	loads   *batcher[uuid.UUID, attempt]
	records *batcher[outcome, *time.Time]
}

// New wires the webhook machinery; nothing runs until Start.
func New(p Parts, cfg Config) (*Service, error) {
	cfg = cfg.withDefaults()
	s := &Service{
		cfg: cfg, parts: p, logger: p.Logger.With("component", "webhooks"),
		secrets: NewSecrets(p.DB.Bun), metrics: newMetrics(p.DB.Bun),
		gate: gate{wake: make(chan struct{}, 1)},
	}
	s.sender = NewSender(SenderOptions{
		AllowPrivateNetworks: cfg.AllowPrivateNetworks, Timeout: cfg.AttemptTimeout, PerHost: cfg.PerHost,
	})
	if err := s.open(p.DB); err != nil {
		return nil, err
	}
	driver := riverdatabasesql.New(s.db.DB)
	if s.listener != nil {
		driver = riverdatabasesql.NewWithPgxListener(s.db.DB, s.listener)
	}
	rc, err := river.NewClient(driver, s.riverConfig())
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("create webhook job client: %w", err)
	}
	s.river = rc
	return s, nil
}

// senderConns is the default size of the sender's own pool: an attempt
// holds a connection only for its share of two batched statements, so a
// few serve many attempts in flight.
const senderConns = 16

func (s *Service) open(db *database.DB) error {
	s.db = db.Bun
	if !s.cfg.Work {
		// An insert-only job client (the API queues redeliveries) never
		// listens: it needs no connection of its own.
		return nil
	}
	// River's LISTEN connection is held for good: it gets a pool of its
	// own rather than one of the service's.
	lcfg := db.Pool.Config().Copy()
	lcfg.MinConns, lcfg.MaxConns = 0, 1
	s.appName(lcfg, "webhook-listener")
	listener, err := pgxpool.NewWithConfig(context.Background(), lcfg)
	if err != nil {
		return fmt.Errorf("open webhook listener pool: %w", err)
	}
	s.listener = listener
	pcfg := db.Pool.Config().Copy()
	pcfg.MinConns, pcfg.MaxConns = 0, int32(s.cfg.SenderConns)
	s.appName(pcfg, "webhook-sender")
	// The sender's commits need not wait for the disk: what a database
	// crash could take back is the record of recent attempts and the jobs'
	// completion, together, so those deliveries are sent again (receivers
	// deduplicate by event id). Deliveries are queued by the dispatcher,
	// on the service's connections, with durable commits: none is lost.
	pcfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	if s.pool, err = pgxpool.NewWithConfig(context.Background(), pcfg); err != nil {
		listener.Close()
		return fmt.Errorf("open webhook sender pool: %w", err)
	}
	s.db = bun.NewDB(stdlib.OpenDBFromPool(s.pool), pgdialect.New())
	s.loads = newBatcher(batchLanes, s.cfg.Concurrency, s.loadAttempts)
	s.records = newBatcher(batchLanes, s.cfg.Concurrency, s.recordAttempts)
	return nil
}

func (s *Service) appName(cfg *pgxpool.Config, pool string) {
	if s.cfg.Instance != "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = database.AppName(s.cfg.Instance, pool)
	}
}

// batchLanes is how many batches of loads, and of records, run at once:
// while some run, the attempts that arrive meanwhile gather for the next.
const batchLanes = 2

// riverConfig is an insert-only client for the API, or a working one for
// the webhooks role.
func (s *Service) riverConfig() *river.Config {
	cfg := &river.Config{Logger: s.parts.Logger.With("component", "river"), MaxAttempts: MaxAttempts}
	if !s.cfg.Work {
		return cfg
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &deliveryWorker{svc: s})
	river.AddWorker(workers, &housekeepWorker{svc: s})
	// The job client is told of new jobs (LISTEN/NOTIFY; River debounces
	// notifications without dropping the last, and fetches again when a
	// worker frees up), so polling bounds what no notification announces:
	// a retry River's scheduler made available ahead of its time (it looks
	// 5 s ahead and announces only what is due), and jobs announced while
	// its listener reconnected. A retry waits up to one interval past its
	// time: a sixth of the backoff at most, and at most 5 s, within the
	// ±50 % jitter of the default 30 s backoff's first retry (15–45 s). An
	// idle process polls River's jobs table every 5 s, not every second
	// (bench/polling/README.md, "Idle roles").
	poll := min(max(s.cfg.BackoffBase/6, 20*time.Millisecond), 5*time.Second)
	cfg.Queues = map[string]river.QueueConfig{queueName: {MaxWorkers: s.cfg.Concurrency}}
	cfg.Workers = workers
	cfg.FetchPollInterval = poll
	cfg.FetchCooldown = min(poll, 10*time.Millisecond)
	cfg.JobTimeout = s.cfg.jobTimeout()
	cfg.RescueStuckJobsAfter = s.cfg.RescueAfter
	return cfg
}

// Dispatcher is the projector that queues deliveries. The service runs it
// (beside the read-model projectors) in the process of the webhooks role.
func (s *Service) Dispatcher() projections.Projector {
	return &dispatcher{svc: s}
}

// Start runs the sender until Stop; only in a process with Work. The job
// client itself starts once the installation has webhooks (gate.go): at
// once when it has, else when one is created.
func (s *Service) Start(ctx context.Context) error {
	if !s.cfg.Work {
		return nil
	}
	gctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.gate.stop, s.gate.done = stop, make(chan struct{})
	go s.runGate(gctx)
	return nil
}

// Stop stops the gate, then the job client if it runs: attempts in flight
// finish for a while, then are cancelled (a cancelled attempt is retried
// later, like a failed one).
func (s *Service) Stop(ctx context.Context) error {
	if s.gate.stop != nil {
		s.gate.stop()
		<-s.gate.done
	}
	return s.stopSender(ctx)
}

// Close releases the sender's connections, after Stop.
func (s *Service) Close() {
	if s.loads != nil {
		s.loads.stop()
		s.records.stop()
	}
	if s.pool != nil {
		_ = s.db.Close()
		s.pool.Close()
	}
	if s.listener != nil {
		s.listener.Close()
	}
}

// Secrets is the signing-secret store.
func (s *Service) Secrets() *Secrets { return s.secrets }

// Metrics are the webhook metrics, for the service's registry.
func (s *Service) Metrics() *Metrics { return s.metrics }
