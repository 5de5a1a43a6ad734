package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// DiscoverArticle records content found through a source record.
type DiscoverArticle struct {
	SourceID uuid.UUID
	Content  domain.ArticleContent
	// LastMod is the sitemap's lastmod, used when the page has no date.
	LastMod *time.Time
}

// Discovered is the article as stored, whether new or known.
type Discovered struct {
	domain.ArticleDiscovered
	New bool
}

// DiscoverArticle stores a new article or links a known one to the source.
func (h *Handler) DiscoverArticle(ctx context.Context, c DiscoverArticle) (Discovered, Result, error) {
	found, res, err := h.DiscoverArticles(ctx, []DiscoverArticle{c})
	if err != nil {
		return Discovered{}, Result{}, err
	}
	return found[0], res, nil
}

// DiscoverArticles is DiscoverArticle for several articles, recorded
// together: their events commit in one multi-stream append (see
// decideAll). It returns each article as stored, in order, and where the
// appends landed.
func (h *Handler) DiscoverArticles(ctx context.Context, cs []DiscoverArticle) ([]Discovered, Result, error) {
	changes := make([]change[*domain.Article], len(cs))
	isNew := make([]bool, len(cs))
	for i, c := range cs {
		content, err := domain.NewArticleContent(c.Content)
		if err != nil {
			return nil, Result{}, fmt.Errorf("discover article %s: %w", c.Content.URL, err)
		}
		changes[i] = change[*domain.Article]{
			stream: domain.ArticleStream(content.URL), mostlyNew: true,
			empty: func() *domain.Article { return &domain.Article{} },
			decide: func(a *domain.Article) ([]domain.Event, error) {
				events := a.Discover(h.newID("article"), h.newID("newsPage"), c.SourceID, content, c.LastMod, h.now())
				isNew[i] = len(events) == 1 && events[0].EventType() == domain.ArticleDiscovered{}.EventType()
				return events, nil
			},
		}
	}
	articles, results, err := decideAll(ctx, h, changes)
	if err != nil {
		return nil, Result{}, fmt.Errorf("discover %d articles: %w", len(cs), err)
	}
	out := make([]Discovered, len(cs))
	var res Result
	for i, a := range articles {
		out[i] = Discovered{ArticleDiscovered: a.Discovery(), New: isNew[i]}
		res = res.Merge(results[i])
	}
	return out, res, nil
}

// AddNewsItem puts an article into a feed through one of its attachments.
type AddNewsItem struct {
	domain.ItemTarget
	Article domain.ArticleDiscovered
}

// AddNewsItem appends the item unless the feed already has the article;
// added is false in that case.
func (h *Handler) AddNewsItem(ctx context.Context, c AddNewsItem) (added bool, res Result, err error) {
	all, res, err := h.AddNewsItems(ctx, []AddNewsItem{c})
	if err != nil {
		return false, Result{}, err
	}
	return all[0], res, nil
}

// AddNewsItems is AddNewsItem for several items, appended together: they
// commit in one multi-stream append (see decideAll). added says, in
// order, which feeds did not have their article yet. With FindingCopies,
// an article that is a copy of an item of its feed (one already there, or
// one added earlier in the call) is recorded as that item's copy instead
// (NewsItemCopyFound) and is not added.
func (h *Handler) AddNewsItems(ctx context.Context, cs []AddNewsItem) (added []bool, res Result, err error) {
	if h.copies == nil {
		return h.addNewsItems(ctx, cs)
	}
	feedIDs := make([]uuid.UUID, len(cs))
	for i, c := range cs {
		feedIDs[i] = c.FeedID
	}
	defer h.copies.lock(feedIDs)()
	release, err := h.holdFeeds(ctx, feedIDs)
	if err != nil {
		return nil, Result{}, err
	}
	// kept is what the call appended, which the next decider is to see
	// even when a later append of the call fails.
	var kept Result
	defer func() { release(kept) }()
	now := h.now()
	// Each item is an add of its own, or a copy of an item (copyOf).
	copyOf := make([]domain.CopyMatch, len(cs))
	isCopy := make([]bool, len(cs))
	// What the read model knows is asked once per feed; what this
	// process added lately, and what the call adds before, come first.
	known, at, err := h.copies.findAll(ctx, cs)
	if err != nil {
		return nil, Result{}, err
	}
	earlier := map[uuid.UUID]*pageIndex{}
	for i, c := range cs {
		x := earlier[c.FeedID]
		if x == nil {
			x = &pageIndex{}
			earlier[c.FeedID] = x
		}
		r := newRecentItem(c.FeedID, c.Article.NewsPageID, c.Article, now)
		m, ok, own := bestCopy(r, x.candidates(r))
		if !ok && !own {
			m, ok, own = h.copies.recentCopy(c.FeedID, r, now)
		}
		if !ok && !own {
			f := known[c.FeedID]
			m, ok = f.matches[at[i]], f.ok[at[i]]
		}
		if ok {
			copyOf[i], isCopy[i] = m, true
			continue
		}
		x.add(r)
	}
	changes := make([]change[*domain.NewsItem], len(cs))
	own := make([]bool, len(cs))
	for i, c := range cs {
		if !isCopy[i] {
			changes[i] = h.newsItemChange(c)
			continue
		}
		to, m := c.ItemTarget, copyOf[i]
		changes[i] = change[*domain.NewsItem]{
			stream: domain.NewsItemStream(c.FeedID, m.NewsPageID), org: c.OrganizationID,
			empty: func() *domain.NewsItem { return &domain.NewsItem{} },
			decide: func(it *domain.NewsItem) ([]domain.Event, error) {
				events, ownItem := it.AddCopy(to, c.Article, m.Verdict, h.now())
				own[i] = ownItem
				return events, nil
			},
		}
	}
	_, results, err := decideAll(ctx, h, changes)
	if err != nil {
		return nil, Result{}, fmt.Errorf("add %d news items: %w", len(cs), err)
	}
	added = make([]bool, len(cs))
	var alone []int // copies that are to be items of their own after all
	for i, r := range results {
		res = res.Merge(r)
		switch {
		case isCopy[i] && own[i]:
			alone = append(alone, i)
		case isCopy[i]:
			h.copies.remember(cs[i].FeedID, copyOf[i].NewsPageID, cs[i].Article, now)
		default:
			added[i] = !r.Empty()
			h.copies.remember(cs[i].FeedID, cs[i].Article.NewsPageID, cs[i].Article, now)
		}
	}
	kept = res
	if len(alone) > 0 {
		rest := make([]AddNewsItem, len(alone))
		for j, i := range alone {
			rest[j] = cs[i]
		}
		more, r, err := h.addNewsItems(ctx, rest)
		if err != nil {
			return nil, Result{}, err
		}
		res = res.Merge(r)
		kept = res
		for j, i := range alone {
			added[i] = more[j]
			h.copies.remember(cs[i].FeedID, cs[i].Article.NewsPageID, cs[i].Article, now)
		}
	}
	return added, res, nil
}

