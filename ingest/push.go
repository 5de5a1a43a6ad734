package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/internal/lease"
)

// ErrSourceBusy means a poll of the source holds its crawl lease: the
// pushed candidates are to be offered again shortly, once it is done (the
// poll may have read the feed before the entries were published).
var ErrSourceBusy = errors.New("the source is being polled")

// Pushed is what IngestPushed did.
type Pushed struct {
	// Candidates is how many the push named; Skipped how many were seen
	// before (or out of the window, or past MaxFetchesPerCrawl: the next
	// poll lists those again).
	Candidates, Skipped int
	// NewArticles and Items count what it recorded and added to feeds.
	NewArticles, Items int
	// Failed counts the candidates that failed (recorded for the next
	// poll to retry, as a poll's are).
	Failed int
}

// IngestPushed ingests the candidates a source pushed (the entries of a
// feed a WebSub hub distributed) the way a poll ingests what its listings
// name: those the source has seen are skipped, the rest are fetched and
// recorded as facts of the source and added to its feeds by the same steps
// (processCandidate), so an entry pushed and later polled is one item.
// It holds the source's crawl lease meanwhile, whether or not the source
// is due, and leaves its schedule as it is: polling goes on as the
// fallback. ErrSourceBusy means a poll holds the lease.
func (w *Worker) IngestPushed(ctx context.Context, sourceID uuid.UUID, cands []connector.Candidate) (Pushed, error) {
	out := Pushed{Candidates: len(cands)}
	atts, err := w.attachments.OfSource(ctx, sourceID)
	if err != nil {
		return out, err
	}
	var earliest time.Time
	var details *domain.SourceDetails
	for _, a := range atts {
		if !a.Enabled() {
			continue
		}
		if details == nil {
			d, err := a.SourceDetails()
			if err != nil {
				return out, err
			}
			details = &d
		}
		if s := a.AcceptingSince(); earliest.IsZero() || s.Before(earliest) {
			earliest = s
		}
	}
	if details == nil {
		// No feed takes the source's articles now.
		out.Skipped = len(cands)
		return out, nil
	}
	conn, ok := w.connectors.For(details.SourceType)
	if !ok {
		return out, fmt.Errorf("source %s: no connector reads %q sources", sourceID, details.SourceType)
	}
	since := w.now().Add(-domain.BackfillWindow)
	if earliest.After(since) {
		since = earliest
	}

	// The crawl lease without the due condition: a push runs whenever it
	// comes, but never beside a poll of the same source.
	leases := w.store.Pushes
	held, err := leases.Claim(ctx, sourceID)
	if err != nil {
		return out, err
	}
	if !held && w.releases.has(sourceID) {
		// The poll holding the source is over, but its release waits in
		// the queue for the schedule loop's next turn, up to a Tick away
		// (release): a push right after a poll would wait that long, over
		// the second a push has. It writes the queue itself. A backlog
		// among the queued crawls is then claimed at the loop's next tick
		// rather than at once.
		w.flushReleases(ctx)
		if held, err = leases.Claim(ctx, sourceID); err != nil {
			return out, err
		}
	}
	if !held {
		return out, ErrSourceBusy
	}
	pushCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopRenew := leases.Keep(pushCtx, sourceID, cancel)
	defer func() {
		stopRenew()
		rctx, rcancel := lease.ReleaseContext()
		defer rcancel()
		if err := leases.Release(rctx, sourceID); err != nil {
			w.log.Error("releasing source after a push failed", "source_id", sourceID, "err", err)
		}
	}()

	stats := &crawlStats{}
	todo, _, err := w.selectCandidates(pushCtx, leased{SourceID: sourceID}, mergeCandidates(cands), since, stats)
	if err != nil {
		return out, err
	}
	var mu sync.Mutex
	var failures []candidateFailure
	sem := make(chan struct{}, articlesAtOnce)
	var wg sync.WaitGroup
	for _, c := range todo {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			kind, err := w.processCandidate(pushCtx, conn, sourceID, c, listedDocument, nil, stats)
			if kind != 0 && pushCtx.Err() == nil {
				mu.Lock()
				failures = append(failures, candidateFailure{cand: c, kind: kind, err: err})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if pushCtx.Err() != nil {
		return out, pushCtx.Err()
	}
	// Failures count as a poll's do while the site answers: the next poll
	// retries them.
	w.recordFailures(pushCtx, sourceID, failures, true)
	out.Skipped, out.NewArticles, out.Items, out.Failed = stats.Skipped, stats.NewArticles, stats.Items, stats.Failed
	w.log.Info("push ingested", "source_id", sourceID, "candidates", out.Candidates, "skipped", out.Skipped,
		"new_articles", out.NewArticles, "items_added", out.Items, "errors", out.Failed)
	return out, nil
}
