package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/internal/lease"
)

// backfillsPerTick bounds the backfills one look starts.
const backfillsPerTick = 20

// backfillChunk is how many articles a backfill adds in one commit.
const backfillChunk = 100

// errArticlesBehind means the articles projection has not yet caught up
// with articles this crawler recorded; the backfill is retried next tick
// (backfillLook.retry).
var errArticlesBehind = errors.New("articles read model is behind the crawler")

// A backfill reads the source's recorded facts (articles, events) of the
// attachment's window, whatever feeds were attached when they were
// recorded, and offers each kind the feed's intake takes.
//
// Why backfills cannot miss an article: a crawl records each article in
// crawl_seen before it reads the source's attachments to distribute it
// (storeBatch, articles.go); events likewise in ingest_source_events
// (markHappeningsFound). An attachment that crawl did not see was projected
// after that read, and its backfill starts only after it is projected, so
// the backfill's read of crawl_seen comes later still and finds the
// article. crawl_seen is written by the crawler itself, without projection
// lag; article_sources adds what crawl_seen no longer holds (pruned, or
// found before these tables existed).

// runBackfills claims and runs the pending backfills: those of enabled
// attachments without a finished backfill. An attachment disabled before
// its backfill ran waits until it is enabled again, and then takes only
// what it accepts from that moment (its accepting-since moved forward).
// When the run fails, or a backfill it claimed does not finish, the next
// tick looks again (lookForBackfills): nothing would tell the loop.
func (w *Worker) runBackfills(ctx context.Context) (err error) {
	unfinished := false
	defer func() { w.backfillLook.retry = err != nil || unfinished }()
	pending, err := w.pendingBackfills(ctx)
	if err != nil {
		return err
	}
	for _, a := range pending {
		if ctx.Err() != nil {
			return nil
		}
		ok, err := w.store.Backfills.Claim(ctx, a.AttachmentID)
		if err != nil {
			return err
		}
		if !ok {
			// Another process runs it, and looks again if it fails;
			// should it die, the full scan finds the expired lease.
			continue
		}
		if !w.backfillClaimed(ctx, a) {
			unfinished = true
		}
	}
	return nil
}

// pendingBackfills finds up to backfillsPerTick attachments whose
// backfill is to run. Like newSources, it reads every attachment only on
// its first look and once per newSourcesFullScan: in between, the
// attachments that became crawlable since shortly before its last look
// (attached or re-enabled; the index on the latest of those times) and
// the backfills left unfinished (a partial index), since reading every
// attachment on each look cost Postgres 5 ms at 10,000. Only the backfill
// loop calls it, when lookForBackfills says.
func (w *Worker) pendingBackfills(ctx context.Context) ([]Attachment, error) {
	start := time.Now()
	full := w.backfillLook.full.IsZero() || start.Sub(w.backfillLook.full) >= newSourcesFullScan
	var changedSince time.Time
	if !full {
		changedSince = w.backfillLook.last.Add(-newSourcesSlack)
	}
	pending, err := w.store.PendingBackfills(ctx, backfillsPerTick, changedSince)
	if err != nil {
		return nil, err
	}
	w.backfillLook.more = len(pending) == backfillsPerTick
	if len(pending) < backfillsPerTick {
		w.backfillLook.last = start
		if full {
			w.backfillLook.full = start
		}
	}
	return pending, nil
}

