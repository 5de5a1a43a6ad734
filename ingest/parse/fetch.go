package parse

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/internal/safehttp"
)

// FetchError is a page that could not be fetched. Reason says why in the
// service's own words: it never quotes the URL or anything the site sent,
// so it can be shown to the caller as is.
type FetchError struct {
	Reason string
	Err    error
}

func (e *FetchError) Error() string {
	return "the page could not be fetched: " + e.Reason + ": " + e.Err.Error()
}

func (e *FetchError) Unwrap() error { return e.Err }

// fetchFailed names why a fetch failed.
func fetchFailed(err error) *FetchError {
	return &FetchError{Reason: reason(err), Err: err}
}

func reason(err error) string {
	var status *crawl.StatusError
	var dns *net.DNSError
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	var netErr net.Error
	switch {
	// First: robots.txt is fetched first, so a refused address usually
	// shows as robots.txt unreadable.
	case safehttp.Refused(err):
		return "its address is not a public one (private, loopback and link-local addresses are refused)"
	case errors.Is(err, crawl.ErrRobotsUnavailable):
		return "the site's robots.txt could not be read, so nothing on the site may be fetched for now"
	case errors.Is(err, crawl.ErrDisallowed):
		return "the site's robots.txt does not allow fetching it"
	case errors.As(err, &status):
		return fmt.Sprintf("the server answered HTTP %d", status.StatusCode)
	case errors.Is(err, safehttp.ErrTooLarge):
		return fmt.Sprintf("it is larger than %d MiB", crawl.DefaultMaxBodyBytes>>20)
	case errors.Is(err, safehttp.ErrTooManyRedirects):
		return fmt.Sprintf("it redirects more than %d times", crawl.DefaultMaxRedirects)
	case errors.Is(err, safehttp.ErrUnsupportedScheme):
		return "it redirects to a URL that is not http or https"
	case errors.As(err, &dns):
		return "its host name could not be resolved"
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid), errors.As(err, &record):
		return "its TLS certificate or connection could not be verified"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "it did not answer in time"
	}
	return "the connection to its server failed"
}
