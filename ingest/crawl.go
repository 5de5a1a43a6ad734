package ingest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/nearcopy"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/crawlstate"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/extract"
	"github.com/feedsvc/feedsvc/internal/lease"
)

const (
	// articlesAtOnce is how many articles of one source are fetched
	// concurrently, or parsed, or waiting for their batch to be stored
	// (articles.go); the crawl client's per-host limit applies on top, so
	// the site sees no more requests at once whatever this is.
	articlesAtOnce = 32
	// DefaultStoreTimeout bounds the database steps of one document.
	DefaultStoreTimeout = 30 * time.Second
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
	// to: the earliest accepting-since of its accepting attachments, since
	// each poll since then has looked back 14 days (or to that date).
	Covered time.Time
	// Backlog: MaxFetchesPerCrawl left candidates for the next crawl.
	Backlog bool
	// Fresh and Throttle are what the source's listings said about when
	// to read them again (listingValidators.hints), for the schedule.
	Fresh, Throttle document.Hint
	// Calendars are the calendar files the crawl's pages link to.
	Calendars []string
	// Happenings counts the happenings the crawl took for recording
	// (Config.MaxHappeningsPerCrawl bounds them).
	Happenings int
	// CutOffs are the documents a bound cut short, with the bound.
	CutOffs []string
	// Unchanged are the event documents re-read and found as they were
	// (ingestCandidate).
	Unchanged []string
	// DueBy, when set, is the latest the next poll may be due: this one
	// was quick (quick.go).
	DueBy time.Time
	// Offered is the latest domain.AcceptingSince of the source's
	// attachments as the crawl found them: an event document read whole
	// is trusted on a re-read only while it is the latest (an attachment
	// attached or re-enabled since must be offered what it holds).
	Offered time.Time
}

// takeHappenings takes up to n of the crawl's room for happenings and says how
// many it took.
func (s *crawlStats) takeHappenings(n, limit int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = max(0, min(n, limit-s.Happenings))
	s.Happenings += n
	return n
}

// cutOff notes a document a bound cut short.
func (s *crawlStats) cutOff(url, why string) {
	s.add(func(s *crawlStats) { s.CutOffs = append(s.CutOffs, url+": "+why) })
}

// cutOffNote is what a successful crawl records as the source's last
// error: the documents bounds cut short, empty when none.
func (s *crawlStats) cutOffNote() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.CutOffs) == 0 {
		return ""
	}
	return crawlstate.Truncate(fmt.Sprintf("documents cut off (what fitted was kept): %s", strings.Join(s.CutOffs, "; ")), 2000)
}

