package http

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/http/keyauth"
	"github.com/feedsvc/feedsvc/http/openapi"
	"github.com/feedsvc/feedsvc/http/transport"
	"github.com/feedsvc/feedsvc/ingest/parse"
	"github.com/feedsvc/feedsvc/ingest/websub"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/internal/idempotency"
	"github.com/feedsvc/feedsvc/internal/metrics"
	"github.com/feedsvc/feedsvc/readmodel/history"
	"github.com/feedsvc/feedsvc/webhook"
)

// Config is what the API needs from the operator.
type Config struct {
	// BodyLimit bounds request bodies; larger ones answer 413.
	BodyLimit int
	// RequireHTTPS refuses plain-HTTP requests with 401 (D3).
	RequireHTTPS bool
	// TrustedProxies may set X-Forwarded-Proto / X-Forwarded-For.
	TrustedProxies []string
	// HeaderTimeout bounds the wait for a request's line and headers (a
	// slow client holds a connection no longer); ReadTimeout the whole
	// request.
	HeaderTimeout time.Duration
	ReadTimeout   time.Duration
	WriteTimeout  time.Duration
	// AllowPrivateNetworks lets sources name private, loopback and
	// link-local addresses (D10); only for development and tests.
	AllowPrivateNetworks bool
	// Streams bounds and paces the live item streams.
	Streams transport.StreamConfig
}

// Deps are the services the handlers call.
type Deps struct {
	Commands *commands.Handler
	// Reads are the read models' queries (reads.go).
	Reads Reads
	// Waiter makes writes visible before they are answered (D6).
	Waiter commands.Waiter
	Keys   *auth.Store
	// Limiter, when set, holds each key to its request rate.
	Limiter *auth.Limiter
	// Idempotency, when set, keeps the answers of writes sent with an
	// Idempotency-Key.
	Idempotency *idempotency.Store
	// Ready reports whether the service can answer requests (readyz).
	Ready func(ctx context.Context) error
	// Replica, when set (DATABASE_READ_URL), says why reads are not served
	// by the read replica at the moment, or nil when they are; readyz
	// shows it without failing, since the primary serves them meanwhile.
	Replica func() error
	Logger  *slog.Logger
	// Metrics, when set, records requests and is served at /metrics.
	Metrics *metrics.Registry
	// History reads an item's events from the event store.
	History *history.Reader
	// Webhooks keeps signing secrets and the delivery log, and sends test
	// deliveries.
	Webhooks *webhook.Service
	// Parser reads the pages POST /parse is given, with the crawler's
	// client.
	Parser *parse.Parser
	// Polling, when set, reads the crawler's schedule of a source as an
	// organization may see it, for GET /sources/{id}; false when there is
	// none to show.
	Polling func(ctx context.Context, org, sourceID uuid.UUID) (SourcePolling, bool, error)
	// WebSub, when set, answers the WebSub callback (websub.go).
	WebSub *websub.Subscriber
	// Push, with WebSub, reads a source's WebSub subscription for
	// GET /sources/{id}; false when it has none.
	Push func(ctx context.Context, sourceID uuid.UUID) (websub.Push, bool, error)
	// DiscoveredFeed, when set, is the feed the crawler found on a site an
	// organization attaches, for the OPML export's xmlUrl; false when it
	// has found none (yet).
	DiscoveredFeed func(ctx context.Context, org, sourceID uuid.UUID) (string, bool, error)
}

// SourcePolling is the crawler's schedule of a source.
type SourcePolling struct {
	NextPollAt time.Time
	// LastPollAt is nil before the first poll ends.
	LastPollAt *time.Time
	// Interval, ObservedInterval and Freshness are zero when unknown.
	Interval, ObservedInterval, Freshness time.Duration
	Failures                              int
	// Reason is why the next poll is when it is; empty before the first.
	Reason string
}

// immutable is Fiber's Immutable setting; only the benchmark that
// measures it (borrowed_bench_test.go) turns it off.
var immutable = true

