package crawl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/extract"
	"github.com/feedsvc/feedsvc/internal/safehttp"
)

var (
	// ErrDisallowed means robots.txt forbids the URL for our user agent: a
	// lasting answer, the URL should not be retried soon.
	ErrDisallowed = errors.New("disallowed by robots.txt")
	// ErrRobotsUnavailable means robots.txt could not be read (5xx, 429,
	// network error), so nothing on the site may be fetched for now: a
	// transient failure to retry with backoff, unlike ErrDisallowed.
	ErrRobotsUnavailable = errors.New("robots.txt unavailable")
	// ErrNotModified means a conditional request for a document was
	// answered 304: it is what it was when its validators were kept.
	ErrNotModified = errors.New("not modified")
)

// Response is a fully read HTTP response: the document (whose Body is
// empty when NotModified) and how it was answered. Its Validators are the
// response's own, or the request's when a 304 omits them, so callers can
// always store what they get back.
type Response struct {
	document.Document
	StatusCode  int
	NotModified bool
	// Link holds the response's Link header values (RFC 8288), where a
	// feed may name its WebSub hub and self URL (feedlinks.go).
	Link []string
}

// StatusError reports a non-2xx, non-304 response.
type StatusError struct {
	URL        string
	StatusCode int
	// RetryAfter is the server's Retry-After hint (on 429 and 503), zero
	// when absent; the scheduler should wait at least this long.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode))
}

// Permanent reports whether err is a lasting answer about the URL: the
// server answered, or our own policy refused, and asking again will not
// change it. That is a 4xx other than 408 and 429 (and a 3xx that could not
// be followed), a body too large, a page that is not HTML or that extract
// cannot read (no title, unparsable), a URL robots.txt disallows, too many
// redirects, a scheme other than http(s), and an address the crawler may
// not dial (safehttp refuses them all). Everything else may pass: 5xx, 408, 429, robots.txt unreadable,
// timeouts, connection, DNS and TLS failures, cancellation, and anything
// unrecognised.
func Permanent(err error) bool {
	var se *StatusError
	var ne net.Error
	switch {
	case err == nil:
		return false
	// First, as it wraps whatever made robots.txt unreadable.
	case errors.Is(err, ErrRobotsUnavailable):
		return false
	case errors.As(err, &se):
		return se.StatusCode != http.StatusRequestTimeout && se.StatusCode != http.StatusTooManyRequests && se.StatusCode < 500
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), errors.As(err, &ne) && ne.Timeout():
		return false
	}
	return errors.Is(err, safehttp.ErrTooLarge) || errors.Is(err, extract.ErrNotHTML) || errors.Is(err, ErrDisallowed) ||
		errors.Is(err, safehttp.ErrTooManyRedirects) || errors.Is(err, safehttp.ErrUnsupportedScheme) ||
		errors.Is(err, extract.ErrNoTitle) || errors.Is(err, extract.ErrUnparsable) || safehttp.Refused(err)
}

// Get fetches rawURL, conditionally when cond carries validators. It does not
// consult robots.txt, so that robots.txt itself and the sitemaps and feeds a
// site publishes for machines can be read; use GetAllowed for pages.
func (c *Client) Get(ctx context.Context, rawURL string, cond document.Validators) (*Response, error) {
	return c.fetch(ctx, rawURL, cond, c.opts.MaxBodyBytes)
}

// GetAllowed is Get for pages: it first checks robots.txt, and checks it
// again for every redirect target. Refusals wrap ErrDisallowed, or
// ErrRobotsUnavailable when robots.txt could not be read.
func (c *Client) GetAllowed(ctx context.Context, rawURL string, cond document.Validators) (*Response, error) {
	if err := c.checkRobots(ctx, rawURL); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	return c.fetch(withRobots(ctx), rawURL, cond, c.opts.MaxBodyBytes)
}

// robotsKey marks a request context whose redirects must pass robots.txt.
type robotsKey struct{}

func withRobots(ctx context.Context) context.Context {
	return context.WithValue(ctx, robotsKey{}, true)
}

// fetch is Get with an explicit body limit, so that sitemaps can be allowed
// more than pages.
func (c *Client) fetch(ctx context.Context, rawURL string, cond document.Validators, limit int64) (*Response, error) {
	req, err := c.newRequest(ctx, rawURL, cond)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		err = unwrapURLError(err)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("fetch %s: timed out after %v: %w", rawURL, c.opts.Timeout, err)
		}
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	return readResponse(resp, cond, limit)
}

func (c *Client) newRequest(ctx context.Context, rawURL string, cond document.Validators) (*http.Request, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parse URL: %w", err)
	}
	if err := safehttp.CheckURL(u); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,application/rss+xml;q=0.9,application/atom+xml;q=0.9,*/*;q=0.8")
	if cond.ETag != "" {
		req.Header.Set("If-None-Match", cond.ETag)
	}
	if cond.LastModified != "" {
		req.Header.Set("If-Modified-Since", cond.LastModified)
	}
	return req, nil
}

// checkRedirect refuses, for robots-checked requests, redirect targets
// robots.txt disallows; safehttp has already bounded the chain and refused
// non-http(s) targets.
func (c *Client) checkRedirect(req *http.Request, _ []*http.Request) error {
	if checked, _ := req.Context().Value(robotsKey{}).(bool); !checked {
		return nil
	}
	// Free the previous hop's host slot before fetching robots.txt, which may
	// need a slot on the same host; net/http would only close it after this
	// function returns, and with PerHost 1 that would deadlock.
	if req.Response != nil {
		req.Response.Body.Close()
	}
	if err := c.checkRobots(req.Context(), req.URL.String()); err != nil {
		return fmt.Errorf("redirect to %s: %w", req.URL, err)
	}
	return nil
}

// unwrapURLError drops net/http's *url.Error wrapper, whose message repeats
// the method and URL that our own wrapping already names.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func readResponse(resp *http.Response, cond document.Validators, limit int64) (*Response, error) {
	final := resp.Request.URL.String()
	out := &Response{
		Document: document.Document{
			URL:         final,
			ContentType: resp.Header.Get("Content-Type"),
			Validators:  document.Validators{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")},
		},
		StatusCode: resp.StatusCode,
		Link:       resp.Header.Values("Link"),
	}
	out.Validators.Fresh, out.Validators.Throttle = headerFreshness(resp.Header, time.Now())
	if resp.StatusCode == http.StatusNotModified {
		out.NotModified = true
		out.Validators = keepValidators(out.Validators, cond)
		return out, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &StatusError{URL: final, StatusCode: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	}
	body, err := safehttp.ReadBody(resp, limit)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", final, err)
	}
	out.Body = body
	return out, nil
}

// keepValidators fills validators a 304 omitted from the ones we sent: the
// resource is unchanged, so they are still valid.
func keepValidators(v, cond document.Validators) document.Validators {
	if v.ETag == "" {
		v.ETag = cond.ETag
	}
	if v.LastModified == "" {
		v.LastModified = cond.LastModified
	}
	return v
}

// retryAfter parses Retry-After as seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
