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

// Registered is a record as the registering organization sees it; Created
// is true the first time that organization registered the identity.
type Registered struct {
	domain.SourceView
	Created bool
}

// AttachSource registers (or reuses) a source record and attaches it to a
// feed.
type AttachSource struct {
	FeedRef
	Request domain.SourceRequest
}

// SetSourceEnabled enables or disables an attachment.
type SetSourceEnabled struct {
	FeedRef
	AttachmentID uuid.UUID
	Enabled      bool
}

// DetachSource removes an attachment.
type DetachSource struct {
	FeedRef
	AttachmentID uuid.UUID
}

// RegisterSource creates the record for an identity, or links the existing
// one to the organization.
func (h *Handler) RegisterSource(ctx context.Context, c RegisterSource) (Registered, Result, error) {
	details, err := h.sourceDetails(ctx, c.Org, c.Request)
	if err != nil {
		return Registered{}, Result{}, err
	}
	src, created, res, err := h.register(ctx, c.Org, details)
	if err != nil {
		return Registered{}, Result{}, err
	}
	view, _ := src.ViewFor(c.Org)
	return Registered{SourceView: view, Created: created}, res, nil
}

// register is RegisterSource for validated details.
func (h *Handler) register(ctx context.Context, org uuid.UUID, details domain.SourceDetails) (*domain.Source, bool, Result, error) {
	created := false
	src, res, err := decide(ctx, h, change[*domain.Source]{
		stream: domain.SourceStream(details), org: org,
		empty: func() *domain.Source { return &domain.Source{} },
		decide: func(s *domain.Source) ([]domain.Event, error) {
			events := s.Register(h.newID("source"), details, org, h.now())
			created = len(events) > 0
			return events, nil
		},
	})
	if err != nil {
		return nil, false, Result{}, fmt.Errorf("register source: %w", err)
	}
	return src, created, res, nil
}

// AttachSource attaches a source to a feed, registering the record first,
// and returns the new attachment.
func (h *Handler) AttachSource(ctx context.Context, c AttachSource) (domain.Attachment, Result, error) {
	// Check the feed first so that a request for a missing feed leaves no
	// trace, not even a source record.
	if _, _, err := h.changeFeed(ctx, c.FeedRef, noChange); err != nil {
		return domain.Attachment{}, Result{}, err
	}
	details, err := h.sourceDetails(ctx, c.Org, c.Request)
	if err != nil {
		return domain.Attachment{}, Result{}, err
	}
	return h.attach(ctx, c.FeedRef, details)
}

// AttachSourceRecord attaches an existing source record by its id, as event
// feeds do (api.md 4.5, D4): the record must be one the organization knows,
// of the type the caller names.
type AttachSourceRecord struct {
	FeedRef
	SourceType string
	SourceID   uuid.UUID
}

// AttachSourceRecord attaches a record the organization registered.
func (h *Handler) AttachSourceRecord(ctx context.Context, c AttachSourceRecord) (domain.Attachment, Result, error) {
	sourceType, err := domain.ParseSourceType(c.SourceType)
	if err != nil {
		return domain.Attachment{}, Result{}, err
	}
	if _, _, err := h.changeFeed(ctx, c.FeedRef, noChange); err != nil {
		return domain.Attachment{}, Result{}, err
	}
	details, err := h.lookups.SourceDetails(ctx, c.Org, c.SourceID)
	if err != nil {
		return domain.Attachment{}, Result{}, fmt.Errorf("look up source %s: %w", c.SourceID, err)
	}
	if details.SourceType != sourceType {
		return domain.Attachment{}, Result{}, &domain.ValidationError{Field: "sourceType", Issue: "does not match the source record's type"}
	}
	return h.attach(ctx, c.FeedRef, details)
}

// attach registers the record for the organization (a no-op when it has
// it) and attaches it with the details the organization gave.
func (h *Handler) attach(ctx context.Context, ref FeedRef, details domain.SourceDetails) (domain.Attachment, Result, error) {
	src, _, regRes, err := h.register(ctx, ref.Org, details)
	if err != nil {
		return domain.Attachment{}, Result{}, err
	}
	id := h.newID("attachment")
	feed, res, err := h.changeFeed(ctx, ref, func(f *domain.Feed) ([]domain.Event, error) {
		return f.AttachSource(id, src, details, h.now())
	})
	if err != nil {
		return domain.Attachment{}, Result{}, err
	}
	att, _ := feed.Attachment(id)
	return att, regRes.Merge(res), nil
}

func noChange(*domain.Feed) ([]domain.Event, error) { return nil, nil }

// SetSourceEnabled enables or disables an attachment and returns it.
func (h *Handler) SetSourceEnabled(ctx context.Context, c SetSourceEnabled) (domain.Attachment, Result, error) {
	feed, res, err := h.changeFeed(ctx, c.FeedRef, func(f *domain.Feed) ([]domain.Event, error) {
		return f.SetSourceEnabled(c.AttachmentID, c.Enabled, h.now())
	})
	if err != nil {
		return domain.Attachment{}, Result{}, err
	}
	att, _ := feed.Attachment(c.AttachmentID)
	return att, res, nil
}

// DetachSource removes an attachment.
func (h *Handler) DetachSource(ctx context.Context, c DetachSource) (Result, error) {
	_, res, err := h.changeFeed(ctx, c.FeedRef, func(f *domain.Feed) ([]domain.Event, error) {
		return f.DetachSource(c.AttachmentID, h.now())
	})
	return res, err
}

// check has the source checker look the source up, when there is one.
func (h *Handler) check(ctx context.Context, d domain.SourceDetails) error {
	if h.sources == nil {
		return nil
	}
	return h.sources.CheckSource(ctx, d)
}

// sourceDetails validates a request, including that a referenced site is a
// site record the organization knows and that a platform account exists
// (the source checker's lookup, made before anything is stored).
func (h *Handler) sourceDetails(ctx context.Context, org uuid.UUID, r domain.SourceRequest) (domain.SourceDetails, error) {
	details, err := domain.NewSourceDetails(r)
	if err != nil {
		return domain.SourceDetails{}, err
	}
	if details.SourceType.IsPlatform() && h.sources == nil {
		return domain.SourceDetails{}, fmt.Errorf("source type %s: %w", details.SourceType, domain.ErrUnsupported)
	}
	if details.SiteID == nil {
		return details, h.check(ctx, details)
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
