package http

import (
	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/shape"
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
		CreatedAt: shape.Timestamp(f.CreatedAt), UpdatedAt: shape.Timestamp(f.UpdatedAt),
	}
}

// newsFeed names the news feed of the path for the caller.
func newsFeed(c *fiber.Ctx) (commands.FeedRef, error) {
	id, err := pathUUID(c, "feedId")
	return commands.FeedRef{Kind: domain.FeedNews, Org: organization(c), FeedID: id}, err
}
