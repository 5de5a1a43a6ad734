package platform

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/feedsvc/feedsvc/internal/safehttp"
)

// Defaults of ClientOptions.
const (
	DefaultRequestsPerMinute = 60
	DefaultTimeout           = 15 * time.Second
	// DefaultMaxBody bounds one answer: a page of 100 tweets with their
	// media is a few hundred KB.
	DefaultMaxBody = 4 << 20
	// defaultBackOff is how long a platform is left alone after a rate
	// limit answer that does not say how long.
	defaultBackOff = time.Minute
	// maxBackOff caps what a platform may ask for: a wrong header must not
	// silence a platform for days.
	maxBackOff = 24 * time.Hour
)

// ClientOptions configure a Client. Zero values mean the defaults.
type ClientOptions struct {
	// RequestsPerMinute is this process's budget for the platform: at most
	// that many requests a minute, in bursts of at most that many.
	RequestsPerMinute int
	Timeout           time.Duration
	MaxBody           int64
	// AllowPrivateNetworks lets the client reach private addresses, for a
	// self-hosted provider on the local network and for tests.
	AllowPrivateNetworks bool
}

// Client is the HTTP side every provider shares. It sends through
// safehttp (bounded time, checked addresses), spends a request budget per
// minute, backs every request off after a rate-limit answer until the
// platform's reset, and reads bodies up to a bound. Errors name the
// platform and the path, never the query or a header, so a credential
// never reaches a log.
type Client struct {
	name    string
	http    *http.Client
	budget  *rate.Limiter
	maxBody int64
	now     func() time.Time

	mu    sync.Mutex
	until time.Time
}

// NewClient returns the client of the platform name.
func NewClient(name string, opts ClientOptions) *Client {
	if opts.RequestsPerMinute <= 0 {
		opts.RequestsPerMinute = DefaultRequestsPerMinute
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	perMinute := opts.RequestsPerMinute
	return &Client{
		name: name,
		// A platform's API does not redirect; one that does is not
		// followed past safehttp's checks and bound.
		http:    safehttp.New(safehttp.Options{AllowPrivateNetworks: opts.AllowPrivateNetworks, Timeout: opts.Timeout}),
		budget:  rate.NewLimiter(rate.Limit(float64(perMinute)/60), perMinute),
		maxBody: opts.MaxBody,
		now:     time.Now,
	}
}

// Name is the platform the client speaks to.
func (c *Client) Name() string { return c.name }

// Response is a platform's answer, its body read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends req once the budget allows and the platform is not backed off,
// and reads the answer. A 429 backs the platform off until the time its
// headers name (Retry-After, x-rate-limit-reset) and is a RateLimitError;
// every other status is the caller's to read.
func (c *Client) Do(req *http.Request) (Response, error) {
	ctx := req.Context()
	if err := c.wait(ctx); err != nil {
		return Response{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s %s: %w", c.name, req.Method, req.URL.Path, withoutURL(err))
	}
	defer resp.Body.Close()
	body, err := safehttp.ReadBody(resp, c.maxBody)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s %s: read answer: %w", c.name, req.Method, req.URL.Path, withoutURL(err))
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return Response{}, c.BackOff(ResetOf(resp.Header, c.now()))
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// wait holds a request until the budget has room for it. A platform that
// is backed off, or a budget that would outlast the context, fails at once.
func (c *Client) wait(ctx context.Context) error {
	if err := c.backedOff(); err != nil {
		return err
	}
	r := c.budget.Reserve()
	delay := r.Delay()
	if deadline, ok := ctx.Deadline(); ok && c.now().Add(delay).After(deadline) {
		r.Cancel()
		return &RateLimitError{Platform: c.name, Until: c.now().Add(delay)}
	}
	if delay == 0 {
		return nil
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		r.Cancel()
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (c *Client) backedOff() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now().Before(c.until) {
		return &RateLimitError{Platform: c.name, Until: c.until}
	}
	return nil
}

// BackOff stops every request to the platform until until (bounded by
// maxBackOff) and returns the RateLimitError saying so. Providers whose
// platform signals limits in its own way (Facebook's error codes) call it
// themselves.
func (c *Client) BackOff(until time.Time) error {
	now := c.now()
	if until.Before(now.Add(time.Second)) {
		until = now.Add(time.Second)
	}
	if until.After(now.Add(maxBackOff)) {
		until = now.Add(maxBackOff)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if until.After(c.until) {
		c.until = until
	}
	return &RateLimitError{Platform: c.name, Until: c.until}
}

// ResetOf is when a rate-limited platform takes requests again, from the
// first header that says: Retry-After (seconds or an HTTP date), then
// x-rate-limit-reset (Unix seconds, Twitter's); else a minute from now.
func ResetOf(h http.Header, now time.Time) time.Time {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s >= 0 {
			return now.Add(time.Duration(s) * time.Second)
		}
		if t, err := http.ParseTime(v); err == nil {
			return t
		}
	}
	if v := strings.TrimSpace(h.Get("x-rate-limit-reset")); v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil && s > 0 {
			return time.Unix(s, 0)
		}
	}
	return now.Add(defaultBackOff)
}

// withoutURL drops the URL net/http puts in its errors: a query may carry
// a credential, and the caller names the path itself.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

// Endpoint joins a base URL (which may end in a path, like Graph API's
// /v21.0) and a path, and adds query parameters.
func Endpoint(base, path string, query url.Values) string {
	u := strings.TrimRight(base, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	return u
}

// Secret is a credential from the environment. It prints as "[redacted]"
// however it is formatted or logged, so that a configuration dumped into a
// log shows none.
type Secret string

// Reveal is the credential itself, for the one header that carries it.
func (s Secret) Reveal() string { return string(s) }

func (s Secret) String() string { return "[redacted]" }

// GoString keeps %#v from printing it.
func (s Secret) GoString() string { return "[redacted]" }

// MarshalText keeps encoders (JSON, slog) from printing it.
func (s Secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// Set reports whether the credential was given.
func (s Secret) Set() bool { return strings.TrimSpace(string(s)) != "" }