// New builds the Fiber app with every route.
func New(cfg Config, deps Deps) *fiber.App {
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = 1 << 20
	}
	readTimeout := orDefault(cfg.ReadTimeout, 30*time.Second)
	app := fiber.New(fiber.Config{
		AppName:   "feedsvc",
		BodyLimit: cfg.BodyLimit,
		// Every string and byte slice Fiber hands out (Params, Query, Get,
		// Path, Method, Body) is a copy the handler may keep: borrowed, they
		// point into buffers the next request rewrites, and a value kept
		// past its request (a metric label, a map key, a log record read
		// later) changes under whoever kept it (issue 34.1). What reads
		// fasthttp directly (c.Request(), c.Context()) is still borrowed
		// and must not outlive the handler. bench/docs/request-strings.md has the
		// cost.
		Immutable: immutable,
		// ReadTimeout is fasthttp's wait for a request's head; the body's
		// own timeout is set by transport.Tune.
		ReadTimeout:                  orDefault(cfg.HeaderTimeout, 10*time.Second),
		IdleTimeout:                  readTimeout,
		WriteTimeout:                 orDefault(cfg.WriteTimeout, 30*time.Second),
		ReadBufferSize:               transport.HeaderBufferSize,
		DisablePreParseMultipartForm: true,
		// Bodies are read by transport.BoundBody, which answers one over the limit
		// without losing the connection.
		StreamRequestBody:       true,
		EnableTrustedProxyCheck: len(cfg.TrustedProxies) > 0,
		TrustedProxies:          cfg.TrustedProxies,
		ProxyHeader:             proxyHeader(cfg.TrustedProxies),
		DisableStartupMessage:   true,
		ErrorHandler:            envelope.ErrorHandler(deps.Logger),
	})
	transport.Tune(app, readTimeout, deps.Logger, unmatched)
	app.Use(transport.RequestID)
	app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: func(c *fiber.Ctx, e any) {
		deps.Logger.ErrorContext(c.UserContext(), "panic in request", "path", c.Path(), "panic", e)
	}}))
	app.Use(requestLog(deps.Logger))
	if deps.Metrics != nil {
		app.Use(observe(deps.Metrics))
		app.Get("/metrics", metricsHandler(deps.Metrics))
	}
	// Which dialect an error speaks is decided from its path alone
	// (envelope.For), so the answers written before any route runs speak it.
	app.Use(transport.BoundBody(app, bodyLimits(cfg.BodyLimit, deps.WebSub), readTimeout))
	app.Use(singleValued)
	h := &handlers{Deps: deps, targets: domain.TargetPolicy{AllowPrivateNetworks: cfg.AllowPrivateNetworks}}
	h.streams = transport.NewStreams(cfg.Streams, streamWatch{deps.Reads}, deps.Logger)
	app.Get("/healthz", h.healthz)
	app.Get("/readyz", h.readyz)
	openapi.Register(app, func(err error) error { return fmt.Errorf("build the OpenAPI document: %w", err) })
	// Subscription addresses carry their own credential (subscriptions.go).
	h.subscriptionOutputs(app)
	h.websubRoutes(app)
	app.Use(keyauth.Middleware(deps.Keys, cfg.RequireHTTPS))
	if deps.Limiter != nil {
		app.Use(keyauth.RateLimit(deps.Limiter))
	}
	if deps.Idempotency != nil {
		app.Use(transport.Idempotent(deps.Idempotency, deps.Logger))
	}
	h.routes(app)
	app.Use(unmatched)
	return app
}

