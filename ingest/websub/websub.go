// Package websub is the crawler's WebSub subscriber (W3C WebSub
// Recommendation, https://www.w3.org/TR/websub/): a feed that names a hub
// (Link headers or <link rel="hub">, read by package crawl) is subscribed
// at that hub when the service has a public URL, and what the hub pushes
// is ingested at once, through the same steps as a poll (ingest.Worker's
// IngestPushed); polling goes on as the slower fallback.
//
// Its parts, by role:
//   - Record (crawler, from the web connector): a feed read in full with
//     hubs makes one subscription per (source, topic, hub), with its own
//     random callback id and secret.
//   - Run (crawler): sends subscription requests, renews leases before they
//     expire, unsubscribes sources no feed has any more, and ingests the
//     queued pushes.
//   - Verify and Receive (API, the unauthenticated callback
//     PUBLIC_URL/websub/{id}): answer the hub's intent verification only
//     for a request this service sent and has not seen verified, and queue
//     pushed content whose X-Hub-Signature checks out.
//
// Its tables are websub_subscriptions and websub_pushes (migrations/):
// operational state, like crawl_state.
package websub

import (
	"context"
	crand "crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun"
	"golang.org/x/time/rate"

	"github.com/feedsvc/feedsvc/ingest"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/internal/pgnotify"
	"github.com/feedsvc/feedsvc/internal/safehttp"
)

// Defaults for zero Config fields.
const (
	// DefaultLeaseSeconds is the lease asked of hubs: ten days, what the
	// recommendation suggests hubs default to; the hub decides.
	DefaultLeaseSeconds = 10 * 24 * 3600
	DefaultTick         = time.Second
	DefaultRetryBase    = time.Minute
	DefaultRetryMax     = 6 * time.Hour
	// DefaultVerifyWait is how long a request waits for the hub's intent
	// verification before it is sent again.
	DefaultVerifyWait = 10 * time.Minute
	// DefaultDeniedWait is how long a denied subscription rests before it
	// is asked for again.
	DefaultDeniedWait = 24 * time.Hour
	// DefaultRate bounds the callback's requests per subscription, and
	// DefaultTotalRate all of them (unknown ids included), per process.
	DefaultRate      = 10
	DefaultTotalRate = 200
)

// CallbackPath is where the API serves the callbacks: CallbackPath + id.
const CallbackPath = "/websub/"

// Config tunes the subscriber. Zero values mean the documented default.
type Config struct {
	// PublicURL is the service's address as hubs reach it
	// (FEEDSVC_PUBLIC_URL); empty turns subscribing off: hubs are recorded
	// but nothing is asked of them.
	PublicURL string
	// AllowPrivateNetworks lets hub URLs name private and loopback
	// addresses (safehttp); only for tests and trusted deployments.
	AllowPrivateNetworks bool
	// LeaseSeconds is the lease asked of hubs.
	LeaseSeconds int
	// Tick is how often the crawler looks for subscription work, and for
	// queued pushes while it is not told of them (see Run).
	Tick time.Duration
	// RetryBase and RetryMax bound the backoff after a hub refused or
	// failed a request.
	RetryBase, RetryMax time.Duration
	// VerifyWait and DeniedWait: see their defaults.
	VerifyWait, DeniedWait time.Duration
	// MaxBodyBytes bounds a pushed body: the crawler's bound on a fetched
	// feed (crawl.DefaultMaxBodyBytes).
	MaxBodyBytes int
	// Rate and TotalRate bound the callback's requests a second, per
	// subscription and in all.
	Rate, TotalRate float64
	// Timeout bounds each request to a hub.
	Timeout time.Duration
}

func (c Config) withDefaults() Config {
	c.PublicURL = strings.TrimSuffix(strings.TrimSpace(c.PublicURL), "/")
	if c.LeaseSeconds <= 0 {
		c.LeaseSeconds = DefaultLeaseSeconds
	}
	if c.Tick <= 0 {
		c.Tick = DefaultTick
	}
	if c.RetryBase <= 0 {
		c.RetryBase = DefaultRetryBase
	}
	if c.RetryMax <= 0 {
		c.RetryMax = max(DefaultRetryMax, c.RetryBase)
	}
	if c.VerifyWait <= 0 {
		c.VerifyWait = DefaultVerifyWait
	}
	if c.DeniedWait <= 0 {
		c.DeniedWait = DefaultDeniedWait
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = crawl.DefaultMaxBodyBytes
	}
	if c.Rate <= 0 {
		c.Rate = DefaultRate
	}
	if c.TotalRate <= 0 {
		c.TotalRate = DefaultTotalRate
	}
	if c.Timeout <= 0 {
		c.Timeout = safehttp.DefaultTimeout
	}
	return c
}

// Ingester ingests what a source pushed (ingest.Worker).
type Ingester interface {
	IngestPushed(ctx context.Context, sourceID uuid.UUID, cands []connector.Candidate) (ingest.Pushed, error)
}

// Subscriber is the WebSub subscriber of one process.
type Subscriber struct {
	db bun.IDB
	// pool is the pgx pool db shares: the take of queued pushes, which
	// runs often, goes through it with a fixed text and bound arguments
	// (see the note above ingest's leasedColumns).
	pool *pgxpool.Pool
	cfg  Config
	log  *slog.Logger
	hub  *http.Client
	// wake wakes Run at once: a new subscription or a push received here
	// (poke), or a push queued anywhere (pushes.heard).
	wake chan struct{}
	now  func() time.Time
	// pushes is what Run knows of the queue of pushes (lookForPushes).
	pushes pushLook

	limitMu sync.Mutex
	limits  map[string]*rate.Limiter
	total   *rate.Limiter
	metrics *metrics
}

