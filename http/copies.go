package http

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/readmodel/copies"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// CopyQueries read the copies of news items (readmodel/copies).
type CopyQueries interface {
	Copies(ctx context.Context, org, feedID, itemID uuid.UUID) ([]copies.Copy, error)
	EventCopies(ctx context.Context, org, feedID, itemID uuid.UUID) ([]copies.EventCopy, error)
}

// copyJSON is one copy of a news item: another address the story was
// found at.
type copyJSON struct {
	NewsPageID   string  `json:"newsPageId"`
	AttachmentID string  `json:"attachmentId"`
	SourceID     string  `json:"sourceId"`
	SourceType   string  `json:"sourceType"`
	URL          string  `json:"url"`
	Title        string  `json:"title,omitempty"`
	DecidedBy    string  `json:"decidedBy"`
	Similarity   float64 `json:"similarity"`
	FoundAt      string  `json:"foundAt"`
}

type copyList struct {
	Copies []copyJSON `json:"copies"`
}

type splitJSON struct {
	ItemID string `json:"itemId"`
}

// listNewsItemCopies answers the copies of a news item: the articles found
// at other addresses that are the same story, which did not become items.
func (h *handlers) listNewsItemCopies(c *fiber.Ctx) error {
	feedID, itemID, err := pathUUIDs(c, "feedId", "itemId")
	if err != nil {
		return err
	}
	ctx, org := c.UserContext(), organization(c)
	if _, err := h.Reads.Items.ItemOrigin(ctx, domain.FeedNews, org, feedID, itemID); err != nil {
		return err
	}
	list, err := h.Reads.Copies.Copies(ctx, org, feedID, itemID)
	if err != nil {
		return err
	}
	out := copyList{Copies: make([]copyJSON, 0, len(list))}
	for _, cp := range list {
		out.Copies = append(out.Copies, copyJSON{
			NewsPageID: cp.NewsPageID.String(), AttachmentID: cp.AttachmentID.String(), SourceID: cp.SourceID.String(),
			SourceType: cp.SourceType, URL: cp.URL, Title: cp.Title, DecidedBy: cp.DecidedBy, Similarity: cp.Similarity,
			FoundAt: shape.Timestamp(cp.FoundAt),
		})
	}
	return envelope.OK(c, fiber.StatusOK, out)
}

// splitNewsItemCopy splits a copy off a news item: the copy becomes an
// item of its own, and is never merged into the item again.
func (h *handlers) splitNewsItemCopy(c *fiber.Ctx) error {
	feedID, itemID, err := pathUUIDs(c, "feedId", "itemId")
	if err != nil {
		return err
	}
	newsPageID, err := pathUUID(c, "newsPageId")
	if err != nil {
		return err
	}
	cmd := commands.SplitCopy{
		FeedRef: commands.FeedRef{Kind: domain.FeedNews, Org: organization(c), FeedID: feedID},
		ItemID:  itemID, NewsPageID: newsPageID,
	}
	id, err := write(c, h, (*commands.Handler).SplitCopy, cmd)
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusCreated, splitJSON{ItemID: id.String()})
}

// eventCopyJSON is one happening an event item holds as another source
// lists it.
type eventCopyJSON struct {
	EventID      string `json:"eventId"`
	AttachmentID string `json:"attachmentId"`
	SourceID     string `json:"sourceId"`
	SourceType   string `json:"sourceType"`
	URL          string `json:"url,omitempty"`
	Title        string `json:"title,omitempty"`
	FoundAt      string `json:"foundAt"`
}

type eventCopyList struct {
	Copies []eventCopyJSON `json:"copies"`
}

// listEventItemCopies answers the listings of an event item's event by
// other sources, which did not become items of their own.
func (h *handlers) listEventItemCopies(c *fiber.Ctx) error {
	feedID, itemID, err := pathUUIDs(c, "id", "itemId")
	if err != nil {
		return err
	}
	ctx, org := c.UserContext(), organization(c)
	if _, err := h.Reads.Items.ItemOrigin(ctx, domain.FeedHappenings, org, feedID, itemID); err != nil {
		return err
	}
	list, err := h.Reads.Copies.EventCopies(ctx, org, feedID, itemID)
	if err != nil {
		return err
	}
	out := eventCopyList{Copies: make([]eventCopyJSON, 0, len(list))}
	for _, cp := range list {
		out.Copies = append(out.Copies, eventCopyJSON{
			EventID: cp.CopyEventID.String(), AttachmentID: cp.AttachmentID.String(), SourceID: cp.SourceID.String(),
			SourceType: cp.SourceType, URL: cp.URL, Title: cp.Title, FoundAt: shape.Timestamp(cp.FoundAt),
		})
	}
	return envelope.OK(c, fiber.StatusOK, out)
}

// splitEventItemCopy splits a copy off an event item: the other listing
// becomes an item of its own, and is never merged into the item again.
func (h *handlers) splitEventItemCopy(c *fiber.Ctx) error {
	feedID, itemID, err := pathUUIDs(c, "id", "itemId")
	if err != nil {
		return err
	}
	copyID, err := pathUUID(c, "eventId")
	if err != nil {
		return err
	}
	cmd := commands.SplitHappeningCopy{
		FeedRef: commands.FeedRef{Kind: domain.FeedHappenings, Org: organization(c), FeedID: feedID},
		ItemID:  itemID, CopyID: copyID,
	}
	id, err := write(c, h, (*commands.Handler).SplitHappeningCopy, cmd)
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusCreated, splitJSON{ItemID: id.String()})
}