// unmatched answers a path no route serves with 404, and a path served
// only for other methods with 405 and an Allow header.
func unmatched(c *fiber.Ctx) error {
	var allowed []string
	for _, r := range c.App().GetRoutes(true) {
		if r.Method != c.Method() && r.Method != fiber.MethodHead && r.Path != "/" && pathMatches(r.Path, c.Path()) {
			allowed = append(allowed, r.Method)
		}
	}
	if len(allowed) > 0 {
		c.Set(fiber.HeaderAllow, strings.Join(allowed, ", "))
		return &envelope.Error{Status: fiber.StatusMethodNotAllowed, Code: envelope.CodeMethodNotAllowed, Message: "this method is not allowed on this path; the Allow header lists the ones that are"}
	}
	return &envelope.Error{Status: fiber.StatusNotFound, Code: envelope.CodeNotFound, Message: "no route serves this path"}
}

// pathMatches compares a route pattern ("/feeds/news/:feedId") with a path.
func pathMatches(pattern, path string) bool {
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	xs := strings.Split(strings.Trim(path, "/"), "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if strings.HasPrefix(p, ":") {
			if xs[i] == "" {
				return false
			}
			continue
		}
		if !strings.EqualFold(p, xs[i]) {
			return false
		}
	}
	return true
}

type handlers struct {
	Deps
	// targets is what sources may name (D10), from the operator's setting.
	targets domain.TargetPolicy
	// streams are the live item streams' bounds, slots and shared poller.
	streams *transport.Streams
}

// routes wires each route behind the scopes that may use it (the scope table
// of docs/api-notes.md): feeds and their sources need news; item reads and feedback
// need items alone, so a key can be handed to a reader of items without
// the power to change feeds.
func (h *handlers) routes(app *fiber.App) {
	newsScope := keyauth.RequireScope(auth.ScopeNews)
	news := app.Group("/feeds/news")
	news.Post("/", newsScope, h.createFeed(newsFeeds))
	news.Get("/", newsScope, h.listFeeds(newsFeeds))
	news.Get("/:feedId", newsScope, h.getFeed(newsFeeds))
	news.Patch("/:feedId", newsScope, h.updateFeed(newsFeeds))
	news.Delete("/:feedId", newsScope, h.deleteFeed(newsFeeds))
	news.Post("/:feedId/sources", newsScope, h.addNewsSource)
	news.Get("/:feedId/sources", newsScope, h.listAttachments(newsFeed))
	news.Patch("/:feedId/sources/:sourceId", newsScope, h.updateNewsSource)
	news.Delete("/:feedId/sources/:sourceId", newsScope, h.detachSource(newsFeed))
	news.Get("/:feedId/sources.opml", newsScope, h.exportNewsSourcesOPML)
	news.Post("/:feedId/sources.opml", newsScope, h.importNewsSourcesOPML)

	items := keyauth.RequireScope(auth.ScopeItems)
	events := app.Group("/feeds/events")
	h.outputRoutes(news, events, items)
	h.subscriptionRoutes(news, events, newsScope, keyauth.RequireScope(auth.ScopeEvents), items)
	news.Get("/:feedId/items", items, h.listNewsItems)
	news.Get("/:feedId/items/:itemId", items, h.getNewsItem)
	news.Post("/:feedId/items/:itemId/feedback", items, h.giveNewsFeedback)
	news.Get("/:feedId/items/:itemId/history", items, h.itemHistory(domain.FeedNews, "feedId"))
	news.Get("/:feedId/items/:itemId/copies", items, h.listNewsItemCopies)
	news.Post("/:feedId/items/:itemId/copies/:newsPageId/split", items, h.splitNewsItemCopy)
	app.Get("/v0/feeds/news/:feedId/items", items, h.listNewsItemsV0)

	eventsScope := keyauth.RequireScope(auth.ScopeEvents)
	events.Post("/", eventsScope, h.createFeed(eventFeeds))
	events.Get("/", eventsScope, h.listFeeds(eventFeeds))
	events.Get("/:id", eventsScope, h.getFeed(eventFeeds))
	events.Patch("/:id", eventsScope, h.updateFeed(eventFeeds))
	events.Delete("/:id", eventsScope, h.deleteFeed(eventFeeds))
	events.Post("/:id/sources", eventsScope, h.addEventSource)
	events.Get("/:id/sources", eventsScope, h.listAttachments(eventFeed))
	events.Delete("/:id/sources/:sourceId", eventsScope, h.detachSource(eventFeed))
	events.Get("/:id/items", items, h.listEventItems)
	events.Get("/:id/items/:itemId", items, h.getEventItem)
	events.Post("/:id/items/:itemId/feedback", items, h.giveEventFeedback)
	events.Get("/:id/items/:itemId/history", items, h.itemHistory(domain.FeedHappenings, "id"))
	events.Get("/:id/items/:itemId/copies", items, h.listEventItemCopies)
	events.Post("/:id/items/:itemId/copies/:eventId/split", items, h.splitEventItemCopy)
	app.Get("/v0/feeds/events/:id/items", items, h.listEventItemsV0)

	insights := app.Group("/insights", items)
	insights.Get("/feedback", h.feedbackInsights)
	insights.Get("/sources/negative", h.negativeSources)

	logScope := keyauth.RequireScope(auth.ScopeLog)
	app.Get("/log", logScope, h.readLog)
	app.Get("/log/stream", logScope, h.logStream)
	app.Get("/log/extracts/feedback", logScope, h.feedbackExtract)
	app.Get("/log/extracts/items", logScope, h.itemsExtract)

	sources := app.Group("/sources", keyauth.RequireAnyScope(auth.ScopeNews, auth.ScopeEvents))
	sources.Post("/", h.createSource)
	sources.Get("/", h.listSources)
	sources.Get("/:id", h.getSource)

	app.Post("/parse", keyauth.RequireScope(auth.ScopeParse), h.parsePage)

	hooks := app.Group("/webhooks", keyauth.RequireScope(auth.ScopeWebhooks))
	hooks.Post("/", h.createWebhook)
	hooks.Get("/", h.listWebhooks)
	hooks.Post("/test", h.testWebhook)
	hooks.Get("/:webhookId", h.getWebhook)
	hooks.Patch("/:webhookId", h.updateWebhook)
	hooks.Delete("/:webhookId", h.deleteWebhook)
	hooks.Post("/:webhookId/rotate-secret", h.rotateWebhookSecret)
	hooks.Get("/:webhookId/deliveries", h.listDeliveries)
	hooks.Get("/:webhookId/deliveries/:deliveryId", h.getDelivery)
	hooks.Post("/:webhookId/deliveries/:deliveryId/redeliver", h.redeliver)

	outOfScope(app)
}

