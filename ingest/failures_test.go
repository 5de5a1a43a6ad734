package ingest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/connector"
)

// failure is a fetch error as its connector judged it (the web
// connector's judgements are tested in connector/web).
func failure(msg string, j connector.Judgement) error {
	return connector.Judged(fmt.Errorf("document: fetch https://news.example.com/a: %s", msg), j)
}

func TestFetchFailuresArePermanentExactlyWhenTheirConnectorJudgedThemSo(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want failureKind
	}{
		{"a failure judged permanent is permanent", failure("HTTP 404", connector.Judgement{Permanent: true}), permanentFailure},
		{"a failure judged otherwise is transient", failure("HTTP 503", connector.Judgement{RetryAfter: time.Minute}), transientFailure},
		{"a failure about the whole source is transient", failure("HTTP 429", connector.Judgement{SourceWide: true}), transientFailure},
		{"a failure nobody judged is transient", errors.New("something odd"), transientFailure},
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
	down := fetch{transientFailure, failure("HTTP 503", connector.Judgement{}), true}
	knownBad := fetch{transientFailure, failure("HTTP 500", connector.Judgement{}), false}
	gone := fetch{permanentFailure, failure("HTTP 404", connector.Judgement{Permanent: true}), true}
	stored := fetch{storeFailure, errors.New("database is restarting"), true}
	robots := fetch{transientFailure, failure("robots.txt unavailable", connector.Judgement{SourceWide: true}), true}
	limited := fetch{transientFailure, failure("HTTP 429", connector.Judgement{SourceWide: true, RetryAfter: 2 * time.Minute}), false}
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
	h.add(transientFailure, failure("connection reset", connector.Judgement{}), true)
	h.add(transientFailure, failure("HTTP 503", connector.Judgement{RetryAfter: 3 * time.Minute}), true)
	h.add(transientFailure, failure("HTTP 503", connector.Judgement{RetryAfter: time.Minute}), true)
	err := h.verdict()
	if connector.JudgementOf(err).RetryAfter != 3*time.Minute {
		t.Fatalf("verdict %v does not carry the 3m Retry-After", err)
	}
	w := &Worker{cfg: Config{RetryBase: time.Second, RetryMax: 2 * time.Second}}
	if d, reason := w.failureDelay(1, err); d != 3*time.Minute || reason != "retryAfter" {
		t.Errorf("the source waits %s for %q, want the site's 3m for retryAfter", d, reason)
	}
	if d, reason := w.failureDelay(1, failure("connection reset", connector.Judgement{})); d > 2*time.Second || reason != "backoff" {
		t.Errorf("without Retry-After the source waits %s for %q, want at most the 2s backoff", d, reason)
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
