package commands

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// RegisterSource makes a source record known to an organization (D4).
type RegisterSource struct {
	Org     uuid.UUID
	Request domain.SourceRequest
}

// AttachNewsSource registers (or reuses) a source record and attaches it to
// a news feed.
type AttachNewsSource struct {
	Org     uuid.UUID
	FeedID  uuid.UUID
	Request domain.SourceRequest
}

// SetNewsSourceEnabled enables or disables an attachment.
type SetNewsSourceEnabled struct {
	Org          uuid.UUID
	FeedID       uuid.UUID
	AttachmentID uuid.UUID
	Enabled      bool
}

// DetachNewsSource removes an attachment.
type DetachNewsSource struct {
	Org          uuid.UUID
	FeedID       uuid.UUID
	AttachmentID uuid.UUID
}

// RegisterSource creates the record for an identity, or links the existing
// one to the organization. created is true when the record is new.
func (h *Handler) RegisterSource(ctx context.Context, c RegisterSource) (src *domain.Source, created bool, res Result, err error) {
	details, err := h.sourceDetails(ctx, c.Org, c.Request)
	if err != nil {
		return nil, false, Result{}, err
	}
	return h.register(ctx, c.Org, details)
}

// register is RegisterSource for validated details.
func (h *Handler) register(ctx context.Context, org uuid.UUID, details domain.SourceDetails) (src *domain.Source, created bool, res Result, err error) {
	stream := domain.SourceStream(details)
	err = retry(ctx, func() error {
		events, seen, err := h.readStreamSeen(ctx, stream)
		if err != nil {
			return err
		}
		src = &domain.Source{}
		for _, e := range events {
			src.Apply(e)
		}
		decided, isNew := domain.RegisterSource(src, h.newID(), details, org, h.now())
		if res, err = h.appendDecided(ctx, stream, expectedAfter(len(events)), org, decided, seen); err != nil {
			return err
		}
		for _, e := range decided {
			src.Apply(e)
		}
		created = isNew
		return nil
	})
	if err != nil {
		return nil, false, Result{}, fmt.Errorf("register source: %w", err)
	}
	return src, created, res, nil
}

// AttachNewsSource attaches a source to a feed, registering the record
// first, and returns the new attachment's id.
func (h *Handler) AttachNewsSource(ctx context.Context, c AttachNewsSource) (uuid.UUID, Result, error) {
	// Check the feed first so that a request for a missing feed leaves no
	// trace, not even a source record.
	if _, err := h.LoadNewsFeed(ctx, c.Org, c.FeedID); err != nil {
		return uuid.Nil, Result{}, err
	}
	details, err := h.sourceDetails(ctx, c.Org, c.Request)
	if err != nil {
		return uuid.Nil, Result{}, err
	}
	src, _, regRes, err := h.register(ctx, c.Org, details)
	if err != nil {
		return uuid.Nil, Result{}, err
	}
	id := h.newID()
	res, err := h.changeFeed(ctx, c.Org, c.FeedID, func(f *domain.NewsFeed) error {
		return f.AttachSource(id, src, details, h.now())
	})
	if err != nil {
		return uuid.Nil, Result{}, err
	}
	return id, regRes.Merge(res), nil
}

// SetNewsSourceEnabled enables or disables an attachment.
func (h *Handler) SetNewsSourceEnabled(ctx context.Context, c SetNewsSourceEnabled) (Result, error) {
	return h.changeFeed(ctx, c.Org, c.FeedID, func(f *domain.NewsFeed) error {
		return f.SetSourceEnabled(c.AttachmentID, c.Enabled, h.now())
	})
}

// DetachNewsSource removes an attachment.
func (h *Handler) DetachNewsSource(ctx context.Context, c DetachNewsSource) (Result, error) {
	return h.changeFeed(ctx, c.Org, c.FeedID, func(f *domain.NewsFeed) error {
		return f.DetachSource(c.AttachmentID, h.now())
	})
}

// sourceDetails validates a request, including that a referenced site is a
// site record the organization knows.
func (h *Handler) sourceDetails(ctx context.Context, org uuid.UUID, r domain.SourceRequest) (domain.SourceDetails, error) {
	details, err := domain.NewSourceDetails(r)
	if err != nil {
		return domain.SourceDetails{}, err
	}
	if details.SourceType.IsPlatform() {
		return domain.SourceDetails{}, fmt.Errorf("source type %s: %w", details.SourceType, domain.ErrUnsupported)
	}
	if details.SiteID == nil {
		return details, nil
	}
	site, err := h.lookups.SourceDetails(ctx, org, *details.SiteID)
	if err != nil {
		return domain.SourceDetails{}, fmt.Errorf("look up site %s: %w", details.SiteID, err)
	}
	if site.SourceType != domain.SourceSite {
		return domain.SourceDetails{}, &domain.ValidationError{Field: "siteId", Issue: "must be the sourceId of a site source"}
	}
	return details, nil
}
