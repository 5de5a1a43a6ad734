package ingest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/crawlstate"
)

// Articles are stored a batch at a time. A crawl fetches and parses
// several articles of its source at once (articlesAtOnce); each one ready
// to be stored joins its source's queue, and one of the waiting
// goroutines stores what the queue holds while the others wait (a group
// commit): what arrives during a batch goes into the next, and a batch
// waits up to batchLinger for more to join. A batch takes five
// transactions however many articles it holds, where each article took
// five before:
//
//  1. the articles, one multi-stream append (commands.DiscoverArticles);
//  2. their URLs in crawl_seen, pending, one statement;
//  3. the source's attachments, read after 2 committed;
//  4. the items of every accepting feed, one multi-stream append per feed
//     kind (commands.AddNewsItems);
//  5. the URLs marked distributed, one statement.
//
// The order is what it was for one article, and for the same reasons:
// crawl_seen has the articles before the attachments are read, which is
// what keeps a concurrently attached feed from missing them (backfill.go),
// and the URLs are skipped by later polls only once their items are
// appended. The crawler's rows and the events are not written in one
// transaction: the events go through commands to the event store, which
// may be another database (EventStoreDB's shape), and step 3 must read
// what step 2 committed. A crash between steps costs at most the work
// again at the next poll: the appends are idempotent per article and per
// feed × article, and the rows are upserts. A batch that fails is stored
// again one article at a time, so that one article's trouble (content the
// domain refuses) fails only that article.

const (
	// maxArticlesPerBatch bounds the articles stored in one batch.
	maxArticlesPerBatch = 64
	// batchLinger is how long the first article of a batch waits for
	// others of its crawl to join it, unless every article the crawl
	// fetches at once is waiting already. Without it a batch would hold
	// what arrives during one store, a few articles; a crawl is in no
	// hurry by 50 ms, and its fetches go on meanwhile.
	batchLinger = 50 * time.Millisecond
)

// pendingArticle is a fetched and parsed article waiting for its batch,
// and, once done is closed, how storing it went.
type pendingArticle struct {
	url   string
	found FoundArticle
	// heldNone: the document holds no event now (crawlstate.MarkDistributed).
	heldNone bool

	queued time.Time
	done   chan struct{}
	isNew  bool
	added  int
	kind   failureKind
	err    error
}

// articleQueues are the sources' queues of articles to store. A source
// has a queue while one of its goroutines is storing batches.
type articleQueues struct {
	mu       sync.Mutex
	bySource map[uuid.UUID]*articleQueue
}

type articleQueue struct {
	pending []*pendingArticle
	// more wakes the storing goroutine when an article joins.
	more chan struct{}
}

// storeArticle stores a fetched article with its source's next batch and
// returns when that batch is done (p's results are set).
func (w *Worker) storeArticle(ctx context.Context, sourceID uuid.UUID, p *pendingArticle) {
	p.done, p.queued = make(chan struct{}), time.Now()
	qs := &w.articleQueues
	qs.mu.Lock()
	if qs.bySource == nil {
		qs.bySource = make(map[uuid.UUID]*articleQueue)
	}
	q, storing := qs.bySource[sourceID]
	if !storing {
		q = &articleQueue{more: make(chan struct{}, 1)}
		qs.bySource[sourceID] = q
	}
	q.pending = append(q.pending, p)
	if storing {
		qs.mu.Unlock()
		select {
		case q.more <- struct{}{}:
		default:
		}
		<-p.done
		return
	}
	// This goroutine stores the source's batches until nobody waits.
	for len(q.pending) > 0 {
		if wait := batchLinger - time.Since(q.pending[0].queued); wait > 0 && len(q.pending) < articlesAtOnce {
			qs.mu.Unlock()
			t := time.NewTimer(wait)
			select {
			case <-q.more:
			case <-t.C:
			}
			t.Stop()
			qs.mu.Lock()
			continue
		}
		n := min(len(q.pending), maxArticlesPerBatch)
		batch := q.pending[:n:n]
		q.pending = q.pending[n:]
		qs.mu.Unlock()
		storeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.StoreTimeout)
		w.storeArticles(storeCtx, sourceID, batch)
		cancel()
		qs.mu.Lock()
	}
	delete(qs.bySource, sourceID)
	qs.mu.Unlock()
	<-p.done
}

// storeArticles stores a batch and closes each article's done.
func (w *Worker) storeArticles(ctx context.Context, sourceID uuid.UUID, batch []*pendingArticle) {
	kind, err := w.storeBatch(ctx, sourceID, batch)
	if err != nil && len(batch) > 1 {
		w.log.Info("storing a batch of articles failed; storing them one at a time", "source_id", sourceID, "articles", len(batch), "err", err)
		for _, p := range batch {
			w.storeArticles(ctx, sourceID, []*pendingArticle{p})
		}
		return
	}
	for _, p := range batch {
		if err != nil {
			p.kind, p.err, p.isNew, p.added = kind, err, false, 0
		}
		close(p.done)
	}
}

// storeBatch runs the five steps for a batch (see the top of this file),
// setting each article's isNew and added; on an error it returns how the
// batch failed.
func (w *Worker) storeBatch(ctx context.Context, sourceID uuid.UUID, batch []*pendingArticle) (failureKind, error) {
	found := make([]FoundArticle, len(batch))
	for i, p := range batch {
		found[i] = p.found
	}
	recorded, err := w.articles.RecordArticles(ctx, found)
	if err != nil {
		return classifyStore(err), err
	}
	seen := make([]crawlstate.SeenArticle, len(batch))
	articles := make([]domain.ArticleDiscovered, len(batch))
	done := make([]crawlstate.DistributedURL, len(batch))
	for i, p := range batch {
		a := recorded[i].ArticleDiscovered
		seen[i] = crawlstate.SeenArticle{URL: p.url, ArticleID: a.NewsPageID, EffectiveAt: a.EffectiveAt}
		articles[i] = a
		done[i] = crawlstate.DistributedURL{URL: p.url, HeldNone: p.heldNone}
		p.isNew = recorded[i].New
	}
	if err := w.store.MarkSeen(ctx, sourceID, seen); err != nil {
		return storeFailure, err
	}
	added, err := w.distribute(ctx, sourceID, articles)
	if err != nil {
		// The rows stay pending, so the next poll distributes them again.
		return storeFailure, fmt.Errorf("distribute: %w", err)
	}
	if err := w.store.MarkDistributed(ctx, sourceID, done...); err != nil {
		return storeFailure, err
	}
	for i, p := range batch {
		p.added = added[i]
	}
	return 0, nil
}
