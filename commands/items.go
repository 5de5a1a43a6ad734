package commands

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
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
	content, err := domain.NewArticleContent(c.Content)
	if err != nil {
		return Discovered{}, Result{}, err
	}
	stream := domain.ArticleStream(content.URL)
	var out Discovered
	var res Result
	err = retry(ctx, func() error {
		events, err := h.readStream(ctx, stream)
		if err != nil {
			return err
		}
		article := &domain.Article{}
		for _, e := range events {
			article.Apply(e)
		}
		decided := domain.DiscoverArticle(article, h.newID(), h.newID(), c.SourceID, content, c.LastMod, h.now())
		if res, err = h.append(ctx, stream, expectedAfter(len(events)), uuid.Nil, decided); err != nil {
			return err
		}
		for _, e := range decided {
			article.Apply(e)
		}
		out = Discovered{ArticleDiscovered: article.Discovery(), New: len(events) == 0}
		return nil
	})
	if err != nil {
		return Discovered{}, Result{}, fmt.Errorf("discover article %s: %w", content.URL, err)
	}
	return out, res, nil
}

// AddNewsItem puts an article into a feed through one of its attachments.
type AddNewsItem struct {
	FeedID         uuid.UUID
	OrganizationID uuid.UUID
	AttachmentID   uuid.UUID
	SourceID       uuid.UUID
	SourceType     domain.SourceType
	Article        domain.ArticleDiscovered
}

// AddNewsItem appends the item unless the feed already has the article;
// added is false in that case.
func (h *Handler) AddNewsItem(ctx context.Context, c AddNewsItem) (added bool, res Result, err error) {
	e := domain.NewsItemAdded{
		ItemID: h.newID(), FeedID: c.FeedID, OrganizationID: c.OrganizationID, AttachmentID: c.AttachmentID,
		SourceID: c.SourceID, SourceType: c.SourceType, NewsPageID: c.Article.NewsPageID,
		VersionID: c.Article.VersionID, Content: c.Article.Content, At: h.now(),
	}
	res, err = h.append(ctx, domain.NewsItemStream(c.FeedID, c.Article.NewsPageID), eventstore.NoStream(), c.OrganizationID, []domain.Event{e})
	if errors.Is(err, eventstore.ErrWrongExpectedVersion) {
		return false, Result{}, nil
	}
	if err != nil {
		return false, Result{}, fmt.Errorf("add article %s to feed %s: %w", c.Article.NewsPageID, c.FeedID, err)
	}
	return true, res, nil
}

// ItemRef is what feedback needs to know about an item.
type ItemRef struct {
	FeedID     uuid.UUID
	NewsPageID uuid.UUID
	SourceID   uuid.UUID
}

// GiveFeedback rates an item.
type GiveFeedback struct {
	Org     uuid.UUID
	FeedID  uuid.UUID
	ItemID  uuid.UUID
	Rating  string
	Comment string
}

// GiveFeedback validates and appends feedback to the item's stream.
func (h *Handler) GiveFeedback(ctx context.Context, c GiveFeedback) (uuid.UUID, Result, error) {
	fb, err := domain.NewFeedback(c.Rating, c.Comment)
	if err != nil {
		return uuid.Nil, Result{}, err
	}
	ref, err := h.lookups.NewsItemRef(ctx, c.Org, c.FeedID, c.ItemID)
	if err != nil {
		return uuid.Nil, Result{}, err
	}
	id := h.newID()
	e := domain.FeedbackGiven{
		FeedbackID: id, ItemID: c.ItemID, FeedID: c.FeedID, OrganizationID: c.Org, NewsPageID: ref.NewsPageID,
		SourceID: ref.SourceID, Rating: fb.Rating, Comment: fb.Comment, At: h.now(),
	}
	res, err := h.append(ctx, domain.NewsItemStream(c.FeedID, ref.NewsPageID), eventstore.StreamExists(), c.Org, []domain.Event{e})
	if err != nil {
		return uuid.Nil, Result{}, fmt.Errorf("give feedback on item %s: %w", c.ItemID, err)
	}
	return id, res, nil
}
