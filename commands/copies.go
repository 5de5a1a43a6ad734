package commands

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/nearcopy"
)

// CopyFinder finds, for each article, the item of a feed that it is a
// copy of (domain/copies.go): the read model's index of the feed's recent
// items. found[i] is false when the feed holds no copy of article i, or
// holds article i itself.
type CopyFinder interface {
	CopiesOf(ctx context.Context, feedID uuid.UUID, as []domain.ArticleDiscovered) (m []domain.CopyMatch, found []bool, err error)
}

// FindingCopies has articles that are copies of an item of their feed
// recorded as copies of it (NewsItemCopyFound) instead of becoming items.
// Without it every article is an item of its own.
func FindingCopies(f CopyFinder) Option {
	return func(h *Handler) { h.copies = &copyGuard{finder: f, feeds: map[uuid.UUID]*feedCopies{}} }
}

// FeedLocks closes, across processes, the window in which a copy lookup
// (the CopyFinder's or the HappeningCopyFinder's read model) cannot know
// an item another process has just added: Hold takes the feeds' locks
// shared by every process (feeds in any order), and release, after the
// call's append at res.Position, waits until the lookups' read models
// that res's events change show it before letting the next decider in.
// Feeds not in feedIDs are never waited on. The wait is bounded by the
// locks; past the bound release lets go anyway and says so in the log,
// not to its caller: the append is kept, so the call has not failed,
// though the next decider may not see what it added.
type FeedLocks interface {
	Hold(ctx context.Context, feedIDs []uuid.UUID) (release func(ctx context.Context, res Result), err error)
}

// DecidingCopiesAlone has FindingCopies and FindingHappeningCopies take
// the feeds' cross-process locks (FeedLocks) around finding copies and
// appending: two processes crawling for one feed at once then decide its
// copies one after the other, each seeing what the other added.
func DecidingCopiesAlone(l FeedLocks) Option {
	return func(h *Handler) { h.feedLocks = l }
}

// holdFeeds takes the feeds' cross-process locks when the handler has
// them; the release it returns is to be deferred with the call's result,
// and does nothing without them.
func (h *Handler) holdFeeds(ctx context.Context, feedIDs []uuid.UUID) (release func(res Result), err error) {
	if h.feedLocks == nil {
		return func(Result) {}, nil
	}
	rel, err := h.feedLocks.Hold(ctx, feedIDs)
	if err != nil {
		return nil, fmt.Errorf("hold the copy locks of %d feeds: %w", len(feedIDs), err)
	}
	return func(res Result) {
		// The wait is on a context of its own: a caller gone must still
		// let the next decider in once the append is visible.
		rel(context.WithoutCancel(ctx), res)
	}, nil
}

// recentFor is how long the guard remembers what it added: longer than a
// read model takes to reflect an append.
const recentFor = 2 * time.Minute

// copyGuard finds copies through the finder, and closes the window in
// which the finder cannot know an item this process has just added: a
// feed's items are decided one call at a time (its lock), and what a call
// added is remembered for recentFor. Two processes crawling for one feed
// at once can still each add a copy in that window unless FeedLocks closes
// it (DecidingCopiesAlone).
type copyGuard struct {
	finder CopyFinder
	mu     sync.Mutex
	feeds  map[uuid.UUID]*feedCopies
}

type feedCopies struct {
	lock   sync.Mutex
	recent pageIndex // guarded by copyGuard.mu
}

// recentItem is an article this process made an item or a copy of one.
type recentItem struct {
	newsPageID, itemNewsPageID uuid.UUID
	page                       nearcopy.Page
	address                    string
	bands                      []int64
	effectiveAt, at            time.Time
	// pos is the item's place in the one pageIndex that holds it
	// (pageIndex.items), by which candidates tells the items it has
	// listed.
	pos int
}

