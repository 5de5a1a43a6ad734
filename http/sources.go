package http

import (
	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel"
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
		return domain.SourceRequest{}, badRequest("sourceType", "is required")
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

type attachmentJSON struct {
	ID            string                `json:"id"`
	NewsFeedID    string                `json:"newsFeedId"`
	SourceType    string                `json:"sourceType"`
	SourceID      string                `json:"sourceId"`
	Enabled       bool                  `json:"enabled"`
	CreatedAt     string                `json:"createdAt"`
	SourceDetails *domain.SourceDetails `json:"sourceDetails,omitempty"`
}

func attachmentOut(a readmodel.NewsFeedSource, withDetails bool) attachmentJSON {
	out := attachmentJSON{
		ID: a.ID.String(), NewsFeedID: a.FeedID.String(), SourceType: a.SourceType,
		SourceID: a.SourceID.String(), Enabled: a.Enabled, CreatedAt: timestamp(a.CreatedAt),
	}
	if withDetails {
		d := a.Details
		out.SourceDetails = &d
	}
	return out
}

func (h *handlers) addNewsSource(c *fiber.Ctx) error {
	feedID, err := pathUUID(c, "feedId")
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
	org := organization(c)
	attID, res, err := h.Commands.AttachNewsSource(c.UserContext(), commands.AttachNewsSource{Org: org, FeedID: feedID, Request: req})
	if err != nil {
		return err
	}
	if err := h.wait(c, res); err != nil {
		return stored(err, "source", attID.String())
	}
	row, err := h.Queries.NewsFeedSource(c.UserContext(), org, feedID, attID)
	if err != nil {
		return err
	}
	return ok(c, fiber.StatusCreated, attachmentOut(row, true))
}

func (h *handlers) listNewsSources(c *fiber.Ctx) error {
	feedID, err := pathUUID(c, "feedId")
	if err != nil {
		return err
	}
	rows, err := h.Queries.NewsFeedSources(c.UserContext(), organization(c), feedID)
	if err != nil {
		return err
	}
	out := make([]attachmentJSON, 0, len(rows))
	for _, r := range rows {
		out = append(out, attachmentOut(r, false))
	}
	return ok(c, fiber.StatusOK, out)
}

type updateSourceBody struct {
	Enabled *bool `json:"enabled"`
}

func (h *handlers) updateNewsSource(c *fiber.Ctx) error {
	feedID, attID, err := pathUUIDs(c, "feedId", "sourceId")
	if err != nil {
		return err
	}
	var body updateSourceBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	if body.Enabled == nil {
		return badRequest("enabled", "is required")
	}
	org := organization(c)
	res, err := h.Commands.SetNewsSourceEnabled(c.UserContext(), commands.SetNewsSourceEnabled{
		Org: org, FeedID: feedID, AttachmentID: attID, Enabled: *body.Enabled,
	})
	if err != nil {
		return err
	}
	if err := h.wait(c, res); err != nil {
		return err
	}
	row, err := h.Queries.NewsFeedSource(c.UserContext(), org, feedID, attID)
	if err != nil {
		return err
	}
	return ok(c, fiber.StatusOK, attachmentOut(row, false))
}

func (h *handlers) deleteNewsSource(c *fiber.Ctx) error {
	feedID, attID, err := pathUUIDs(c, "feedId", "sourceId")
	if err != nil {
		return err
	}
	res, err := h.Commands.DetachNewsSource(c.UserContext(), commands.DetachNewsSource{Org: organization(c), FeedID: feedID, AttachmentID: attID})
	if err != nil {
		return err
	}
	if err := h.wait(c, res); err != nil {
		return err
	}
	return deleted(c)
}

// sourceRecordJSON is a source record (D4): its id, type, the normalized
// identity fields and when it was first registered.
type sourceRecordJSON struct {
	ID string `json:"id"`
	domain.SourceDetails
	CreatedAt string `json:"createdAt"`
}

func sourceRecordOut(s readmodel.Source) sourceRecordJSON {
	return sourceRecordJSON{ID: s.ID.String(), SourceDetails: s.Details, CreatedAt: timestamp(s.CreatedAt)}
}

func (h *handlers) createSource(c *fiber.Ctx) error {
	var body sourceBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	req, err := body.request(h.targets)
	if err != nil {
		return err
	}
	org := organization(c)
	src, created, res, err := h.Commands.RegisterSource(c.UserContext(), commands.RegisterSource{Org: org, Request: req})
	if err != nil {
		return err
	}
	if err := h.wait(c, res); err != nil {
		return stored(err, "source", src.ID().String())
	}
	row, err := h.Queries.Source(c.UserContext(), org, src.ID())
	if err != nil {
		return err
	}
	status := fiber.StatusOK
	if created {
		status = fiber.StatusCreated
	}
	return ok(c, status, sourceRecordOut(row))
}

func (h *handlers) listSources(c *fiber.Ctx) error {
	rows, err := h.Queries.Sources(c.UserContext(), organization(c))
	if err != nil {
		return err
	}
	out := make([]sourceRecordJSON, 0, len(rows))
	for _, r := range rows {
		out = append(out, sourceRecordOut(r))
	}
	return ok(c, fiber.StatusOK, out)
}

func (h *handlers) getSource(c *fiber.Ctx) error {
	id, err := pathUUID(c, "id")
	if err != nil {
		return err
	}
	row, err := h.Queries.Source(c.UserContext(), organization(c), id)
	if err != nil {
		return err
	}
	return ok(c, fiber.StatusOK, sourceRecordOut(row))
}