// newsItemChange is the add of an article to a feed as an item of its own.
func (h *Handler) newsItemChange(c AddNewsItem) change[*domain.NewsItem] {
	to := c.ItemTarget
	return change[*domain.NewsItem]{
		stream: domain.NewsItemStream(c.FeedID, c.Article.NewsPageID), org: c.OrganizationID, mostlyNew: true,
		empty: func() *domain.NewsItem { return &domain.NewsItem{} },
		decide: func(it *domain.NewsItem) ([]domain.Event, error) {
			return it.Add(h.newID("newsItem"), to, c.Article, h.now()), nil
		},
	}
}

// addNewsItems adds each article as an item of its own.
func (h *Handler) addNewsItems(ctx context.Context, cs []AddNewsItem) (added []bool, res Result, err error) {
	changes := make([]change[*domain.NewsItem], len(cs))
	for i, c := range cs {
		changes[i] = h.newsItemChange(c)
	}
	_, results, err := decideAll(ctx, h, changes)
	if err != nil {
		return nil, Result{}, fmt.Errorf("add %d news items: %w", len(cs), err)
	}
	added = make([]bool, len(cs))
	for i, r := range results {
		added[i] = !r.Empty()
		res = res.Merge(r)
	}
	return added, res, nil
}

// GiveFeedback rates an item of a feed of any kind.
type GiveFeedback struct {
	FeedRef
	ItemID  uuid.UUID
	Rating  string
	Comment string
}

// ratable is an item aggregate that takes feedback: a news item or an
// event item.
type ratable interface {
	domain.Aggregate
	GiveFeedback(id, itemID, org uuid.UUID, fb domain.Feedback, now time.Time) ([]domain.Event, error)
}

// GiveFeedback validates and appends feedback to the item's stream.
func (h *Handler) GiveFeedback(ctx context.Context, c GiveFeedback) (uuid.UUID, Result, error) {
	fb, err := domain.NewFeedback(c.Rating, c.Comment)
	if err != nil {
		return uuid.Nil, Result{}, err
	}
	ref, err := h.lookups.ItemRef(ctx, c.Kind, c.Org, c.FeedID, c.ItemID)
	if err != nil {
		return uuid.Nil, Result{}, err
	}
	id := h.newID("feedback")
	var res Result
	switch stream := domain.ItemStream(c.Kind, ref); c.Kind {
	case domain.FeedHappenings:
		res, err = rate(ctx, h, c, id, fb, stream, func() *domain.HappeningItem { return &domain.HappeningItem{} })
	default:
		res, err = rate(ctx, h, c, id, fb, stream, func() *domain.NewsItem { return &domain.NewsItem{} })
	}
	if err != nil {
		return uuid.Nil, Result{}, fmt.Errorf("give feedback on item %s: %w", c.ItemID, err)
	}
	return id, res, nil
}

// rate decides feedback on the item in stream.
func rate[A ratable](ctx context.Context, h *Handler, c GiveFeedback, id uuid.UUID, fb domain.Feedback, stream string, empty func() A) (Result, error) {
	_, res, err := decide(ctx, h, change[A]{
		stream: stream, org: c.Org, empty: empty,
		decide: func(i A) ([]domain.Event, error) {
			return i.GiveFeedback(id, c.ItemID, c.Org, fb, h.now())
		},
	})
	return res, err
}