// New returns the subscriber; nothing runs until Run. pool is the pgx pool
// db shares.
func New(db bun.IDB, pool *pgxpool.Pool, cfg Config, logger *slog.Logger) *Subscriber {
	if logger == nil {
		logger = slog.Default()
	}
	cfg = cfg.withDefaults()
	return &Subscriber{
		db: db, pool: pool, cfg: cfg, log: logger.With("component", "websub"),
		// Hubs are reached like any site the crawler reads: never a
		// private address unless allowed, and no redirect is followed (a
		// subscription request is a POST the hub answers itself).
		hub:     safehttp.New(safehttp.Options{AllowPrivateNetworks: cfg.AllowPrivateNetworks, Timeout: cfg.Timeout, MaxRedirects: -1}),
		wake:    make(chan struct{}, 1),
		now:     time.Now,
		limits:  map[string]*rate.Limiter{},
		total:   rate.NewLimiter(rate.Limit(cfg.TotalRate), int(2*cfg.TotalRate)),
		metrics: newMetrics(),
	}
}

// HearPushes has l tell Run of the pushes other processes queue
// (PushesChannel), so that it takes them when told rather than every
// tick. It must be called before l runs, and before Run.
func (s *Subscriber) HearPushes(l *pgnotify.Listener) {
	s.pushes.listener = l
	l.On(PushesChannel, s.pushHeard)
}

// pushHeard notes that a push was queued (or that listening started,
// having missed what came before) and wakes Run.
func (s *Subscriber) pushHeard() {
	s.pushes.heard.Store(true)
	s.poke()
}

// Enabled reports whether the subscriber asks hubs for subscriptions (the
// service has a public URL).
func (s *Subscriber) Enabled() bool { return s.cfg.PublicURL != "" }

// MaxBodyBytes is the bound on a pushed body.
func (s *Subscriber) MaxBodyBytes() int { return s.cfg.MaxBodyBytes }

// callbackURL is the subscription's callback as hubs reach it.
func (s *Subscriber) callbackURL(id string) string { return s.cfg.PublicURL + CallbackPath + id }

// maxHubsPerFeed bounds the subscriptions one feed makes: a feed naming a
// hundred hubs must not make a hundred.
const maxHubsPerFeed = 3

// Record keeps the hubs of the feeds a poll of the source read in full:
// one subscription per (source, topic, hub), where the topic is the feed's
// self URL (else the URL it was fetched at). A known one is left as it is.
// It is the web connector's FeedsRead; a failure is only logged, since the
// next poll that reads the feed records it again.
func (s *Subscriber) Record(ctx context.Context, sourceID uuid.UUID, feeds []crawl.FeedLinks) {
	for _, f := range feeds {
		topic := f.Self
		if topic == "" {
			topic = f.URL
		}
		for i, hub := range f.Hubs {
			if i == maxHubsPerFeed {
				break
			}
			id, secret, err := newIDAndSecret()
			if err != nil {
				s.log.Error("websub: no randomness for a subscription", "err", err)
				return
			}
			res, err := s.db.NewRaw(`INSERT INTO websub_subscriptions (id, source_id, topic, hub, secret)
				VALUES (?, ?, ?, ?, ?) ON CONFLICT (source_id, topic, hub) DO NOTHING`,
				id, sourceID, topic, hub, secret).Exec(ctx)
			if err != nil {
				s.log.Warn("websub: recording a hub failed", "source_id", sourceID, "hub", hub, "err", err)
				continue
			}
			if n, _ := res.RowsAffected(); n > 0 {
				s.log.Info("websub: feed names a hub", "source_id", sourceID, "topic", topic, "hub", hub, "subscribing", s.Enabled())
				s.poke()
			}
		}
	}
}

// newIDAndSecret mints a callback id (32 random bytes, URL-safe) and a
// secret (32 random bytes as hex: 64 characters, under the 200 bytes the
// recommendation allows).
func newIDAndSecret() (id, secret string, err error) {
	b := make([]byte, 64)
	if _, err := crand.Read(b); err != nil {
		return "", "", fmt.Errorf("read random bytes: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:32]), hex.EncodeToString(b[32:]), nil
}

// poke wakes the loops at once (a new subscription, a queued push).
func (s *Subscriber) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// validID is the shape newIDAndSecret gives ids: anything else is not
// looked up.
func validID(id string) bool {
	if len(id) != 43 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Allow reports whether the callback may serve one more request for id
// now: each subscription and all of them together are rate limited.
func (s *Subscriber) Allow(id string) bool {
	if !s.total.Allow() {
		return false
	}
	if !validID(id) {
		// Answered 404 without a database read; only the total counts,
		// so that made-up ids cannot crowd out the real ones' limiters.
		return true
	}
	s.limitMu.Lock()
	defer s.limitMu.Unlock()
	l, ok := s.limits[id]
	if !ok {
		if len(s.limits) > 10_000 {
			// Forgetting every limiter at once is cheaper than keeping
			// them in order; the total bound still holds meanwhile.
			clear(s.limits)
		}
		l = rate.NewLimiter(rate.Limit(s.cfg.Rate), int(2*s.cfg.Rate))
		s.limits[id] = l
	}
	return l.Allow()
}
