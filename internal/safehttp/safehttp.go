// Package safehttp is an HTTP client for requests to addresses that users
// supply (sites to crawl, webhook endpoints), which must not be able to
// point the service at its own network. Every dial, redirects included, is
// checked by code.dny.dev/ssrf after DNS resolution, so private, loopback,
// link-local and other special-purpose addresses are refused even behind a
// DNS name or a redirect; only http and https are spoken; redirects, time
// and body size are bounded.
//
// Politeness (robots.txt, per-host limits) is the crawler's business and
// is layered on top by package crawl.
package safehttp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// Defaults for zero Options fields.
const (
	DefaultTimeout      = 15 * time.Second
	DefaultMaxRedirects = 5
)

var (
	// ErrTooLarge means the body exceeded the caller's limit. Bodies are
	// never silently truncated: a cut-off document would be read as if it
	// were complete.
	ErrTooLarge = errors.New("response body too large")
	// ErrTooManyRedirects means the redirect chain exceeded MaxRedirects.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrUnsupportedScheme means the URL, or a redirect target, is not
	// http(s): file:, gopher: and friends are classic SSRF vectors.
	ErrUnsupportedScheme = errors.New("unsupported URL scheme")
)

// Options configures a client. Zero values mean the documented default.
type Options struct {
	// AllowPrivateNetworks disables the address check. Only for tests and
	// trusted deployments: with it, a user-supplied URL can reach internal
	// services.
	AllowPrivateNetworks bool
	// Timeout bounds each request (each redirect hop) from the moment the
	// transport gets it until its body is closed. Default 15s.
	Timeout time.Duration
	// MaxRedirects bounds redirects per request. Default 5; negative means
	// redirects are not followed (the caller sees the 3xx).
	MaxRedirects int
	// MaxIdleConnsPerHost is kept open per host for reuse; default 2.
	MaxIdleConnsPerHost int
	// Wrap, when set, wraps the guarded transport; the crawler holds a
	// per-host slot there, so that the timeout starts only once the slot is
	// granted.
	Wrap func(http.RoundTripper) http.RoundTripper
	// CheckRedirect, when set, is asked about each redirect once the
	// built-in checks passed.
	CheckRedirect func(req *http.Request, via []*http.Request) error
	// Control replaces the address check. Tests use it to allow exactly
	// their own loopback server and prove the check runs on redirects.
	Control func(network, address string, c syscall.RawConn) error
	// TLSConfig is for tests that must trust their own TLS servers.
	TLSConfig *tls.Config
}

// New returns a client. Unless opts.AllowPrivateNetworks is set (or
// opts.Control replaces it), every dial is checked by code.dny.dev/ssrf;
// any port is allowed, since sites do live on odd ports and the address is
// what matters.
func New(opts Options) *http.Client {
	opts = withDefaults(opts)
	control := opts.Control
	if control == nil && !opts.AllowPrivateNetworks {
		control = ssrf.New(ssrf.WithAnyPort()).Safe
	}
	dialer := &net.Dialer{Timeout: opts.Timeout, KeepAlive: 30 * time.Second, Control: control}
	var rt http.RoundTripper = &boundedTransport{timeout: opts.Timeout, base: &http.Transport{
		Proxy:                 nil, // a proxy would be dialled instead of the target, bypassing the check
		DialContext:           dialer.DialContext,
		TLSClientConfig:       opts.TLSConfig,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   opts.MaxIdleConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   opts.Timeout,
		ResponseHeaderTimeout: opts.Timeout,
	}}
	if opts.Wrap != nil {
		rt = opts.Wrap(rt)
	}
	return &http.Client{Transport: rt, CheckRedirect: checkRedirect(opts)}
}

func withDefaults(o Options) Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.MaxIdleConnsPerHost <= 0 {
		o.MaxIdleConnsPerHost = 2
	}
	return o
}

// checkRedirect bounds the chain and refuses non-http(s) targets before the
// caller's own check. The address needs no check here: each hop dials
// through the guarded dialer.
func checkRedirect(opts Options) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if opts.MaxRedirects < 0 {
			return http.ErrUseLastResponse
		}
		if len(via) > opts.MaxRedirects {
			return fmt.Errorf("%w (%d)", ErrTooManyRedirects, opts.MaxRedirects)
		}
		if err := CheckURL(req.URL); err != nil {
			return fmt.Errorf("redirect to %s: %w", req.URL, err)
		}
		if opts.CheckRedirect != nil {
			return opts.CheckRedirect(req, via)
		}
		return nil
	}
}

// CheckURL refuses what the client must never request: a scheme other
// than http(s), or no host.
func CheckURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w %q", ErrUnsupportedScheme, u.Scheme)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("URL %q has no host", u.String())
	}
	return nil
}

// Refused reports whether err is the address check refusing a dial.
func Refused(err error) bool {
	return errors.Is(err, ssrf.ErrProhibitedIP) || errors.Is(err, ssrf.ErrProhibitedPort) ||
		errors.Is(err, ssrf.ErrProhibitedNetwork)
}

// ReadBody reads the whole body, failing with ErrTooLarge as soon as it is
// known to exceed limit (from Content-Length, or after limit+1 bytes). The
// transport has already undone gzip, so the bound is on real content.
func ReadBody(resp *http.Response, limit int64) ([]byte, error) {
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: Content-Length %d exceeds %d bytes", ErrTooLarge, resp.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	return body, nil
}

// boundedTransport gives every request, redirect hops included, a timeout
// that lasts until its body is closed, so that a server trickling a body
// cannot hold a request forever.
type boundedTransport struct {
	base    http.RoundTripper
	timeout time.Duration
}

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &closingBody{ReadCloser: resp.Body, close: cancel}
	return resp, nil
}

// closingBody runs close after the body is closed.
type closingBody struct {
	io.ReadCloser
	close func()
}

func (b *closingBody) Close() error {
	err := b.ReadCloser.Close()
	b.close()
	return err
}
