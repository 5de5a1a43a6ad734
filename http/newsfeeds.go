package http

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
)

type newsFeedJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	CreatedAt   string `json:"createdAt"`
	UpdatedAt   string `json:"updatedAt"`
}

func newsFeedOut(f domain.FeedState) newsFeedJSON {
	return newsFeedJSON{
		ID: f.ID.String(), Name: f.Name, Description: f.Description,
		CreatedAt: timestamp(f.CreatedAt), UpdatedAt: timestamp(f.UpdatedAt),
	}
}

// newsFeed names the news feed of the path for the caller.
func newsFeed(c *fiber.Ctx) (commands.FeedRef, error) {
	id, err := pathUUID(c, "feedId")
	return commands.FeedRef{Kind: domain.FeedNews, Org: organization(c), FeedID: id}, err
}

type createNewsFeedBody struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

func (h *handlers) createNewsFeed(c *fiber.Ctx) error {
	var body createNewsFeedBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	if body.Name == nil {
		return envelope.BadRequest("name", "is required")
	}
	if body.Description == nil {
		return envelope.BadRequest("description", "is required")
	}
	cmd := commands.CreateFeed{Kind: domain.FeedNews, Org: organization(c), Name: *body.Name, Description: *body.Description}
	var id string
	feed, err := commands.Visible(c.UserContext(), h.Waiter, func(ctx context.Context) (domain.FeedState, commands.Result, error) {
		f, res, err := h.Commands.CreateFeed(ctx, cmd)
		id = f.ID.String()
		return f, res, err
	})
	if err != nil {
		return envelope.Stored(err, "feed", id)
	}
	return envelope.OK(c, fiber.StatusCreated, newsFeedOut(feed))
}

func (h *handlers) listNewsFeeds(c *fiber.Ctx) error {
	feeds, err := h.Queries.Feeds(c.UserContext(), domain.FeedNews, organization(c))
	if err != nil {
		return err
	}
	out := make([]newsFeedJSON, 0, len(feeds))
	for _, f := range feeds {
		out = append(out, newsFeedOut(f.State()))
	}
	return envelope.OK(c, fiber.StatusOK, out)
}

func (h *handlers) getNewsFeed(c *fiber.Ctx) error {
	ref, err := newsFeed(c)
	if err != nil {
		return err
	}
	feed, err := h.Queries.Feed(c.UserContext(), domain.FeedNews, ref.Org, ref.FeedID)
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusOK, newsFeedOut(feed.State()))
}

type updateNewsFeedBody struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Enabled     *bool   `json:"enabled"`
}

func (h *handlers) updateNewsFeed(c *fiber.Ctx) error {
	ref, err := newsFeed(c)
	if err != nil {
		return err
	}
	var body updateNewsFeedBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	cmd := commands.UpdateFeed{FeedRef: ref, Update: domain.FeedUpdate{Name: body.Name, Description: body.Description, Enabled: body.Enabled}}
	feed, err := commands.Visible(c.UserContext(), h.Waiter, func(ctx context.Context) (domain.FeedState, commands.Result, error) {
		return h.Commands.UpdateFeed(ctx, cmd)
	})
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusOK, newsFeedOut(feed))
}

// deleteFeed deletes the path's feed, of any kind.
func (h *handlers) deleteFeed(feedOf feedOfPath) fiber.Handler {
	return func(c *fiber.Ctx) error { return h.deleteFeedOfPath(c, feedOf) }
}

func (h *handlers) deleteFeedOfPath(c *fiber.Ctx, feedOf feedOfPath) error {
	ref, err := feedOf(c)
	if err != nil {
		return err
	}
	if err := commands.VisibleDone(c.UserContext(), h.Waiter, func(ctx context.Context) (commands.Result, error) {
		return h.Commands.DeleteFeed(ctx, ref)
	}); err != nil {
		return err
	}
	return envelope.Deleted(c)
}
