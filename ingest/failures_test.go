package ingest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"code.dny.dev/ssrf"

	"github.com/feedsvc/feedsvc/crawl"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/extract"
)

// fetchErr wraps err the way crawl.Client.FetchArticle does.
func fetchErr(err error) error {
	return fmt.Errorf("article: fetch https://news.example.com/a: %w", err)
}

func status(code int, retryAfter time.Duration) error {
	return fetchErr(&crawl.StatusError{URL: "https://news.example.com/a", StatusCode: code, RetryAfter: retryAfter})
}

func TestFetchFailuresAreJudgedPermanentOnlyWhenAskingAgainCannotHelp(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want failureKind
	}{
		{"robots.txt that cannot be read is transient", fetchErr(fmt.Errorf("%w: %w", crawl.ErrRobotsUnavailable, status(503, 0))), transientFailure},
		{"a 500 is transient", status(500, 0), transientFailure},
		{"a 503 is transient", status(503, time.Minute), transientFailure},
		{"a 408 is transient", status(408, 0), transientFailure},
		{"a 429 is transient", status(429, 0), transientFailure},
		{"a timeout is transient", fetchErr(fmt.Errorf("timed out after 15s: %w", context.DeadlineExceeded)), transientFailure},
		{"a refused connection is transient", fetchErr(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), transientFailure},
		{"an unknown host is transient", fetchErr(&net.DNSError{Err: "no such host", Name: "news.example.com", IsNotFound: true}), transientFailure},
		{"an unrecognised error is transient", fetchErr(errors.New("something odd")), transientFailure},
		{"a 404 is permanent", status(404, 0), permanentFailure},
		{"a 410 is permanent", status(410, 0), permanentFailure},
		{"a 403 is permanent", status(403, 0), permanentFailure},
		{"a redirect that cannot be followed is permanent", status(301, 0), permanentFailure},
		{"a page too large is permanent", fetchErr(fmt.Errorf("read: %w", crawl.ErrTooLarge)), permanentFailure},
		{"a page that is not HTML is permanent", fetchErr(crawl.ErrNotHTML), permanentFailure},
		{"a page robots.txt disallows is permanent", fetchErr(crawl.ErrDisallowed), permanentFailure},
		{"a redirect loop is permanent", fetchErr(crawl.ErrTooManyRedirects), permanentFailure},
		{"a page without a title is permanent", fmt.Errorf("article: %w", extract.ErrNoTitle), permanentFailure},
		{"a page that cannot be parsed is permanent", fmt.Errorf("article: %w", extract.ErrUnparsable), permanentFailure},
		{"an address the crawler may not dial is permanent", fetchErr(&net.OpError{Op: "dial", Net: "tcp", Err: ssrf.ErrProhibitedIP}), permanentFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classifyFetch(tt.err); got != tt.want {
				t.Errorf("classifyFetch(%v) = %s, want %s", tt.err, got, tt.want)
			}
		})
	}
}

func TestStoreFailuresArePermanentOnlyWhenTheContentIsRefused(t *testing.T) {
	if got := classifyStore(fmt.Errorf("discover: %w", &domain.ValidationError{Field: "title", Issue: "too long"})); got != permanentFailure {
		t.Errorf("a validation error is %s, want permanent", got)
	}
	if got := classifyStore(errors.New("connection reset by peer")); got != storeFailure {
		t.Errorf("a database error is %s, want store", got)
	}
}

func TestACrawlFailsOnlyWhenTheSiteAnsweredNoneOfItsArticles(t *testing.T) {
	type fetch struct {
		kind  failureKind
		err   error
		votes bool
	}
	ok := fetch{votes: true}
	down := fetch{transientFailure, status(503, 0), true}
	knownBad := fetch{transientFailure, status(500, 0), false}
	gone := fetch{permanentFailure, status(404, 0), true}
	stored := fetch{storeFailure, errors.New("database is restarting"), true}
	robots := fetch{transientFailure, fetchErr(fmt.Errorf("%w: %w", crawl.ErrRobotsUnavailable, status(503, 0))), true}
	limited := fetch{transientFailure, status(429, 2*time.Minute), false}
	tests := []struct {
		name    string
		fetches []fetch
		fails   bool
	}{
		{"a crawl that fetched nothing succeeds", nil, false},
		{"a crawl whose pages all answered succeeds", []fetch{ok, ok}, false},
		{"one page that fails transiently does not fail the source", []fetch{down}, false},
		{"pages that fail while another answers do not fail the source", []fetch{down, down, down, ok}, false},
		{"a permanent failure is an answer from the site", []fetch{down, down, gone}, false},
		{"a page read but not stored is an answer from the site", []fetch{down, down, stored}, false},
		{"known bad pages do not vote, however many", []fetch{knownBad, knownBad, knownBad}, false},
		{"two pages that fail transiently with none answered fail the source", []fetch{down, down}, true},
		{"a known bad page adds nothing to an outage's votes", []fetch{down, knownBad}, false},
		{"robots.txt unreadable fails the source even if a page answered", []fetch{ok, robots}, true},
		{"a 429 fails the source even from a known bad page", []fetch{ok, limited}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &crawlHealth{}
			for _, f := range tt.fetches {
				h.add(f.kind, f.err, f.votes)
			}
			if err := h.verdict(); (err != nil) != tt.fails {
				t.Errorf("verdict = %v, want failed %v", err, tt.fails)
			}
		})
	}
}

func TestAFailedCrawlReportsTheLongestRetryAfterItWasAsked(t *testing.T) {
	h := &crawlHealth{}
	h.add(transientFailure, fetchErr(errors.New("connection reset")), true)
	h.add(transientFailure, status(503, 3*time.Minute), true)
	h.add(transientFailure, status(503, time.Minute), true)
	err := h.verdict()
	var se *crawl.StatusError
	if !errors.As(err, &se) || se.RetryAfter != 3*time.Minute {
		t.Fatalf("verdict %v does not carry the 3m Retry-After", err)
	}
	w := &Worker{cfg: Config{RetryBase: time.Second, RetryMax: 2 * time.Second}}
	if d := w.failureDelay(1, err); d != 3*time.Minute {
		t.Errorf("the source waits %s, want the site's 3m", d)
	}
}

func TestTransientFailuresAreToleratedForAboutGiveUpAfterOfPolls(t *testing.T) {
	tests := []struct {
		name        string
		poll, after time.Duration
		want        int
	}{
		{"the defaults allow a day of 10-minute polls", DefaultPollInterval, DefaultGiveUpAfter, 144},
		{"a span that is not a whole number of polls rounds up", time.Minute, 210 * time.Second, 4},
		{"never fewer polls than a permanent failure gets", time.Hour, time.Minute, maxURLFailures},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &Worker{cfg: Config{PollInterval: tt.poll, GiveUpAfter: tt.after}.withDefaults()}
			if got := w.transientLimit(); got != tt.want {
				t.Errorf("transientLimit = %d, want %d", got, tt.want)
			}
		})
	}
}