func newRecentItem(feedID, itemNewsPageID uuid.UUID, a domain.ArticleDiscovered, now time.Time) *recentItem {
	// Normalized once: the item is compared with every later article of
	// the feed that shares a band with it.
	page := a.Content.Page().Normalized()
	return &recentItem{
		newsPageID: a.NewsPageID, itemNewsPageID: itemNewsPageID, page: page, address: page.Normal,
		bands: page.Signature.Bands(feedID[:]), effectiveAt: a.EffectiveAt, at: now,
	}
}

// pageIndex finds the articles an article may be a copy of among some
// (as the read model's index does): those at its normal address or
// sharing a band of its signature.
type pageIndex struct {
	items     []*recentItem
	byAddress map[string][]*recentItem
	byBand    map[int64][]*recentItem
}

func (x *pageIndex) add(r *recentItem) {
	if x.byAddress == nil {
		x.byAddress, x.byBand = map[string][]*recentItem{}, map[int64][]*recentItem{}
	}
	r.pos = len(x.items)
	x.items = append(x.items, r)
	x.byAddress[r.address] = append(x.byAddress[r.address], r)
	for _, b := range r.bands {
		x.byBand[b] = append(x.byBand[b], r)
	}
}

// candidates are the items at r's address (r itself among them, an
// article having one URL) or sharing a band with it, each once. Listed
// ones are told by their place in the index, in a bit set: with a site
// whose pages all share bands, every item is a candidate of every
// article, and a map of them was most of the cost of the look.
func (x *pageIndex) candidates(r *recentItem) []*recentItem {
	out := slices.Clone(x.byAddress[r.address])
	seen := make([]uint64, (len(x.items)+63)/64)
	mark := func(c *recentItem) bool {
		w, b := c.pos/64, uint64(1)<<(c.pos%64)
		if seen[w]&b != 0 {
			return false
		}
		seen[w] |= b
		return true
	}
	for _, c := range out {
		mark(c)
	}
	for _, b := range r.bands {
		for _, c := range x.byBand[b] {
			if mark(c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// prune forgets what was added before since, once the oldest is older
// than since by another recentFor: rebuilding the index at every call
// made each article pay for every one remembered (7 % of a crawler's CPU
// at 1,000 sites). What is kept a little longer is still an item of the
// feed, which the finder would name as well.
func (x *pageIndex) prune(since time.Time) {
	if len(x.items) == 0 || !x.items[0].at.Before(since.Add(-recentFor)) {
		return
	}
	keep := slices.DeleteFunc(x.items, func(r *recentItem) bool { return r.at.Before(since) })
	*x = pageIndex{}
	for _, r := range keep {
		x.add(r)
	}
}

// lock takes the locks of the feeds, in order, and returns their release.
func (g *copyGuard) lock(feedIDs []uuid.UUID) func() {
	ids := slices.Clone(feedIDs)
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	ids = slices.Compact(ids)
	locked := make([]*feedCopies, 0, len(ids))
	for _, id := range ids {
		g.mu.Lock()
		f := g.feeds[id]
		if f == nil {
			f = &feedCopies{}
			g.feeds[id] = f
		}
		g.mu.Unlock()
		f.lock.Lock()
		locked = append(locked, f)
	}
	return func() {
		for _, f := range locked {
			f.lock.Unlock()
		}
	}
}

// recentCopy looks for the item of the feed r is a copy of among what this
// process added lately; own when r is one of them.
func (g *copyGuard) recentCopy(feedID uuid.UUID, r *recentItem, now time.Time) (m domain.CopyMatch, ok, own bool) {
	g.mu.Lock()
	var candidates []*recentItem
	if f := g.feeds[feedID]; f != nil {
		f.recent.prune(now.Add(-recentFor))
		candidates = f.recent.candidates(r)
	}
	g.mu.Unlock()
	return bestCopy(r, candidates)
}

// found are the finder's answers for the articles of a call, by feed.
type found struct {
	matches []domain.CopyMatch
	ok      []bool
}

// findAll asks the finder about the articles of cs, one question per feed;
// the answer for cs[i] is at out[feed].matches[at[i]].
func (g *copyGuard) findAll(ctx context.Context, cs []AddNewsItem) (out map[uuid.UUID]found, at []int, err error) {
	byFeed := map[uuid.UUID][]domain.ArticleDiscovered{}
	at = make([]int, len(cs))
	for i, c := range cs {
		at[i] = len(byFeed[c.FeedID])
		byFeed[c.FeedID] = append(byFeed[c.FeedID], c.Article)
	}
	out = make(map[uuid.UUID]found, len(byFeed))
	for feedID, as := range byFeed {
		m, ok, err := g.finder.CopiesOf(ctx, feedID, as)
		if err != nil {
			return nil, nil, fmt.Errorf("find copies of %d articles in feed %s: %w", len(as), feedID, err)
		}
		out[feedID] = found{m, ok}
	}
	return out, at, nil
}

// bestCopy is the item among candidates that r is the likeliest copy of;
// own when r is one of them itself.
func bestCopy(r *recentItem, candidates []*recentItem) (m domain.CopyMatch, ok, own bool) {
	for _, c := range candidates {
		if c.newsPageID == r.newsPageID {
			return domain.CopyMatch{}, false, true
		}
		if d := r.effectiveAt.Sub(c.effectiveAt); d > domain.CopyWindow || d < -domain.CopyWindow {
			continue
		}
		if v := nearcopy.Compare(c.page, r.page); v.Copy && (!ok || v.Similarity > m.Verdict.Similarity) {
			m, ok = domain.CopyMatch{NewsPageID: c.itemNewsPageID, Verdict: v}, true
		}
	}
	return m, ok, false
}

// remember notes an article the call added to a feed, as an item of its
// own (itemNewsPageID its own id) or as a copy.
func (g *copyGuard) remember(feedID, itemNewsPageID uuid.UUID, a domain.ArticleDiscovered, now time.Time) {
	r := newRecentItem(feedID, itemNewsPageID, a, now)
	g.mu.Lock()
	defer g.mu.Unlock()
	if f := g.feeds[feedID]; f != nil {
		f.recent.add(r)
	}
}

// SplitCopy splits a copy off an item of a news feed: the copy becomes an
// item of its own and is never merged into that item again.
type SplitCopy struct {
	FeedRef
	ItemID uuid.UUID
	// NewsPageID is the copy's article.
	NewsPageID uuid.UUID
}

// SplitCopy appends the split to the item's stream and the new item to the
// copy's, in one multi-stream append; it returns the new item's id.
func (h *Handler) SplitCopy(ctx context.Context, c SplitCopy) (uuid.UUID, Result, error) {
	ref, err := h.lookups.ItemRef(ctx, domain.FeedNews, c.Org, c.FeedID, c.ItemID)
	if err != nil {
		return uuid.Nil, Result{}, err
	}
	newID := h.newID("splitItem")
	// Decided in order in one attempt: the new item is what the split
	// decided, appended to the copy's own stream in the same append.
	var added domain.NewsItemAdded
	_, results, err := decideAll(ctx, h, []change[*domain.NewsItem]{{
		stream: domain.NewsItemStream(c.FeedID, ref.NewsPageID), org: c.Org,
		empty: func() *domain.NewsItem { return &domain.NewsItem{} },
		decide: func(it *domain.NewsItem) ([]domain.Event, error) {
			split, a, err := it.SplitCopy(c.Org, c.ItemID, c.NewsPageID, newID, h.now())
			if err != nil {
				return nil, err
			}
			added = a
			return []domain.Event{split}, nil
		},
	}, {
		stream: domain.NewsItemStream(c.FeedID, c.NewsPageID), org: c.Org,
		empty: func() *domain.NewsItem { return &domain.NewsItem{} },
		decide: func(it *domain.NewsItem) ([]domain.Event, error) {
			if it.Exists() {
				return nil, nil
			}
			return []domain.Event{added}, nil
		},
	}})
	if err != nil {
		return uuid.Nil, Result{}, fmt.Errorf("split copy %s off item %s: %w", c.NewsPageID, c.ItemID, err)
	}
	return added.ItemID, results[0].Merge(results[1]), nil
}
