package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/crawl"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/extract"
)

const (
	// articlesAtOnce is how many articles of one source are fetched
	// concurrently; the crawl client's per-host limit applies on top.
	articlesAtOnce = 2
	// maxFetchesPerCrawl bounds one crawl, so that a site publishing its
	// whole archive at once is worked through over several polls instead of
	// one crawl holding a slot for hours. Newest candidates go first.
	maxFetchesPerCrawl = 200
	// storeTimeout bounds the database steps of one article.
	storeTimeout = 30 * time.Second
)

// crawlStats is what one crawl did, for the progress log.
type crawlStats struct {
	mu            sync.Mutex
	Listings      int
	ListingErrors int
	Candidates    int
	Skipped       int
	Fetched       int
	Failed        int
	NewArticles   int
	Items         int
	// Covered is the earliest date the source's crawls have looked back
	// to: the earliest active_since of its accepting attachments, since
	// each poll since then has looked back 14 days (or to that date).
	Covered time.Time
}

func (s *crawlStats) add(f func(*crawlStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// crawlLeased crawls a leased source, keeping the lease alive meanwhile, and
// releases it with the outcome.
func (w *Worker) crawlLeased(ctx context.Context, l lease) {
	start := time.Now()
	crawlCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopRenew := w.renewWhile(crawlCtx, func(c context.Context) (bool, error) { return w.renew(c, l.SourceID) }, cancel,
		"source "+l.SourceID.String())
	stats := &crawlStats{}
	err := w.crawlSource(crawlCtx, l, stats)
	stopRenew()

	how := succeeded
	switch {
	case crawlCtx.Err() != nil:
		// Shutdown or a lost lease: not the source's fault.
		how = interrupted
	case err != nil:
		how = failed
	}
	rctx, rcancel := releaseContext()
	defer rcancel()
	if rerr := w.release(rctx, l, how, stats.Covered, err); rerr != nil {
		w.log.Error("releasing source failed", "source_id", l.SourceID, "err", rerr)
	}
	attrs := []any{
		"source_id", l.SourceID, "listings", stats.Listings, "listing_errors", stats.ListingErrors,
		"candidates", stats.Candidates, "skipped", stats.Skipped, "fetched", stats.Fetched, "errors", stats.Failed,
		"new_articles", stats.NewArticles, "items_added", stats.Items, "duration", time.Since(start).Round(time.Millisecond),
	}
	switch how {
	case failed:
		w.log.Warn("crawl failed", append(attrs, "failures", l.Failures+1, "err", err)...)
	case interrupted:
		w.log.Info("crawl interrupted", attrs...)
	default:
		w.log.Info("crawl done", attrs...)
	}
}

// crawlSource lists a source's candidates, fetches those it has not seen and
// distributes the articles. It fails when the source itself cannot be read:
// discovery fails, every listing fails, or the site did not answer for its
// articles (see failures.go). A bad article never fails the source.
func (w *Worker) crawlSource(ctx context.Context, l lease, stats *crawlStats) error {
	atts, err := w.attachmentsOf(ctx, l.SourceID)
	if err != nil {
		return err
	}
	var accepting []attachment
	for _, a := range atts {
		if a.enabled() {
			accepting = append(accepting, a)
		}
	}
	if len(accepting) == 0 {
		// Disabled or detached between the due query and the lease.
		return nil
	}
	details, err := accepting[0].details()
	if err != nil {
		return err
	}
	earliest := accepting[0].ActiveSince
	for _, a := range accepting[1:] {
		if a.ActiveSince.Before(earliest) {
			earliest = a.ActiveSince
		}
	}
	// Candidates need go no further back than the backfill window, nor
	// than any accepting attachment could take.
	since := w.now().Add(-domain.BackfillWindow)
	if earliest.After(since) {
		since = earliest
	}

	validators, err := w.loadListings(ctx, l.SourceID, since)
	if err != nil {
		return err
	}
	cands, err := w.candidates(ctx, l, details, since, validators, stats)
	if err != nil {
		return err
	}
	stats.Covered = earliest
	if err := w.pruneSeen(ctx, l.SourceID); err != nil {
		w.log.Warn("pruning seen URLs failed", "source_id", l.SourceID, "err", err)
	}
	// What failed before is retried whether or not its listing changed.
	retry, err := w.failedCandidates(ctx, l.SourceID)
	if err != nil {
		return err
	}
	todo, complete, err := w.selectCandidates(ctx, l.SourceID, mergeCandidates(append(cands, retry...)), since, stats)
	if err != nil {
		return err
	}

	known, err := w.failingURLs(ctx, l.SourceID, candidateURLs(todo))
	if err != nil {
		return err
	}
	health := &crawlHealth{}
	var mu sync.Mutex
	var failures []candidateFailure
	sem := make(chan struct{}, articlesAtOnce)
	var wg sync.WaitGroup
	for _, c := range todo {
		sem <- struct{}{}
		if ctx.Err() != nil || health.siteDown() {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			kind, err := w.processCandidate(ctx, l.SourceID, c, stats)
			if ctx.Err() != nil {
				return // shutdown is neither the URL's fault nor the site's
			}
			health.add(kind, err, !known[c.URL])
			if kind != 0 {
				mu.Lock()
				failures = append(failures, candidateFailure{cand: c, kind: kind, err: err})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	verdict := health.verdict()
	recorded := w.recordFailures(ctx, l.SourceID, failures, verdict == nil)
	if verdict == nil && recorded && complete {
		// Every candidate is dealt with: fetched, given up, or recorded to
		// be retried (see listings.go).
		if err := w.saveListings(ctx, l.SourceID, validators); err != nil {
			w.log.Warn("storing listing validators failed", "source_id", l.SourceID, "err", err)
		}
	}
	return verdict
}

// candidateFailure is a candidate that failed in this crawl.
type candidateFailure struct {
	cand crawl.Candidate
	kind failureKind
	err  error
}

func candidateURLs(cands []crawl.Candidate) []string {
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.URL
	}
	return out
}

// recordFailures counts the crawl's failed candidates against their URLs,
// once the crawl's verdict is known: transient failures count only when the
// source was healthy (see failures.go). It never fails the crawl: a lost
// record costs at most one more request, since the crawl then keeps its
// listings' validators from being stored and the next poll lists the URL
// again. It reports whether every failure was recorded.
func (w *Worker) recordFailures(ctx context.Context, sourceID uuid.UUID, failures []candidateFailure, healthy bool) bool {
	all := true
	for _, f := range failures {
		counted, limit := healthy, w.transientLimit()
		if f.kind == permanentFailure {
			counted, limit = true, maxURLFailures
		}
		n, gaveUp, err := w.recordFailure(ctx, sourceID, f.cand, f.err, counted, limit)
		if err != nil {
			w.log.Error("recording a failed URL failed", "source_id", sourceID, "url", f.cand.URL, "err", err)
			all = false
			continue
		}
		attrs := []any{"source_id", sourceID, "url", f.cand.URL, "kind", f.kind.String(), "failures", n, "err", f.err}
		switch {
		case gaveUp:
			w.log.Warn("article failed; giving up on it", attrs...)
		case !counted:
			w.log.Info("article failed while the site is down; will retry", attrs...)
		default:
			w.log.Info("article failed; will retry next poll", attrs...)
		}
	}
	return all
}

// listing is one place candidates come from.
type listing struct {
	kind string // sitemap, feed, index
	url  string
}

// candidates reads every listing of the source, conditionally with
// validators, and merges what they list; since only prunes the children of
// sitemap indexes, selectCandidates judges the candidates' dates. A failing
// listing is logged and skipped unless all fail.
func (w *Worker) candidates(ctx context.Context, l lease, d domain.SourceDetails, since time.Time, validators crawl.ValidatorStore, stats *crawlStats) ([]crawl.Candidate, error) {
	var listings []listing
	switch d.SourceType {
	case domain.SourceSite:
		site, err := w.site(ctx, l, d.Domain)
		if err != nil {
			return nil, err
		}
		for _, u := range site.Sitemaps {
			listings = append(listings, listing{"sitemap", u})
		}
		for _, u := range site.Feeds {
			listings = append(listings, listing{"feed", u})
		}
		if len(listings) == 0 {
			// A site without sitemaps or feeds can still be read through
			// the links of its home page.
			listings = append(listings, listing{"index", strings.TrimSuffix(site.BaseURL, "/") + "/"})
		}
	case domain.SourceSitemap:
		listings = append(listings, listing{"sitemap", d.URL})
	case domain.SourceSiteIndexPage:
		listings = append(listings, listing{"index", d.URL})
	default:
		return nil, fmt.Errorf("source type %q is not crawled", d.SourceType)
	}

	var out []crawl.Candidate
	var errs []error
	for _, li := range listings {
		var cands []crawl.Candidate
		var err error
		switch li.kind {
		case "sitemap":
			cands, err = w.client.SitemapCandidates(ctx, li.url, since, validators)
		case "feed":
			cands, err = w.client.FeedCandidates(ctx, li.url, validators)
		default:
			cands, err = w.client.IndexPageCandidates(ctx, li.url, validators)
		}
		stats.Listings++
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			stats.ListingErrors++
			errs = append(errs, fmt.Errorf("%s %s: %w", li.kind, li.url, err))
			w.log.Warn("listing failed", "source_id", l.SourceID, "kind", li.kind, "url", li.url, "err", err)
			continue
		}
		out = append(out, cands...)
	}
	if len(errs) == len(listings) {
		if d.SourceType == domain.SourceSite {
			// The site may have moved its sitemaps or feeds: discover it
			// again next time rather than retry stale URLs for a day.
			if err := w.forgetSite(ctx, l.SourceID); err != nil {
				w.log.Warn("dropping cached discovery failed", "source_id", l.SourceID, "err", err)
			}
		}
		return nil, fmt.Errorf("every listing failed: %w", errors.Join(errs...))
	}
	return mergeCandidates(out), nil
}

// site returns the site's discovery, from the cache in crawl_state while it
// is fresh, else by discovering it again.
func (w *Worker) site(ctx context.Context, l lease, domainName string) (cachedSite, error) {
	if l.Site.BaseURL != "" && w.now().Sub(l.Site.DiscoveredAt) < w.cfg.DiscoveryTTL {
		return l.Site, nil
	}
	s, err := w.client.DiscoverSite(ctx, domainName)
	if err != nil {
		return cachedSite{}, fmt.Errorf("discover site: %w", err)
	}
	cs := cachedSite{BaseURL: s.BaseURL, Sitemaps: s.Sitemaps, Feeds: s.Feeds, DiscoveredAt: w.now()}
	if err := w.saveSite(ctx, l.SourceID, cs); err != nil {
		// Only the cache is lost; this crawl goes on.
		w.log.Warn("caching site discovery failed", "source_id", l.SourceID, "err", err)
	}
	w.log.Debug("site discovered", "source_id", l.SourceID, "base_url", cs.BaseURL, "sitemaps", len(cs.Sitemaps), "feeds", len(cs.Feeds))
	return cs, nil
}

// mergeCandidates keeps one candidate per URL, in first-seen order, filling
// its empty fields from later listings (a sitemap knows the date, the feed
// the description).
func mergeCandidates(in []crawl.Candidate) []crawl.Candidate {
	idx := map[string]int{}
	var out []crawl.Candidate
	for _, c := range in {
		i, ok := idx[c.URL]
		if !ok {
			idx[c.URL] = len(out)
			out = append(out, c)
			continue
		}
		m := &out[i]
		m.Title = cmp.Or(m.Title, c.Title)
		m.Description = cmp.Or(m.Description, c.Description)
		m.ImageURL = cmp.Or(m.ImageURL, c.ImageURL)
		if m.PublishedAt.IsZero() {
			m.PublishedAt = c.PublishedAt
		}
		if m.LastMod.IsZero() {
			m.LastMod = c.LastMod
		}
	}
	return out
}

// candidateDate is what a listing said about a candidate's age: the date
// the article will be judged by (domain.DiscoverArticle's effective date),
// the publication date, else the last modification.
func candidateDate(c crawl.Candidate) time.Time {
	if !c.PublishedAt.IsZero() {
		return c.PublishedAt
	}
	return c.LastMod
}

// inWindow is the date rule for candidates of every kind of listing: those
// dated since or later are wanted, and so are undated ones (judged when
// fetched).
func inWindow(c crawl.Candidate, since time.Time) bool {
	d := candidateDate(c)
	return d.IsZero() || !d.Before(since)
}

// selectCandidates drops what this source has seen and what is dated
// before since (inWindow), and orders the rest newest first (undated
// last), bounded to maxFetchesPerCrawl; complete is false when that bound
// left some out.
func (w *Worker) selectCandidates(ctx context.Context, sourceID uuid.UUID, cands []crawl.Candidate, since time.Time, stats *crawlStats) (todo []crawl.Candidate, complete bool, err error) {
	stats.Candidates = len(cands)
	seen, err := w.seenURLs(ctx, sourceID, candidateURLs(cands))
	if err != nil {
		return nil, false, err
	}
	for _, c := range cands {
		if seen[c.URL] || !inWindow(c, since) {
			stats.Skipped++
			continue
		}
		todo = append(todo, c)
	}
	slices.SortStableFunc(todo, func(a, b crawl.Candidate) int {
		da, db := candidateDate(a), candidateDate(b)
		switch {
		case da.IsZero() && db.IsZero():
			return 0
		case da.IsZero():
			return 1
		case db.IsZero():
			return -1
		}
		return db.Compare(da)
	})
	if len(todo) > maxFetchesPerCrawl {
		stats.Skipped += len(todo) - maxFetchesPerCrawl
		return todo[:maxFetchesPerCrawl], false, nil
	}
	return todo, true, nil
}

// processCandidate fetches one candidate, stores its article and adds it to
// the source's feeds. It returns how it failed (zero on success) for the
// caller to judge; a failure never stops the crawl.
func (w *Worker) processCandidate(ctx context.Context, sourceID uuid.UUID, c crawl.Candidate, stats *crawlStats) (failureKind, error) {
	d, added, kind, err := w.ingestCandidate(ctx, sourceID, c, stats)
	if err != nil {
		stats.add(func(s *crawlStats) { s.Failed++ })
		return kind, err
	}
	stats.add(func(s *crawlStats) {
		if d.New {
			s.NewArticles++
		}
		s.Items += added
	})
	return 0, nil
}

// ingestCandidate is processCandidate's work. The order of its steps is what
// keeps a concurrently attached feed from missing the article (see
// distribute), and a crash between them from losing it: the URL is skipped
// only once markDistributed ran, and every step is idempotent.
func (w *Worker) ingestCandidate(ctx context.Context, sourceID uuid.UUID, c crawl.Candidate, stats *crawlStats) (commands.Discovered, int, failureKind, error) {
	page, err := w.client.FetchArticle(ctx, c.URL)
	stats.add(func(s *crawlStats) { s.Fetched++ })
	// A page without a recognisable title is still usable when the listing
	// named it (news sitemaps and feeds carry titles).
	if err != nil && !(errors.Is(err, extract.ErrNoTitle) && c.Title != "") {
		return commands.Discovered{}, 0, classifyFetch(err), err
	}
	// Once the page is in hand, the few database steps finish even if the
	// worker is stopping, rather than leave the article half recorded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	content := articleContent(c, page)
	var lastMod *time.Time
	if !c.LastMod.IsZero() {
		lm := c.LastMod
		lastMod = &lm
	}
	d, _, err := w.cmds.DiscoverArticle(ctx, commands.DiscoverArticle{SourceID: sourceID, Content: content, LastMod: lastMod})
	if err != nil {
		return commands.Discovered{}, 0, classifyStore(err), err
	}
	if err := w.markSeen(ctx, sourceID, c.URL, d.ArticleDiscovered); err != nil {
		return commands.Discovered{}, 0, storeFailure, err
	}
	added, err := w.distribute(ctx, sourceID, d.ArticleDiscovered)
	if err != nil {
		// The row stays pending, so the next poll distributes it again.
		return commands.Discovered{}, added, storeFailure, fmt.Errorf("distribute: %w", err)
	}
	if err := w.markDistributed(ctx, sourceID, c.URL); err != nil {
		return commands.Discovered{}, added, storeFailure, err
	}
	return d, added, 0, nil
}

// articleContent takes each field from the page, falling back to what the
// listing said. page.URL, which becomes the article's identity, is the
// page's canonical URL only when that is on the site the page was fetched
// from, else the fetched URL: extract.ParseArticle enforces it, being the
// one place that sees both.
func articleContent(c crawl.Candidate, page extract.Article) domain.ArticleContent {
	out := domain.ArticleContent{
		URL:         cmp.Or(strings.TrimSpace(page.URL), c.URL),
		Title:       cmp.Or(strings.TrimSpace(page.Title), c.Title),
		Description: cmp.Or(strings.TrimSpace(page.Description), c.Description),
		ImageURL:    cmp.Or(strings.TrimSpace(page.ImageURL), c.ImageURL),
	}
	switch {
	case !page.PublishedAt.IsZero():
		t := page.PublishedAt
		out.PublishedAt = &t
	case !c.PublishedAt.IsZero():
		t := c.PublishedAt
		out.PublishedAt = &t
	}
	return out
}
