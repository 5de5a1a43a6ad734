package http

import (
	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel"
)

type newsFeedJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	CreatedAt   string `json:"createdAt"`
	UpdatedAt   string `json:"updatedAt"`
}

func newsFeedOut(f readmodel.NewsFeed) newsFeedJSON {
	return newsFeedJSON{
		ID: f.ID.String(), Name: f.Name, Description: f.Description,
		CreatedAt: timestamp(f.CreatedAt), UpdatedAt: timestamp(f.UpdatedAt),
	}
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
		return badRequest("name", "is required")
	}
	if body.Description == nil {
		return badRequest("description", "is required")
	}
	org := organization(c)
	id, res, err := h.Commands.CreateNewsFeed(c.UserContext(), commands.CreateNewsFeed{Org: org, Name: *body.Name, Description: *body.Description})
	if err != nil {
		return err
	}
	if err := h.wait(c, res); err != nil {
		return stored(err, "feed", id.String())
	}
	feed, err := h.Queries.NewsFeed(c.UserContext(), org, id)
	if err != nil {
		return err
	}
	return ok(c, fiber.StatusCreated, newsFeedOut(feed))
}

func (h *handlers) listNewsFeeds(c *fiber.Ctx) error {
	feeds, err := h.Queries.NewsFeeds(c.UserContext(), organization(c))
	if err != nil {
		return err
	}
	out := make([]newsFeedJSON, 0, len(feeds))
	for _, f := range feeds {
		out = append(out, newsFeedOut(f))
	}
	return ok(c, fiber.StatusOK, out)
}

func (h *handlers) getNewsFeed(c *fiber.Ctx) error {
	id, err := pathUUID(c, "feedId")
	if err != nil {
		return err
	}
	feed, err := h.Queries.NewsFeed(c.UserContext(), organization(c), id)
	if err != nil {
		return err
	}
	return ok(c, fiber.StatusOK, newsFeedOut(feed))
}

type updateNewsFeedBody struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Enabled     *bool   `json:"enabled"`
}

func (h *handlers) updateNewsFeed(c *fiber.Ctx) error {
	id, err := pathUUID(c, "feedId")
	if err != nil {
		return err
	}
	var body updateNewsFeedBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	org := organization(c)
	res, err := h.Commands.UpdateNewsFeed(c.UserContext(), commands.UpdateNewsFeed{
		Org: org, FeedID: id,
		Update: domain.FeedUpdate{Name: body.Name, Description: body.Description, Enabled: body.Enabled},
	})
	if err != nil {
		return err
	}
	if err := h.wait(c, res); err != nil {
		return err
	}
	feed, err := h.Queries.NewsFeed(c.UserContext(), org, id)
	if err != nil {
		return err
	}
	return ok(c, fiber.StatusOK, newsFeedOut(feed))
}

func (h *handlers) deleteNewsFeed(c *fiber.Ctx) error {
	id, err := pathUUID(c, "feedId")
	if err != nil {
		return err
	}
	res, err := h.Commands.DeleteNewsFeed(c.UserContext(), commands.DeleteNewsFeed{Org: organization(c), FeedID: id})
	if err != nil {
		return err
	}
	if err := h.wait(c, res); err != nil {
		return err
	}
	return deleted(c)
}
