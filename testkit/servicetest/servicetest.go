// Package servicetest starts the whole service against a fresh Postgres
// database for end-to-end tests: real event store, real projections, real
// HTTP handlers (through Fiber's in-memory transport), real API keys.
package servicetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/http/openapi/openapitest"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/internal/logctx"
	"github.com/feedsvc/feedsvc/service"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// Harness is a running service with helpers to call it.
type Harness struct {
	T       testing.TB
	Service *service.Service
	DSN     string
	// Key is an API key with every scope for organization "acme".
	Key string

	logger *slog.Logger
	opts   []Option
	stop   func()
}

// Option adjusts the configuration before the service starts.
type Option func(*config.Config)

// WithCrawler runs the ingestion worker too.
func WithCrawler() Option {
	return func(c *config.Config) { c.Roles[config.RoleCrawler] = true }
}

// Start runs the service with every role on a new database until the test ends.
func Start(t testing.TB, opts ...Option) *Harness {
	t.Helper()
	return StartLogged(t, Logger(), opts...)
}

// StartLogged is Start writing the service's logs to logger.
func StartLogged(t testing.TB, logger *slog.Logger, opts ...Option) *Harness {
	t.Helper()
	h := startOn(t, testdb.NewMigratedURL(t), logger, opts)
	h.Key = h.NewKey("acme")
	return h
}

// StartOn runs the service with every role on the database at dsn
// (migrated on start), for tests that bring their own server
// (testkit/pgstandby).
func StartOn(t testing.TB, dsn string, opts ...Option) *Harness {
	t.Helper()
	h := startOn(t, dsn, Logger(), opts)
	h.Key = h.NewKey("acme")
	return h
}

// WithReadURL reads the read models from the standby at url
// (DATABASE_READ_URL), waiting at most wait for it to replay a write.
func WithReadURL(url string, wait time.Duration) Option {
	return func(c *config.Config) { c.DatabaseReadURL, c.ReplicaWait = url, wait }
}

// Another starts a second service on the harness's database, as a second
// process of the same deployment (or the same one restarted, after Stop)
// would be: it shares nothing with the first but the database. Its Key is
// the first one's.
func (h *Harness) Another(opts ...Option) *Harness {
	h.T.Helper()
	other := startOn(h.T, h.DSN, h.logger, append(h.opts, opts...))
	other.Key = h.Key
	return other
}

// Stop shuts the service down as a SIGTERM would; the test's end does it
// otherwise. Stopping twice is harmless.
func (h *Harness) Stop() {
	h.T.Helper()
	h.stop()
}

// Restart stops the service and starts it again on the same database, as
// a new process would: everything in memory is gone, keys stay valid.
func (h *Harness) Restart() {
	h.T.Helper()
	h.stop()
	fresh := startOn(h.T, h.DSN, h.logger, h.opts)
	h.Service, h.stop = fresh.Service, fresh.stop
}

func startOn(t testing.TB, dsn string, logger *slog.Logger, opts []Option) *Harness {
	t.Helper()
	cfg := config.Config{
		DatabaseURL: dsn, Addr: "127.0.0.1:0", PollInterval: time.Hour,
		AllowPrivateNetworks: true, WebhookBackoffBase: 50 * time.Millisecond,
		ConsistencyTimeout: 10 * time.Second,
		// The crawler is opt-in (WithCrawler): a test that attaches a made-up
		// domain must not make the service look it up on the network.
		Roles: map[string]bool{config.RoleProjections: true, config.RoleWebhooks: true},
	}
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	svc, err := service.New(ctx, cfg, logger)
	if err != nil {
		cancel()
		t.Fatalf("start service: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	if svc.Runner != nil {
		<-svc.Runner.Running()
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-done
			svc.Close()
		})
	}
	t.Cleanup(stop)
	return &Harness{T: t, Service: svc, DSN: dsn, logger: logger, opts: opts, stop: stop}
}

// Listen serves the API on a loopback socket the way `feedsvc serve` does
// (connection limits included) until the test ends, and returns the address.
// Transport behaviour (framing, timeouts, connection caps) is only visible
// on a real socket: Fiber's in-memory transport reports it as Go errors.
func (h *Harness) Listen() string {
	h.T.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.T.Fatalf("listen: %v", err)
	}
	h.Serve(ln)
	return ln.Addr().String()
}