func (s *crawlStats) add(f func(*crawlStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// crawlLeased crawls a leased source, keeping the lease alive meanwhile, and
// releases it with the outcome.
func (w *Worker) crawlLeased(ctx context.Context, l leased) {
	start := time.Now()
	crawlCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The renewal runs on the worker's context, not the crawl's: a
	// successful crawl's release waits in a queue for the schedule loop's
	// next turn (release), and the lease must stay alive until that write,
	// or another process could find the source due and unleased and poll
	// it again (a loaded machine can hold the loop past a short lease).
	stopRenew := w.store.Crawls.Keep(ctx, l.SourceID, cancel)
	stats := &crawlStats{}
	err := w.crawlSource(crawlCtx, l, stats)

	how := succeeded
	switch {
	case crawlCtx.Err() != nil:
		// Shutdown or a lost lease: not the source's fault.
		how = interrupted
	case err != nil:
		how = failed
	}
	if how != succeeded {
		stopRenew()
	}
	rctx, rcancel := lease.ReleaseContext()
	defer rcancel()
	if rerr := w.release(rctx, l, how, stats, err, stopRenew); rerr != nil {
		w.log.Error("releasing source failed", "source_id", l.SourceID, "err", rerr)
	}
	attrs := []any{
		"source_id", l.SourceID, "listings", stats.Listings, "listing_errors", stats.ListingErrors,
		"candidates", stats.Candidates, "skipped", stats.Skipped, "fetched", stats.Fetched, "unchanged", len(stats.Unchanged), "errors", stats.Failed,
		"new_articles", stats.NewArticles, "items_added", stats.Items, "backlog", stats.Backlog, "cut_off", len(stats.CutOffs),
		"duration", time.Since(start).Round(time.Millisecond),
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

// crawlSource has the source's connector list its candidates, fetches
// those it has not seen and distributes the articles. It fails when the
// source itself cannot be read: discovery fails, every listing fails, or
// the source did not answer for its documents (see failures.go). A bad
// document never fails the source.
func (w *Worker) crawlSource(ctx context.Context, l leased, stats *crawlStats) error {
	var accepting []Attachment
	for _, a := range l.Attachments {
		if a.Enabled() {
			accepting = append(accepting, a)
		}
	}
	if len(accepting) == 0 {
		// Disabled or detached between the due query and the lease.
		return nil
	}
	details, err := accepting[0].SourceDetails()
	if err != nil {
		return err
	}
	conn, ok := w.connectors.For(details.SourceType)
	if !ok {
		return fmt.Errorf("source %s: no connector reads %q sources", l.SourceID, details.SourceType)
	}
	earliest := accepting[0].AcceptingSince()
	for _, a := range accepting[1:] {
		if s := a.AcceptingSince(); s.Before(earliest) {
			earliest = s
		}
	}
	// Candidates need go no further back than the backfill window, nor
	// than any accepting attachment could take.
	since := w.now().Add(-domain.BackfillWindow)
	if earliest.After(since) {
		since = earliest
	}

	cands, validators, carried, exhaustive, err := w.candidatesOf(ctx, l, conn, details, since, stats)
	if err != nil {
		return err
	}
	stats.Covered = earliest
	stats.Fresh, stats.Throttle = validators.hints()
	todo, rest, err := w.selectCandidates(ctx, l, cands, since, stats)
	if err != nil {
		return err
	}
	complete := len(rest) == 0
	stats.Backlog = !complete
	for _, a := range l.Attachments {
		if s := a.AcceptingSince(); s.After(stats.Offered) {
			stats.Offered = s
		}
	}
	var reread map[string]crawlstate.EventDocument
	if !l.Backlog && l.HasHappeningDocs {
		rechecks, known, err := w.happeningRechecks(ctx, l.SourceID, todo, cands, exhaustive, w.cfg.MaxFetchesPerCrawl-len(todo), stats.Offered)
		if err != nil {
			return err
		}
		todo, reread = append(todo, rechecks...), known
	}

	// URLs known to fail on their own while their site answers: their
	// transient failures do not vote on the site's health (failures.go).
	known, err := w.store.FailingURLs(ctx, l.SourceID, candidateURLs(todo))
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
		var prior *crawlstate.EventDocument
		if d, ok := reread[c.URL]; ok {
			prior = &d
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			kind, err := w.processCandidate(ctx, conn, l.SourceID, c, listedDocument, prior, stats)
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
	if err := w.store.TouchHappeningDocuments(ctx, l.SourceID, stats.Unchanged); err != nil {
		// They are only checked again sooner than the others.
		w.log.Warn("recording unchanged event documents failed", "source_id", l.SourceID, "err", err)
	}
	w.followCalendars(ctx, conn, l.SourceID, todo, stats)
	verdict := health.verdict()
	recorded := w.recordFailures(ctx, l.SourceID, failures, verdict == nil) && !carried.unrecorded
	if verdict == nil && !complete {
		w.backlogs.put(l.SourceID, backlog{rest: rest, listings: validators, unrecorded: !recorded})
	}
	if verdict == nil && recorded && complete {
		// Every candidate is dealt with: fetched, given up, or recorded to
		// be retried (see listings.go).
		if err := w.saveListings(ctx, l.SourceID, validators); err != nil {
			w.log.Warn("storing listing validators failed", "source_id", l.SourceID, "err", err)
		}
	}
	return verdict
}

// candidatesOf returns what the source offers and the validators of the
// listings that offered it: what the last crawl left, when this one goes
// on with its backlog (see backlog.go), else what the connector discovers
// and the failed candidates to retry. exhaustive is the discovery's
// (connector.Discovery.Exhaustive).
func (w *Worker) candidatesOf(ctx context.Context, l leased, conn connector.Connector, details domain.SourceDetails, since time.Time, stats *crawlStats) (
	cands []connector.Candidate, validators *listingValidators, carried backlog, exhaustive bool, err error) {
	if bl, ok := w.backlogs.take(l.SourceID); ok && l.Backlog && !since.Before(bl.listings.since) {
		return bl.rest, bl.listings, bl, false, nil
	}
	validators = listingsFor(l.Listings, since)
	// The schedule's clock (a release's Ended), not the crawl's dates'.
	began := time.Now()
	quick, dueBy := w.quick(l.SourceID, began, since)
	found, err := conn.Discover(ctx, connector.Source{ID: l.SourceID, Details: details, State: l.State, Validators: validators, Quick: quick}, since)
	stats.Listings, stats.ListingErrors = found.Listings, found.ListingErrors
	switch {
	case err != nil:
	case found.Partial:
		validators.partial = true
		stats.DueBy = dueBy
	case found.ListingErrors == 0:
		w.readWhole(l.SourceID, began, since)
	}
	// An unchanged state is not written again: most polls change nothing.
	if found.State != nil && !bytes.Equal(found.State, l.State) {
		if err := w.store.SaveState(ctx, l.SourceID, found.State); err != nil {
			// Only what the connector cached is lost; the crawl goes on.
			w.log.Warn("keeping connector state failed", "source_id", l.SourceID, "err", err)
		}
	}
	if err != nil {
		return nil, nil, backlog{}, false, err
	}
	// What failed before is retried on every regular poll, whether or not
	// its listing changed; a crawl going on with a backlog leaves it to the
	// next poll, so that failures are retried once per poll.
	var retry []connector.Candidate
	// Those given up are in crawl_seen too, where selectCandidates drops
	// them.
	if !l.Backlog && l.HasFailures {
		if retry, err = w.store.FailedCandidates(ctx, l.SourceID); err != nil {
			return nil, nil, backlog{}, false, err
		}
	}
	// Seen and failed URLs pile up only in polls that list something, so
	// only those prune them: a poll answered 304 costs no deletes.
	if len(found.Candidates) > 0 || len(retry) > 0 {
		if err := w.store.PruneSeen(ctx, l.SourceID); err != nil {
			w.log.Warn("pruning seen URLs failed", "source_id", l.SourceID, "err", err)
		}
	}
	return mergeCandidates(append(found.Candidates, retry...)), validators, backlog{}, found.Exhaustive, nil
}

// candidateFailure is a candidate that failed in this crawl.
type candidateFailure struct {
	cand connector.Candidate
	kind failureKind
	err  error
}

func candidateURLs(cands []connector.Candidate) []string {
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
	if len(failures) == 0 {
		return true
	}
	// One short transaction: a crawl's failures become visible together,
	// so no reader sees one URL's count of this crawl without the others'.
	fs := make([]crawlstate.Failure, len(failures))
	for i, f := range failures {
		fs[i] = crawlstate.Failure{Candidate: f.cand, Cause: f.err, Counted: healthy, Limit: w.transientLimit()}
		if f.kind == permanentFailure {
			fs[i].Counted, fs[i].Limit = true, maxURLFailures
		}
	}
	recorded, err := w.store.RecordFailures(ctx, sourceID, fs)
	if err != nil {
		w.log.Error("recording failed URLs failed", "source_id", sourceID, "failures", len(failures), "err", err)
		return false
	}
	for i, f := range failures {
		attrs := []any{"source_id", sourceID, "url", f.cand.URL, "kind", f.kind.String(), "failures", recorded[i].Failures, "err", f.err}
		switch {
		case recorded[i].GaveUp:
			w.log.Warn("article failed; giving up on it", attrs...)
		case !fs[i].Counted:
			w.log.Info("article failed while the site is down; will retry", attrs...)
		default:
			w.log.Info("article failed; will retry next poll", attrs...)
		}
	}
	return true
}

// mergeCandidates keeps one candidate per URL, in first-seen order, filling
// its empty fields from later listings (a sitemap knows the date, the feed
// the description).
func mergeCandidates(in []connector.Candidate) []connector.Candidate {
	idx := map[string]int{}
	var out []connector.Candidate
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
		if m.Data == nil {
			m.Data = c.Data
		}
	}
	return out
}

// candidateDate is what a listing said about a candidate's age: the date
// the article will be judged by (domain.DiscoverArticle's effective date),
// the publication date, else the last modification.
func candidateDate(c connector.Candidate) time.Time {
	if !c.PublishedAt.IsZero() {
		return c.PublishedAt
	}
	return c.LastMod
}

// inWindow is the date rule for candidates of every kind of listing: those
// dated since or later are wanted, and so are undated ones (judged when
// fetched).
func inWindow(c connector.Candidate, since time.Time) bool {
	d := candidateDate(c)
	return d.IsZero() || !d.Before(since)
}

// selectCandidates drops what this source has seen and what is dated
// before since (inWindow), and, in a crawl going on with a backlog, what
// failed before (retried at the next poll); it orders the rest newest
// first (undated last), bounded to MaxFetchesPerCrawl; rest is what that
// bound left out.
func (w *Worker) selectCandidates(ctx context.Context, l leased, cands []connector.Candidate, since time.Time, stats *crawlStats) (todo, rest []connector.Candidate, err error) {
	stats.Candidates = len(cands)
	urls := candidateURLs(cands)
	seen, err := w.store.SeenURLs(ctx, l.SourceID, urls)
	if err != nil {
		return nil, nil, err
	}
	var failed map[string]bool
	if l.Backlog {
		if failed, err = w.store.FailedURLs(ctx, l.SourceID, urls); err != nil {
			return nil, nil, err
		}
	}
	for _, c := range cands {
		if seen[c.URL] || failed[c.URL] || !inWindow(c, since) {
			stats.Skipped++
			continue
		}
		todo = append(todo, c)
	}
	slices.SortStableFunc(todo, func(a, b connector.Candidate) int {
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
	if n := w.cfg.MaxFetchesPerCrawl; len(todo) > n {
		stats.Skipped += len(todo) - n
		return todo[:n], todo[n:], nil
	}
	return todo, nil, nil
}

// candidateKind is what a candidate is known to be before it is fetched.
type candidateKind int

const (
	// listedDocument: a document a listing named (or a known event
	// document), read by every reader.
	listedDocument candidateKind = iota
	// calendarFile: a calendar file a page linked to, read for its events
	// only (a calendar is no article).
	calendarFile
)

// processCandidate fetches one candidate through the source's connector,
// records what it holds (an article, events) and adds it to the source's
// feeds. It returns how it failed (zero on success) for the caller to
// judge; a failure never stops the crawl.
func (w *Worker) processCandidate(ctx context.Context, conn connector.Connector, sourceID uuid.UUID, c connector.Candidate, what candidateKind, prior *crawlstate.EventDocument, stats *crawlStats) (failureKind, error) {
	isNew, added, kind, err := w.ingestCandidate(ctx, conn, sourceID, c, what, prior, stats)
	if err != nil {
		stats.add(func(s *crawlStats) { s.Failed++ })
		return kind, err
	}
	stats.add(func(s *crawlStats) {
		if isNew {
			s.NewArticles++
		}
		s.Items += added
	})
	return 0, nil
}

// ingestCandidate is processCandidate's work: facts first, feeds second.
// The document is read for its events and for an article whatever feeds
// the source has; each is recorded as the source's (ingest_source_events,
// crawl_seen) before the attachments are read to distribute it, which is
// what keeps a concurrently attached feed of any kind from missing it (see
// backfill.go), and the URL is skipped by later polls only once
// the store's MarkDistributed ran, so a crash between the steps loses nothing: every
// step is idempotent.
//
// An event document read again (prior, from happeningRechecks) that was
// read whole lately is fetched with its validators, and one that answers
// 304 or the same bytes is left at that: it holds what was recorded from
// it. Most venue pages never change after they are published, and reading
// each one whole at every poll was most of a venue's cost.
func (w *Worker) ingestCandidate(ctx context.Context, conn connector.Connector, sourceID uuid.UUID, c connector.Candidate, what candidateKind, prior *crawlstate.EventDocument, stats *crawlStats) (
	isNew bool, added int, kind failureKind, err error) {
	trusted := prior != nil && prior.Trusted
	if trusted {
		c.Cond = document.Validators{ETag: prior.ETag, LastModified: prior.LastModified}
	}
	begun := w.now()
	doc, err := conn.Fetch(ctx, c)
	stats.add(func(s *crawlStats) { s.Fetched++ })
	if errors.Is(err, connector.ErrUnchanged) {
		stats.add(func(s *crawlStats) { s.Unchanged = append(s.Unchanged, c.URL) })
		return false, 0, 0, nil
	}
	if err != nil {
		kind := classifyFetch(err)
		if kind == permanentFailure {
			// A document that is gone holds no event any more.
			if rerr := w.releaseHappenings(ctx, c.URL, nil); rerr != nil {
				w.log.Warn("could not release the events of a gone document", "url", c.URL, "err", rerr)
			}
		}
		return false, 0, kind, err
	}
	digest := sha256.Sum256(doc.Body)
	if trusted && bytes.Equal(prior.Digest, digest[:]) {
		stats.add(func(s *crawlStats) { s.Unchanged = append(s.Unchanged, c.URL) })
		return false, 0, 0, nil
	}
	// Once the document is in hand, the few database steps finish even if
	// the worker is stopping, rather than leave it half recorded.
	storeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.StoreTimeout)
	defer cancel()
	isNew, added, kind, holds, whole, err := w.readDocument(ctx, storeCtx, sourceID, c, doc, what, stats)
	if err == nil && kind == 0 && holds > 0 && whole {
		// Only a document read whole and recorded in full may be skipped
		// when it is found unchanged.
		if kerr := w.store.KeepHappeningDocumentRead(storeCtx, sourceID, doc.URL, doc.Validators.ETag, doc.Validators.LastModified, digest[:], begun, stats.Offered); kerr != nil {
			w.log.Warn("keeping an event document's validators failed", "source_id", sourceID, "url", doc.URL, "err", kerr)
		}
	}
	return isNew, added, kind, err
}

// readDocument reads a fetched document for its events and its article
// and records both (ingestCandidate); holds is how many events it holds,
// whole whether all of them were recorded.
func (w *Worker) readDocument(ctx, storeCtx context.Context, sourceID uuid.UUID, c connector.Candidate, doc document.Document, what candidateKind, stats *crawlStats) (
	isNew bool, added int, kind failureKind, holds int, whole bool, err error) {
	n, holds, whole, calendars, err := w.ingestHappenings(storeCtx, sourceID, doc, stats)
	stats.add(func(s *crawlStats) { s.Items += n; s.Calendars = append(s.Calendars, calendars...) })
	if err != nil {
		return false, 0, storeFailure, holds, whole, err
	}
	if what == calendarFile {
		return false, 0, 0, holds, whole, w.store.MarkDistributed(storeCtx, sourceID, crawlstate.DistributedURL{URL: c.URL, HeldNone: holds == 0})
	}
	page, err := extract.ParseArticle(doc)
	// A page without a recognisable title is still usable when the listing
	// named it (news sitemaps and feeds carry titles).
	if err != nil && !(errors.Is(err, extract.ErrNoTitle) && c.Title != "") {
		if holds > 0 {
			// An event document that is no article (a calendar, a page
			// without a title) has been read for all it holds.
			return false, 0, 0, holds, whole, w.store.MarkDistributed(storeCtx, sourceID, crawlstate.DistributedURL{URL: c.URL})
		}
		if rerr := w.releaseHappenings(storeCtx, c.URL, nil); rerr != nil {
			w.log.Warn("could not release the events of a document that holds none", "url", c.URL, "err", rerr)
		}
		return false, 0, permanentFailure, holds, whole, fmt.Errorf("article: %w", err)
	}
	content := articleContent(c, page)
	var lastMod *time.Time
	if !c.LastMod.IsZero() {
		lm := c.LastMod
		lastMod = &lm
	}
	// Recorded, marked seen, distributed and marked distributed with the
	// source's other articles ready now (articles.go).
	p := &pendingArticle{url: c.URL, found: FoundArticle{SourceID: sourceID, Content: content, LastMod: lastMod}, heldNone: holds == 0}
	w.storeArticle(ctx, sourceID, p)
	return p.isNew, p.added, p.kind, holds, whole, p.err
}

// articleContent takes each field from the page, falling back to what the
// listing said. page.URL, which becomes the article's identity, is the
// page's canonical URL only when that is on the site the page was fetched
// from, else the fetched URL: extract.ParseArticle enforces it, being the
// one place that sees both.
func articleContent(c connector.Candidate, page extract.Article) domain.ArticleContent {
	out := domain.ArticleContent{
		URL:         cmp.Or(strings.TrimSpace(page.URL), c.URL),
		Title:       cmp.Or(strings.TrimSpace(page.Title), c.Title),
		Description: cmp.Or(strings.TrimSpace(page.Description), c.Description),
		ImageURL:    cmp.Or(strings.TrimSpace(page.ImageURL), c.ImageURL),
		Source:      page.Source,
		Platform:    page.Platform,
		Language:    page.Language,
		// Bounded by domain.NewArticleContent (MaxTextBytes).
		Text: page.Text,
	}
	if page.Text != "" {
		sig := nearcopy.Sign(out.Title, page.Text)
		out.Signature = &sig
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
