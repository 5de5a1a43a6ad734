package http

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/readmodel/history"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// defaultHistoryLimit shows most histories whole on one page.
const defaultHistoryLimit = 100

// historyEntryJSON is one event of an item's history.
type historyEntryJSON struct {
	Position string `json:"position"`
	Stream   string `json:"stream"`
	Type     string `json:"type"`
	At       string `json:"at"`
	Data     any    `json:"data"`
}

type historyList struct {
	Entries    []historyEntryJSON `json:"entries"`
	Total      int                `json:"total"`
	Pagination pagination         `json:"pagination"`
	// Copies are the item's copy facts, with include=copies only: their
	// types are not in the entries' closed list (docs/clients.md).
	Copies *[]historyEntryJSON `json:"copies,omitempty"`
}

// itemHistory answers the events that made an item of a feed of kind
// what it is, in log order; feedParam names the feed's path parameter.
func (h *handlers) itemHistory(kind domain.FeedKind, feedParam string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		feedID, itemID, err := pathUUIDs(c, feedParam, "itemId")
		if err != nil {
			return err
		}
		limit, offset, err := pageParams(c, defaultHistoryLimit)
		if err != nil {
			return err
		}
		withCopies, err := historyInclude(c)
		if err != nil {
			return err
		}
		ctx, org := c.UserContext(), organization(c)
		ref, err := h.Reads.Items.ItemOrigin(ctx, kind, org, feedID, itemID)
		if err != nil {
			return err
		}
		all, err := h.History.Item(ctx, org, kind, itemID, ref)
		if err != nil {
			return err
		}
		var copies *[]historyEntryJSON
		if withCopies {
			facts, err := h.History.Copies(ctx, org, kind, itemID, ref)
			if err != nil {
				return err
			}
			list := make([]historyEntryJSON, 0, len(facts))
			for _, e := range facts {
				list = append(list, historyEntryOut(e))
			}
			copies = &list
		}
		page := all[min(offset, len(all)):min(offset+limit, len(all))]
		out := make([]historyEntryJSON, 0, len(page))
		for _, e := range page {
			out = append(out, historyEntryOut(e))
		}
		return envelope.OK(c, fiber.StatusOK, historyList{Entries: out, Total: len(all), Pagination: pageOf(limit, offset, len(out), len(all)), Copies: copies})
	}
}

func historyEntryOut(e history.Entry) historyEntryJSON {
	return historyEntryJSON{Position: e.Position.String(), Stream: e.Stream, Type: e.Type, At: shape.Timestamp(e.At), Data: e.Data}
}

// historyInclude reads include on an item's history: only the token
// "copies", which adds the item's copy facts (data.copies).
func historyInclude(c *fiber.Ctx) (bool, error) {
	copies := false
	for _, tok := range strings.Split(c.Query("include"), ",") {
		switch strings.TrimSpace(tok) {
		case "copies":
			copies = true
		case "":
		default:
			return false, envelope.BadRequest("include", "names an unknown section; only copies is supported")
		}
	}
	return copies, nil
}
