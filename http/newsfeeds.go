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
	// Rules are shown when the feed has any.
	Rules *rulesJSON `json:"rules,omitempty"`
}

func newsFeedOut(f domain.FeedState) newsFeedJSON {
	out := newsFeedJSON{
		ID: f.ID.String(), Name: f.Name, Description: f.Description,
		CreatedAt: shape.Timestamp(f.CreatedAt), UpdatedAt: shape.Timestamp(f.UpdatedAt),
	}
	if !f.Rules.IsZero() {
		out.Rules = &rulesJSON{Include: f.Rules.Include, Exclude: f.Rules.Exclude}
	}
	return out
}

// newsFeed names the news feed of the path for the caller.
func newsFeed(c *fiber.Ctx) (commands.FeedRef, error) {
	id, err := pathUUID(c, "feedId")
	return commands.FeedRef{Kind: domain.FeedNews, Org: organization(c), FeedID: id}, err
}
