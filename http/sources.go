package http

import (
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// sourceBody is the body of a source add (api.md 4.3), also taken by
// POST /sources (D4). Neutral platform words are accepted as aliases (D1).
type sourceBody struct {
	SourceType    *string `json:"sourceType"`
	Domain        *string `json:"domain"`
	URL           *string `json:"url"`
	SiteID        *string `json:"siteId"`
	Username      *string `json:"username"`
	FacebookType  *string `json:"facebookType"`
	SocialnetType *string `json:"socialnetType"`
	Identifier    *string `json:"identifier"`
}

// request is the body as the domain takes it, under the operator's rule
// for what a source may name.
func (b sourceBody) request(targets domain.TargetPolicy) (domain.SourceRequest, error) {
	if b.SourceType == nil {
		return domain.SourceRequest{}, envelope.BadRequest("sourceType", "is required")
	}
	fbType := b.FacebookType
	if fbType == nil {
		fbType = b.SocialnetType
	}
	return domain.SourceRequest{
		SourceType: *b.SourceType, Domain: b.Domain, URL: b.URL, SiteID: b.SiteID,
		Username: b.Username, FacebookType: fbType, Identifier: b.Identifier, Targets: targets,
	}, nil
}

// attachmentJSON is a news feed source (api.md 2.2) or an event feed
// source (2.8): they differ in the name of the feed member and in that
// only news attachments are switched on and off.
type attachmentJSON struct {
	ID            string                `json:"id"`
	NewsFeedID    string                `json:"newsFeedId,omitempty"`
	EventFeedID   string                `json:"eventFeedId,omitempty"`
	SourceType    string                `json:"sourceType"`
	SourceID      string                `json:"sourceId"`
	Enabled       *bool                 `json:"enabled,omitempty"`
	CreatedAt     string                `json:"createdAt"`
	SourceDetails *domain.SourceDetails `json:"sourceDetails,omitempty"`
}

func attachmentOut(kind domain.FeedKind, a domain.Attachment, withDetails bool) attachmentJSON {
	out := attachmentJSON{
		ID: a.ID.String(), SourceType: string(a.SourceType), SourceID: a.SourceID.String(), CreatedAt: shape.Timestamp(a.CreatedAt),
	}
	if kind == domain.FeedHappenings {
		out.EventFeedID = a.FeedID.String()
	} else {
		enabled := a.Enabled
		out.NewsFeedID, out.Enabled = a.FeedID.String(), &enabled
	}
	if withDetails {
		d := a.Details
		out.SourceDetails = &d
	}
	return out
}

func (h *handlers) addNewsSource(c *fiber.Ctx) error {
	ref, err := newsFeed(c)
	if err != nil {
		return err
	}
	var body sourceBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	req, err := body.request(h.targets)
	if err != nil {
		return err
	}
	att, err := create(c, h, "source", attachmentID, (*commands.Handler).AttachSource, commands.AttachSource{FeedRef: ref, Request: req})
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusCreated, attachmentOut(domain.FeedNews, att, true))
}

// feedOfPath names the feed of a request's path for its caller.
type feedOfPath func(c *fiber.Ctx) (commands.FeedRef, error)

// listAttachments lists the attachments of the path's feed, of any kind.
func (h *handlers) listAttachments(feedOf feedOfPath) fiber.Handler {
	return func(c *fiber.Ctx) error { return h.listFeedSources(c, feedOf) }
}

func (h *handlers) listFeedSources(c *fiber.Ctx, feedOf feedOfPath) error {
	ref, err := feedOf(c)
	if err != nil {
		return err
	}
	rows, err := h.Reads.Feeds.FeedSources(c.UserContext(), ref.Kind, ref.Org, ref.FeedID)
	if err != nil {
		return err
	}
	out := make([]attachmentJSON, 0, len(rows))
	for _, r := range rows {
		out = append(out, attachmentOut(ref.Kind, r.Attachment(), false))
	}
	return envelope.OK(c, fiber.StatusOK, out)
}

type updateSourceBody struct {
	Enabled *bool `json:"enabled"`
}

func (h *handlers) updateNewsSource(c *fiber.Ctx) error {
	ref, err := newsFeed(c)
	if err != nil {
		return err
	}
	attID, err := pathUUID(c, "sourceId")
	if err != nil {
		return err
	}
	var body updateSourceBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	if body.Enabled == nil {
		return envelope.BadRequest("enabled", "is required")
	}
	cmd := commands.SetSourceEnabled{FeedRef: ref, AttachmentID: attID, Enabled: *body.Enabled}
	att, err := write(c, h, (*commands.Handler).SetSourceEnabled, cmd)
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusOK, attachmentOut(domain.FeedNews, att, false))
}