// backfillClaimed runs a claimed backfill and records its outcome; it
// reports whether the backfill is done.
func (w *Worker) backfillClaimed(ctx context.Context, a Attachment) (done bool) {
	start := time.Now()
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := w.store.Backfills.Keep(bctx, a.AttachmentID, cancel)
	articles, events, added, err := w.backfill(bctx, a)
	stop()

	rctx, rcancel := lease.ReleaseContext()
	defer rcancel()
	if err != nil {
		if rerr := w.store.Backfills.Release(rctx, a.AttachmentID); rerr != nil {
			w.log.Error("releasing backfill failed", "attachment_id", a.AttachmentID, "err", rerr)
		}
		switch {
		case bctx.Err() != nil:
		case errors.Is(err, errArticlesBehind):
			w.log.Debug("backfill deferred", "attachment_id", a.AttachmentID, "err", err)
		default:
			w.log.Warn("backfill failed; will retry", "attachment_id", a.AttachmentID, "source_id", a.SourceID, "err", err)
		}
		return false
	}
	if err := w.finishBackfill(rctx, a, added); err != nil {
		w.log.Error("recording backfill failed", "attachment_id", a.AttachmentID, "err", err)
		return false
	}
	w.log.Info("backfill done", "attachment_id", a.AttachmentID, "feed_id", a.FeedID, "source_id", a.SourceID,
		"articles", articles, "events", events, "items_added", added, "since", a.AcceptingSince(), "duration", time.Since(start).Round(time.Millisecond))
	return true
}

// backfill offers the attachment every recorded fact of its source that
// its feed kind takes (articles, events) and that it accepts. It returns
// how many articles and events it considered and how many items it added.
func (w *Worker) backfill(ctx context.Context, a Attachment) (articles, happenings, added int, err error) {
	if _, ok := w.intakes.For(a.FeedKind); !ok {
		return 0, 0, 0, fmt.Errorf("backfill attachment %s: no intake for %s feeds", a.AttachmentID, a.FeedKind)
	}
	if _, ok := w.intakes.articles(a.FeedKind); ok {
		n, k, err := w.backfillArticles(ctx, a)
		articles, added = n, added+k
		if err != nil {
			return articles, happenings, added, err
		}
	}
	if _, ok := w.intakes.happenings(a.FeedKind); ok {
		n, k, err := w.backfillHappenings(ctx, a)
		happenings, added = n, added+k
		if err != nil {
			return articles, happenings, added, err
		}
	}
	return articles, happenings, added, nil
}

// backfillArticles adds every known article of the attachment's source
// that the attachment accepts.
func (w *Worker) backfillArticles(ctx context.Context, a Attachment) (found, added int, err error) {
	since := a.AcceptingSince()
	seen, err := w.store.SeenArticles(ctx, a.SourceID, since)
	if err != nil {
		return 0, 0, err
	}
	rows, err := w.knownArticles.OfSource(ctx, a.SourceID, since, seen)
	if err != nil {
		return 0, 0, err
	}
	have := make(map[uuid.UUID]bool, len(rows))
	for _, r := range rows {
		have[r.ID] = true
	}
	for _, id := range seen {
		if !have[id] {
			return 0, 0, fmt.Errorf("article %s: %w", id, errArticlesBehind)
		}
	}
	// Oldest first, so that the newest article gets the latest item time
	// and lists first; a chunk at a time, each in one commit (the log
	// keeps the chunk's order).
	for chunk := range slices.Chunk(rows, backfillChunk) {
		offers := make([]ArticleOffer, len(chunk))
		for i, r := range chunk {
			offers[i] = ArticleOffer{To: a, Article: r.Discovery(a.SourceID)}
			if a.HasRules() {
				// Rules read the body text as a crawl's offer carries it;
				// the articles read model does not keep it.
				text, err := w.articles.ArticleText(ctx, r.URL)
				if err != nil {
					return len(rows), added, fmt.Errorf("read the text of article %s for the rules of feed %s: %w", r.ID, a.FeedID, err)
				}
				offers[i].Article.Content.Text = text
			}
		}
		got, err := w.offerArticles(ctx, offers)
		for _, ok := range got {
			if ok {
				added++
			}
		}
		if err != nil {
			return len(rows), added, err
		}
	}
	return len(rows), added, nil
}

// finishBackfill marks the backfill done and, when the attachment reaches
// further back than the source's crawls looked, makes the source due.
func (w *Worker) finishBackfill(ctx context.Context, a Attachment, added int) error {
	if err := w.store.FinishBackfill(ctx, a.AttachmentID, added); err != nil {
		return fmt.Errorf("finish backfill of attachment %s: %w", a.AttachmentID, err)
	}
	return w.makeDue(ctx, a.SourceID, a.AcceptingSince())
}