// Serve serves the API on ln as Listen does, for a test that must know
// the address before the service starts (FEEDSVC_PUBLIC_URL, which hubs
// call back on).
func (h *Harness) Serve(ln net.Listener) {
	h.T.Helper()
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = h.Service.Serve(ln)
	}()
	h.T.Cleanup(func() {
		_ = h.Service.App.ShutdownWithTimeout(5 * time.Second)
		<-served
	})
}

// Logger is quiet unless TEST_LOG=1.
func Logger() *slog.Logger {
	if os.Getenv("TEST_LOG") == "1" {
		return logctx.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return logctx.New(slog.NewTextHandler(io.Discard, nil))
}

// NewKey issues a key for org with the given scopes (all when none).
func (h *Harness) NewKey(org string, scopes ...auth.Scope) string {
	h.T.Helper()
	if len(scopes) == 0 {
		scopes = auth.AllScopes()
	}
	key, _, err := h.Service.Keys.CreateKey(context.Background(), org, scopes, nil)
	if err != nil {
		h.T.Fatalf("create key: %v", err)
	}
	return key
}

// Response is an answer with its decoded JSON body.
type Response struct {
	Status int
	Body   map[string]any
	Raw    string
	Header http.Header
}

// Data returns body.data as an object.
func (r Response) Data() map[string]any {
	d, _ := r.Body["data"].(map[string]any)
	return d
}

// List returns body.data as an array of objects.
func (r Response) List() []map[string]any {
	arr, _ := r.Body["data"].([]any)
	out := make([]map[string]any, 0, len(arr))
	for _, v := range arr {
		m, _ := v.(map[string]any)
		out = append(out, m)
	}
	return out
}

// Do sends a request with the harness key. body may be nil, a string (sent
// as is) or a value (sent as JSON).
func (h *Harness) Do(method, path string, body any) Response {
	h.T.Helper()
	return h.DoWith(method, path, body, map[string]string{"Authorization": "Bearer " + h.Key})
}

// DoWith sends a request with exactly the given headers (plus a JSON
// content type when there is a body and none is given).
func (h *Harness) DoWith(method, path string, body any, headers map[string]string) Response {
	h.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			h.T.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(buf)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := h.Test(req)
	if err != nil {
		h.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := Response{Status: resp.StatusCode, Raw: string(raw), Header: resp.Header}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.Body); err != nil {
			h.T.Fatalf("%s %s answered %d with non-JSON body %q", method, path, resp.StatusCode, raw)
		}
	}
	return out
}

// Test sends req through the app's in-memory transport, as App.Test
// does, and holds the exchange to the OpenAPI document (openapitest): an
// answer or a route the document does not describe fails the test. Every
// request a test sends through the harness goes through here.
func (h *Harness) Test(req *http.Request) (*http.Response, error) {
	h.T.Helper()
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, fmt.Errorf("read the request body: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	target := req.URL.RequestURI()
	header := req.Header.Clone()
	resp, err := h.Service.App.Test(req, -1)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the answer: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	h.conforms(openapitest.Exchange{
		Method: req.Method, Target: target, Header: header, RequestBody: body,
		Status: resp.StatusCode, ResponseHeader: resp.Header, ResponseBody: raw,
	})
	return resp, nil
}

// Client is an HTTP client for the address Listen returns whose exchanges
// are held to the OpenAPI document like those of Test.
func (h *Harness) Client() *http.Client {
	return &http.Client{Transport: &openapitest.Transport{Base: http.DefaultTransport, Report: h.T.Errorf}}
}

// conforms fails the test where ex disagrees with the OpenAPI document.
func (h *Harness) conforms(ex openapitest.Exchange) {
	h.T.Helper()
	checker, err := openapitest.Default()
	if err != nil {
		h.T.Errorf("load the OpenAPI document: %v", err)
		return
	}
	for _, p := range checker.Check(ex) {
		h.T.Errorf("OpenAPI: %s", p)
	}
}

// MustStatus fails the test unless r has the status.
func (r Response) MustStatus(t testing.TB, status int) Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Raw)
	}
	return r
}
