package crawl

import (
	"crypto/tls"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/feedsvc/feedsvc/internal/safehttp"
)

// Defaults for zero Options fields.
const (
	DefaultUserAgent       = "feedsvc/1.0 (+https://github.com/feedsvc/feedsvc)"
	DefaultTimeout         = safehttp.DefaultTimeout
	DefaultMaxBodyBytes    = 5 << 20
	DefaultMaxSitemapBytes = 50 << 20
	DefaultMaxRedirects    = safehttp.DefaultMaxRedirects
	DefaultPerHost         = 2
)

// Options configures a Client. Zero values mean the documented default.
type Options struct {
	// UserAgent is sent with every request; its product token (the part
	// before the first "/") is what robots.txt groups are matched against.
	UserAgent string
	// AllowPrivateNetworks disables the SSRF guard (safehttp). Only for
	// tests and trusted deployments: with it, a feed could point the
	// crawler at internal services.
	AllowPrivateNetworks bool
	// Timeout bounds each HTTP request (each redirect hop), from the moment
	// it gets its per-host slot until its body is read. Default 15s.
	Timeout time.Duration
	// MaxBodyBytes bounds a response body; a longer body is
	// safehttp.ErrTooLarge.
	// Default 5 MiB.
	MaxBodyBytes int64
	// MaxSitemapBytes is the body bound used for sitemaps, which may
	// legitimately be up to 50 MB. Default 50 MiB.
	MaxSitemapBytes int64
	// MaxRedirects bounds redirects per request. Default 5; negative means
	// redirects are not followed (the 3xx becomes a StatusError).
	MaxRedirects int
	// PerHost bounds concurrent in-flight requests per host. Default 2.
	PerHost int
}

// Client is a polite, SSRF-safe HTTP client for crawling: safehttp's
// client with robots.txt and per-host limits on top. It is safe for
// concurrent use; share one per process so per-host limits and the
// robots.txt cache are shared too.
type Client struct {
	opts   Options
	agent  string // robots.txt product token
	http   *http.Client
	robots *robotsCache
}

// New returns a Client. Unless opts.AllowPrivateNetworks is set, no private,
// loopback, link-local or other special-purpose address can be reached
// (see package safehttp).
func New(opts Options) *Client {
	return newClient(opts, nil, nil)
}

// newClient builds a Client with an explicit dial policy (nil keeps
// safehttp's) and TLS configuration; tests use it to prove that the policy
// is applied to redirects and to trust their TLS servers.
func newClient(opts Options, control func(network, address string, c syscall.RawConn) error, tlsConfig *tls.Config) *Client {
	opts = withDefaults(opts)
	c := &Client{opts: opts, agent: productToken(opts.UserAgent), robots: newRobotsCache()}
	limiter := newHostLimiter(opts.PerHost)
	c.http = safehttp.New(safehttp.Options{
		AllowPrivateNetworks: opts.AllowPrivateNetworks,
		Timeout:              opts.Timeout,
		MaxRedirects:         opts.MaxRedirects,
		MaxIdleConnsPerHost:  opts.PerHost,
		Wrap:                 func(rt http.RoundTripper) http.RoundTripper { return &politeTransport{base: rt, limiter: limiter} },
		CheckRedirect:        c.checkRedirect,
		Control:              control,
		TLSConfig:            tlsConfig,
	})
	return c
}

func withDefaults(o Options) Options {
	if strings.TrimSpace(o.UserAgent) == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxSitemapBytes <= 0 {
		o.MaxSitemapBytes = DefaultMaxSitemapBytes
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.PerHost <= 0 {
		o.PerHost = DefaultPerHost
	}
	return o
}

// productToken returns the robots.txt name of a User-Agent string:
// "feedsvc/1.0 (+https://...)" is "feedsvc".
func productToken(ua string) string {
	ua = strings.TrimSpace(ua)
	if i := strings.IndexAny(ua, "/ "); i > 0 {
		ua = ua[:i]
	}
	return strings.ToLower(ua)
}