// statusOf is the status a request will be answered with: an error
// returned by a handler is rendered by the error handler after the
// middleware has seen it.
func statusOf(c *fiber.Ctx, err error) int {
	if err == nil {
		return c.Response().StatusCode()
	}
	return envelope.Status(err)
}

func requestLog(logger *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		logger.DebugContext(c.UserContext(), "request", "method", c.Method(), "path", c.Path(), "status", statusOf(c, err), "duration", time.Since(start))
		return err
	}
}

func proxyHeader(trusted []string) string {
	if len(trusted) == 0 {
		return ""
	}
	return fiber.HeaderXForwardedFor
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (h *handlers) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

func (h *handlers) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	if err := h.Ready(ctx); err != nil {
		// The reason goes to the log, not to whoever asks: it can name
		// hosts, users and database internals.
		h.Logger.Warn("not ready", "err", err)
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable"})
	}
	if h.Replica == nil {
		return c.JSON(fiber.Map{"status": "ready"})
	}
	// A lagging or unreachable replica leaves the process ready (the
	// primary answers its reads) but shows where reads go. Why is logged
	// by the replica when it changes, not at every probe.
	if h.Replica() != nil {
		return c.JSON(fiber.Map{"status": "ready", "reads": "primary"})
	}
	return c.JSON(fiber.Map{"status": "ready", "reads": "replica"})
}
