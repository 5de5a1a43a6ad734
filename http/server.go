package http

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/feedsvc/feedsvc/auth"
	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/internal/metrics"
	"github.com/feedsvc/feedsvc/readmodel"
)

// Config is what the API needs from the operator.
type Config struct {
	// BodyLimit bounds request bodies; larger ones answer 413.
	BodyLimit int
	// RequireHTTPS refuses plain-HTTP requests with 401 (D3).
	RequireHTTPS bool
	// TrustedProxies may set X-Forwarded-Proto / X-Forwarded-For.
	TrustedProxies []string
	ReadTimeout    time.Duration
	WriteTimeout   time.Duration
}

// Deps are the services the handlers call.
type Deps struct {
	Commands *commands.Handler
	Queries  *readmodel.Queries
	// Waiter makes writes visible before they are answered (D6).
	Waiter commands.Waiter
	Keys   *auth.Store
	// Ready reports whether the service can answer requests (readyz).
	Ready  func(ctx context.Context) error
	Logger *slog.Logger
	// Metrics, when set, records requests and is served at /metrics.
	Metrics *metrics.Registry
}

// New builds the Fiber app with every route.
func New(cfg Config, deps Deps) *fiber.App {
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = 1 << 20
	}
	app := fiber.New(fiber.Config{
		AppName:                 "feedsvc",
		BodyLimit:               cfg.BodyLimit,
		ReadTimeout:             orDefault(cfg.ReadTimeout, 30*time.Second),
		WriteTimeout:            orDefault(cfg.WriteTimeout, 30*time.Second),
		EnableTrustedProxyCheck: len(cfg.TrustedProxies) > 0,
		TrustedProxies:          cfg.TrustedProxies,
		ProxyHeader:             proxyHeader(cfg.TrustedProxies),
		DisableStartupMessage:   true,
		ErrorHandler:            envelope.ErrorHandler(deps.Logger),
	})
	app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: func(c *fiber.Ctx, e any) {
		deps.Logger.Error("panic in request", "path", c.Path(), "panic", e)
	}}))
	app.Use(requestLog(deps.Logger))
	if deps.Metrics != nil {
		app.Use(observe(deps.Metrics))
		app.Get("/metrics", metricsHandler(deps.Metrics))
	}
	h := &handlers{Deps: deps}
	app.Get("/healthz", h.healthz)
	app.Get("/readyz", h.readyz)
	app.Use(auth.Middleware(deps.Keys, cfg.RequireHTTPS))
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
		return &envelope.Error{Status: fiber.StatusMethodNotAllowed, Code: envelope.CodeMethodNotAllowed, Message: c.Method() + " is not allowed on " + c.Path()}
	}
	return &envelope.Error{Status: fiber.StatusNotFound, Code: envelope.CodeNotFound, Message: "no route for " + c.Method() + " " + c.Path()}
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
}

func (h *handlers) routes(app *fiber.App) {
	news := app.Group("/feeds/news", envelope.Speak(envelope.News), auth.RequireScope(auth.ScopeNews))
	news.Post("/", h.createNewsFeed)
	news.Get("/", h.listNewsFeeds)
	news.Get("/:feedId", h.getNewsFeed)
	news.Patch("/:feedId", h.updateNewsFeed)
	news.Delete("/:feedId", h.deleteNewsFeed)
	news.Post("/:feedId/sources", h.addNewsSource)
	news.Get("/:feedId/sources", h.listNewsSources)
	news.Patch("/:feedId/sources/:sourceId", h.updateNewsSource)
	news.Delete("/:feedId/sources/:sourceId", h.deleteNewsSource)

	items := auth.RequireScope(auth.ScopeItems)
	news.Get("/:feedId/items", items, h.listNewsItems)
	news.Get("/:feedId/items/:itemId", items, h.getNewsItem)
	news.Post("/:feedId/items/:itemId/feedback", items, h.giveNewsFeedback)
	app.Get("/v0/feeds/news/:feedId/items", auth.RequireScope(auth.ScopeNews), items, h.listNewsItemsV0)

	sources := app.Group("/sources", auth.RequireAnyScope(auth.ScopeNews, auth.ScopeEvents))
	sources.Post("/", h.createSource)
	sources.Get("/", h.listSources)
	sources.Get("/:id", h.getSource)
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
		logger.Debug("request", "method", c.Method(), "path", c.Path(), "status", statusOf(c, err), "duration", time.Since(start))
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
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable", "error": err.Error()})
	}
	return c.JSON(fiber.Map{"status": "ready"})
}
