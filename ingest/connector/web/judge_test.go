package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"code.dny.dev/ssrf"

	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/ingest/extract"
	"github.com/feedsvc/feedsvc/internal/safehttp"
)

// fetchErr wraps err the way crawl.Client.FetchDocument does.
func fetchErr(err error) error {
	return fmt.Errorf("document: fetch https://news.example.com/a: %w", err)
}

func status(code int, retryAfter time.Duration) error {
	return fetchErr(&crawl.StatusError{URL: "https://news.example.com/a", StatusCode: code, RetryAfter: retryAfter})
}

func robotsUnreadable() error {
	return fetchErr(fmt.Errorf("%w: %w", crawl.ErrRobotsUnavailable, status(503, 0)))
}

func TestFetchFailuresAreJudgedPermanentOnlyWhenAskingAgainCannotHelp(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		permanent bool
	}{
		{"robots.txt that cannot be read is transient", robotsUnreadable(), false},
		{"a 500 is transient", status(500, 0), false},
		{"a 503 is transient", status(503, time.Minute), false},
		{"a 408 is transient", status(408, 0), false},
		{"a 429 is transient", status(429, 0), false},
		{"a timeout is transient", fetchErr(fmt.Errorf("timed out after 15s: %w", context.DeadlineExceeded)), false},
		{"a refused connection is transient", fetchErr(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), false},
		{"an unknown host is transient", fetchErr(&net.DNSError{Err: "no such host", Name: "news.example.com", IsNotFound: true}), false},
		{"an unrecognised error is transient", fetchErr(errors.New("something odd")), false},
		{"a 404 is permanent", status(404, 0), true},
		{"a 410 is permanent", status(410, 0), true},
		{"a 403 is permanent", status(403, 0), true},
		{"a redirect that cannot be followed is permanent", status(301, 0), true},
		{"a page too large is permanent", fetchErr(fmt.Errorf("read: %w", safehttp.ErrTooLarge)), true},
		{"a page that is not HTML is permanent", fetchErr(extract.ErrNotHTML), true},
		{"a page robots.txt disallows is permanent", fetchErr(crawl.ErrDisallowed), true},
		{"a redirect loop is permanent", fetchErr(safehttp.ErrTooManyRedirects), true},
		{"a page without a title is permanent", fmt.Errorf("article: %w", extract.ErrNoTitle), true},
		{"a page that cannot be parsed is permanent", fmt.Errorf("article: %w", extract.ErrUnparsable), true},
		{"an address the crawler may not dial is permanent", fetchErr(&net.OpError{Op: "dial", Net: "tcp", Err: ssrf.ErrProhibitedIP}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := connector.JudgementOf(judge(tt.err)).Permanent; got != tt.permanent {
				t.Errorf("judged %v permanent: %v, want %v", tt.err, got, tt.permanent)
			}
		})
	}
}

func TestFailuresAboutTheWholeSiteAreJudgedSoWithWhatTheSiteAsked(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want connector.Judgement
	}{
		{"robots.txt that cannot be read concerns every page", robotsUnreadable(), connector.Judgement{SourceWide: true}},
		{"a 429 asks the whole site to be left alone as long as it said", status(429, 2*time.Minute),
			connector.Judgement{SourceWide: true, RetryAfter: 2 * time.Minute}},
		{"a 503 is the page's, with the site's Retry-After", status(503, time.Minute), connector.Judgement{RetryAfter: time.Minute}},
		{"a 404 is the page's alone", status(404, 0), connector.Judgement{Permanent: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := connector.JudgementOf(judge(tt.err)); got != tt.want {
				t.Errorf("judged %+v, want %+v", got, tt.want)
			}
		})
	}
}
