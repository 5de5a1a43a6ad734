package ingest

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/connector"
)

// How a candidate's failure is judged. A site that is down for half an hour
// must not cost the articles it listed meanwhile, so only failures that are
// the page's own and lasting count towards giving a URL up quickly; failures
// that say the site could not answer count against the source instead,
// whose crawl then fails and backs off. The source's connector judges its
// own errors (connector.Judgement: for the web, a 4xx is permanent, a 429
// concerns the whole site); the rules below are the same for every kind
// of source.
//
// The rules:
//
//   - Permanent failures (judged permanent by the connector: the source
//     answered, and the answer will not change by asking again, e.g. a
//     404, a page too large or disallowed by robots.txt; a document no
//     article can be read from; content the domain rejects) count towards
//     maxURLFailures, after which the URL is given up.
//   - Transient failures (5xx, timeouts, connection errors, and anything
//     unrecognised, which is assumed to pass) do not count while the
//     source is down: they are evidence about the site. They count only in
//     a crawl that was judged healthy, i.e. when the rest of the site
//     answered and this page alone failed; such a URL is retried every
//     poll and given up after transientLimit of them, about
//     Config.GiveUpAfter (24h) of polls.
//   - A crawl of the source fails when any fetch failed in a way the
//     connector judged source-wide (for the web: robots.txt unreadable, as
//     no page may be fetched without it, or a 429, which is about our
//     request rate), or when at least minOutageFailures voting fetches failed
//     transiently and no fetch got an answer. One answered page proves the
//     site serves pages, so its other failures are the pages' own; and a
//     single failing page is too little evidence, so one bad page never
//     fails the source. "None answered" rather than "most failed", because
//     with a majority rule a few broken pages would outvote every new
//     article of a quiet site and hold its crawls in backoff for a day.
//     After a site-wide failure no further article is fetched in that
//     crawl: the rest would be refused too, or add to the rate the site
//     asked us to lower.
//   - Votes: a URL that already has counted failures is a known bad page
//     (it kept failing while the site answered), so its transient failures
//     do not vote. Without this a site with two broken pages and nothing
//     new to fetch would back off forever. Failures recorded while the
//     source was down are not counted, so the URLs of an outage keep voting
//     and the backoff keeps growing until the site answers again. What
//     remains ambiguous: two or more new pages that all fail, with nothing
//     else fetched, look exactly like an outage, and the source backs off
//     until a page answers again.

// maxURLFailures is how many counted failures a candidate URL may have
// when it fails permanently (a 404, too large, not HTML: see the rules
// above) before the crawler stops trying it: such pages seldom recover,
// and each retry costs a request to the site. It is also the least number
// of polls a transiently failing URL is retried.
const maxURLFailures = 3

// transientLimit is how many counted failures a URL that fails transiently
// may reach before it is given up: GiveUpAfter in polls, because a URL that
// fails while its site answers is retried once per poll, and polls in which
// the site was down do not count. At the defaults (24h, 10m) that is 144
// requests over a day for a page that never recovers.
func (w *Worker) transientLimit() int {
	n := int((w.cfg.GiveUpAfter + w.cfg.PollInterval - 1) / w.cfg.PollInterval)
	return max(n, maxURLFailures)
}

// minOutageFailures is how many voting fetches must fail transiently, with
// none answered, for the source's crawl to fail.
const minOutageFailures = 2

// failureKind classifies a candidate's failure.
type failureKind int

const (
	// transientFailure: the site gave no usable answer, which may change
	// at the next poll.
	transientFailure failureKind = iota + 1
	// permanentFailure: the page's own lasting problem.
	permanentFailure
	// storeFailure: the page was read but recording it failed on our
	// side; it does not speak against the site, and counts like a
	// transient failure against the URL so that a page that can never be
	// stored is given up in time.
	storeFailure
)

func (k failureKind) String() string {
	switch k {
	case transientFailure:
		return "transient"
	case permanentFailure:
		return "permanent"
	case storeFailure:
		return "store"
	}
	return fmt.Sprintf("failureKind(%d)", int(k))
}

// classifyFetch judges an error of a connector's Fetch by the connector's
// judgement. Anything it did not judge permanent is transient: the network
// or the source may recover, and the transient limit still bounds how
// long it is retried.
func classifyFetch(err error) failureKind {
	if connector.JudgementOf(err).Permanent {
		return permanentFailure
	}
	return transientFailure
}

// classifyStore judges an error of recording a fetched article: content the
// domain refuses is the page's problem, anything else is ours.
func classifyStore(err error) failureKind {
	var ve *domain.ValidationError
	if errors.As(err, &ve) {
		return permanentFailure
	}
	return storeFailure
}

// crawlHealth tallies the article fetches of one crawl for the verdict on
// the source. It is safe for concurrent use.
type crawlHealth struct {
	mu        sync.Mutex
	fetches   int
	answered  int
	transient int // voting transient failures
	siteWide  error
	// worst is the voting transient failure reported as the crawl's error:
	// the one whose Retry-After asks for the longest wait, else the first.
	worst      error
	worstAfter time.Duration
}

// add records a fetch: kind is zero for a success; votes is false for a
// known bad page (see the rules above).
func (h *crawlHealth) add(kind failureKind, err error, votes bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fetches++
	switch {
	case kind == 0, kind == permanentFailure, kind == storeFailure:
		h.answered++
	case connector.JudgementOf(err).SourceWide:
		if h.siteWide == nil {
			h.siteWide = err
		}
	case votes:
		h.transient++
		after := connector.JudgementOf(err).RetryAfter
		if h.worst == nil || after > h.worstAfter {
			h.worst, h.worstAfter = err, after
		}
	}
}

// siteDown reports a site-wide failure, after which the crawl fetches no
// more articles.
func (h *crawlHealth) siteDown() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.siteWide != nil
}

// verdict is nil when the crawl succeeded, else why the source failed; it
// wraps the underlying error so that release honours its Retry-After.
func (h *crawlHealth) verdict() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.siteWide != nil:
		return fmt.Errorf("the site refused its articles: %w", h.siteWide)
	case h.transient >= minOutageFailures && h.answered == 0:
		return fmt.Errorf("the site answered none of %d article fetches (%d failed transiently): %w",
			h.fetches, h.transient, h.worst)
	}
	return nil
}