// detachSource detaches an attachment from the path's feed, of any kind.
func (h *handlers) detachSource(feedOf feedOfPath) fiber.Handler {
	return func(c *fiber.Ctx) error { return h.deleteFeedSource(c, feedOf) }
}

func (h *handlers) deleteFeedSource(c *fiber.Ctx, feedOf feedOfPath) error {
	ref, err := feedOf(c)
	if err != nil {
		return err
	}
	attID, err := pathUUID(c, "sourceId")
	if err != nil {
		return err
	}
	if err := writeDone(c, h, (*commands.Handler).DetachSource, commands.DetachSource{FeedRef: ref, AttachmentID: attID}); err != nil {
		return err
	}
	return envelope.Deleted(c)
}

// sourceRecordJSON is a source record (D4) as the caller's organization
// sees it: its id, type, the normalized identity fields (with the siteId
// this organization gave) and when this organization first registered it.
type sourceRecordJSON struct {
	ID string `json:"id"`
	domain.SourceDetails
	CreatedAt string `json:"createdAt"`
	// Polling is in a source's own detail only, once the crawler has
	// scheduled it for one of the organization's feeds.
	Polling *sourcePollingJSON `json:"polling,omitempty"`
}

// sourcePollingJSON is the crawler's schedule of a source; the intervals
// are seconds, null when not known yet.
type sourcePollingJSON struct {
	NextPollAt              string   `json:"nextPollAt"`
	LastPollAt              *string  `json:"lastPollAt"`
	IntervalSeconds         *float64 `json:"intervalSeconds"`
	ObservedIntervalSeconds *float64 `json:"observedIntervalSeconds"`
	FreshnessSeconds        *float64 `json:"freshnessSeconds"`
	ConsecutiveFailures     int      `json:"consecutiveFailures"`
	IntervalReason          *string  `json:"intervalReason"`
	// Push is the source's WebSub subscription, when a feed of it names a
	// hub (websub.go).
	Push *sourcePushJSON `json:"push,omitempty"`
}

func sourcePollingOut(p SourcePolling) *sourcePollingJSON {
	secs := func(d time.Duration) *float64 {
		if d <= 0 {
			return nil
		}
		s := d.Seconds()
		return &s
	}
	out := &sourcePollingJSON{NextPollAt: shape.Timestamp(p.NextPollAt), IntervalSeconds: secs(p.Interval),
		ObservedIntervalSeconds: secs(p.ObservedInterval), FreshnessSeconds: secs(p.Freshness), ConsecutiveFailures: p.Failures}
	if p.LastPollAt != nil {
		t := shape.Timestamp(*p.LastPollAt)
		out.LastPollAt = &t
	}
	if p.Reason != "" {
		out.IntervalReason = &p.Reason
	}
	return out
}

func sourceRecordOut(v domain.SourceView) sourceRecordJSON {
	return sourceRecordJSON{ID: v.ID.String(), SourceDetails: v.Details, CreatedAt: shape.Timestamp(v.CreatedAt)}
}

// createSource answers 201 the first time the organization registers an
// identity and 200 after, from its own view of the shared record: nothing
// in the answer tells whether another organization registered it.
func (h *handlers) createSource(c *fiber.Ctx) error {
	var body sourceBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	req, err := body.request(h.targets)
	if err != nil {
		return err
	}
	reg, err := create(c, h, "source", func(r commands.Registered) uuid.UUID { return r.ID }, (*commands.Handler).RegisterSource, commands.RegisterSource{Org: organization(c), Request: req})
	if err != nil {
		return err
	}
	status := fiber.StatusOK
	if reg.Created {
		status = fiber.StatusCreated
	}
	return envelope.OK(c, status, sourceRecordOut(reg.SourceView))
}

func (h *handlers) listSources(c *fiber.Ctx) error {
	rows, err := h.Reads.Sources.Sources(c.UserContext(), organization(c))
	if err != nil {
		return err
	}
	out := make([]sourceRecordJSON, 0, len(rows))
	for _, r := range rows {
		out = append(out, sourceRecordOut(r.View()))
	}
	return envelope.OK(c, fiber.StatusOK, out)
}

func (h *handlers) getSource(c *fiber.Ctx) error {
	id, err := pathUUID(c, "id")
	if err != nil {
		return err
	}
	row, err := h.Reads.Sources.Source(c.UserContext(), organization(c), id)
	if err != nil {
		return err
	}
	out := sourceRecordOut(row.View())
	if h.Polling != nil {
		p, ok, err := h.Polling(c.UserContext(), organization(c), id)
		if err != nil {
			return err
		}
		if ok {
			out.Polling = sourcePollingOut(p)
			if out.Polling.Push, err = h.pushOf(c, id); err != nil {
				return err
			}
		}
	}
	return envelope.OK(c, fiber.StatusOK, out)
}

// attachmentID names what an attach made.
func attachmentID(a domain.Attachment) uuid.UUID { return a.ID }
