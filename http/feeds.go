package http

import (
	"bytes"
	"encoding/json"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
)

// feedKind is how the feed routes of one kind differ: the feed its path
// names, whether it takes enabled on create and a config (event feeds,
// 4.4 and D9; news feeds ignore both, as unknown members), and the shape
// it answers with (created: the answer to a create).
type feedKind struct {
	kind         domain.FeedKind
	of           feedOfPath
	configurable bool
	out          func(f domain.FeedState, created bool) any
}

var (
	newsFeeds = feedKind{kind: domain.FeedNews, of: newsFeed,
		out: func(f domain.FeedState, _ bool) any { return newsFeedOut(f) }}
	eventFeeds = feedKind{kind: domain.FeedHappenings, of: eventFeed, configurable: true,
		out: func(f domain.FeedState, created bool) any { return eventFeedOut(f, created) }}
)

// feedBody is the body of a feed create or update, of any kind.
type feedBody struct {
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	Enabled     *bool           `json:"enabled"`
	Config      json.RawMessage `json:"config"`
	// Rules replace a news feed's keyword rules, on an update; {} clears
	// them, null leaves them as they are.
	Rules json.RawMessage `json:"rules"`
}

// rulesJSON is a feed's keyword rules, as an update takes them and a
// read shows them.
type rulesJSON struct {
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
}

// rules is the body's rules; nil when absent or null.
func (b feedBody) rules() (*domain.FeedRules, error) {
	raw := bytes.TrimSpace(b.Rules)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var r rulesJSON
	if raw[0] != '{' || json.Unmarshal(raw, &r) != nil {
		return nil, envelope.BadRequest("rules", "must be an object with arrays of strings include and exclude")
	}
	parsed, err := domain.ParseFeedRules(r.Include, r.Exclude)
	if err != nil {
		return nil, err
	}
	return &parsed, nil
}

// config is the body's config for a kind that takes one; nil when absent.
func (k feedKind) config(b feedBody) (*domain.FeedConfig, error) {
	if !k.configurable || b.Config == nil {
		return nil, nil
	}
	c, err := domain.ParseFeedConfig(b.Config)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

func (h *handlers) createFeed(k feedKind) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var body feedBody
		if err := decodeBody(c, &body); err != nil {
			return err
		}
		if body.Name == nil {
			return envelope.BadRequest("name", "is required")
		}
		if body.Description == nil {
			return envelope.BadRequest("description", "is required")
		}
		config, err := k.config(body)
		if err != nil {
			return err
		}
		cmd := commands.CreateFeed{Kind: k.kind, Org: organization(c), Name: *body.Name, Description: *body.Description}
		if k.configurable {
			cmd.Options = domain.FeedOptions{Enabled: body.Enabled, Config: config}
		}
		feed, err := create(c, h, "feed", func(f domain.FeedState) uuid.UUID { return f.ID }, (*commands.Handler).CreateFeed, cmd)
		if err != nil {
			return err
		}
		return envelope.OK(c, fiber.StatusCreated, k.out(feed, true))
	}
}

func (h *handlers) listFeeds(k feedKind) fiber.Handler {
	return func(c *fiber.Ctx) error {
		feeds, err := h.Reads.Feeds.Feeds(c.UserContext(), k.kind, organization(c))
		if err != nil {
			return err
		}
		out := make([]any, 0, len(feeds))
		for _, f := range feeds {
			out = append(out, k.out(f.State(), false))
		}
		return envelope.OK(c, fiber.StatusOK, out)
	}
}

func (h *handlers) getFeed(k feedKind) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ref, err := k.of(c)
		if err != nil {
			return err
		}
		feed, err := h.Reads.Feeds.Feed(c.UserContext(), k.kind, ref.Org, ref.FeedID)
		if err != nil {
			return err
		}
		return envelope.OK(c, fiber.StatusOK, k.out(feed.State(), false))
	}
}

func (h *handlers) updateFeed(k feedKind) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ref, err := k.of(c)
		if err != nil {
			return err
		}
		var body feedBody
		if err := decodeBody(c, &body); err != nil {
			return err
		}
		config, err := k.config(body)
		if err != nil {
			return err
		}
		rules, err := body.rules()
		if err != nil {
			return err
		}
		update := domain.FeedUpdate{Name: body.Name, Description: body.Description, Enabled: body.Enabled, Config: config, Rules: rules}
		feed, err := write(c, h, (*commands.Handler).UpdateFeed, commands.UpdateFeed{FeedRef: ref, Update: update})
		if err != nil {
			return err
		}
		return envelope.OK(c, fiber.StatusOK, k.out(feed, false))
	}
}

// deleteFeed deletes the path's feed, of any kind.
func (h *handlers) deleteFeed(k feedKind) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ref, err := k.of(c)
		if err != nil {
			return err
		}
		if err := writeDone(c, h, (*commands.Handler).DeleteFeed, ref); err != nil {
			return err
		}
		return envelope.Deleted(c)
	}
}
