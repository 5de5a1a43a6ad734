package http

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// eventFeedJSON is an event feed (api.md 2.7). EnabledReason is always in
// the create answer (null without a reason) and elsewhere only when the
// feed has one, as the spec's examples show it.
type eventFeedJSON struct {
	ID            string             `json:"id"`
	Name          string             `json:"name"`
	Description   string             `json:"description"`
	Enabled       bool               `json:"enabled"`
	EnabledSource string             `json:"enabledSource"`
	EnabledReason *json.RawMessage   `json:"enabledReason,omitempty"`
	Config        *domain.FeedConfig `json:"config"`
	CreatedAt     string             `json:"createdAt"`
	UpdatedAt     string             `json:"updatedAt"`
	// Rules are shown when the feed has any.
	Rules *rulesJSON `json:"rules,omitempty"`
}

var jsonNull = json.RawMessage("null")

func eventFeedOut(f domain.FeedState, created bool) eventFeedJSON {
	out := eventFeedJSON{
		ID: f.ID.String(), Name: f.Name, Description: f.Description, Enabled: f.Enabled,
		EnabledSource: f.EnabledBy, Config: f.Config, CreatedAt: shape.Timestamp(f.CreatedAt), UpdatedAt: shape.Timestamp(f.UpdatedAt),
	}
	if out.EnabledSource == "" {
		out.EnabledSource = domain.EnabledByAPI
	}
	if out.Config == nil {
		c := domain.DefaultFeedConfig()
		out.Config = &c
	}
	if !f.Rules.IsZero() {
		out.Rules = &rulesJSON{Include: f.Rules.Include, Exclude: f.Rules.Exclude}
	}
	switch {
	case f.Reason != "":
		reason, _ := json.Marshal(f.Reason)
		raw := json.RawMessage(reason)
		out.EnabledReason = &raw
	case created:
		out.EnabledReason = &jsonNull
	}
	return out
}

// eventFeed names the event feed of the path for the caller.
func eventFeed(c *fiber.Ctx) (commands.FeedRef, error) {
	id, err := pathUUID(c, "id")
	return commands.FeedRef{Kind: domain.FeedHappenings, Org: organization(c), FeedID: id}, err
}

type eventSourceBody struct {
	SourceType *string `json:"sourceType"`
	SourceID   *string `json:"sourceId"`
}

func (h *handlers) addEventSource(c *fiber.Ctx) error {
	ref, err := eventFeed(c)
	if err != nil {
		return err
	}
	var body eventSourceBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	if body.SourceType == nil {
		return envelope.BadRequest("sourceType", "is required")
	}
	if body.SourceID == nil {
		return envelope.BadRequest("sourceId", "is required")
	}
	sourceID, err := parseUUID("sourceId", *body.SourceID)
	if err != nil {
		return err
	}
	cmd := commands.AttachSourceRecord{FeedRef: ref, SourceType: *body.SourceType, SourceID: sourceID}
	att, err := create(c, h, "source", attachmentID, (*commands.Handler).AttachSourceRecord, cmd)
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusCreated, attachmentOut(domain.FeedHappenings, att, false))
}
