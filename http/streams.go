package http

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/transport"
	"github.com/feedsvc/feedsvc/readmodel/changes"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// Live item streams: GET /feeds/news/{feedId}/items/stream and
// GET /feeds/events/{id}/items/stream answer Server-Sent Events, one per
// change of the feed's item list, in the order of the list's changes (the
// event log's, as ?cursor= pages them), each with the list cursor of that
// change as its id: Last-Event-ID resumes exactly after it. This file says
// what the events are; http/transport (stream.go) how they travel, how
// many may be open, and when a stream reads its feed again.

// headerLastEventID is the header an EventSource resumes with.
const headerLastEventID = "Last-Event-ID"

// streamPageSize is how many changes a stream reads at once.
const streamPageSize = maxItemLimit

// streamPages reads the changes of an organization's feed as a stream's
// events, with each item's source block when include is set.
type streamPages func(org, feedID uuid.UUID, include bool) transport.StreamReader

// itemStream answers the live item stream of the feed of kind named by
// the path parameter param, its events read by pages.
func (h *handlers) itemStream(kind domain.FeedKind, param string, pages streamPages) fiber.Handler {
	return func(c *fiber.Ctx) error {
		feedID, err := pathUUID(c, param)
		if err != nil {
			return err
		}
		include, err := parseInclude(c)
		if err != nil {
			return err
		}
		after, err := lastEventID(c, feedID)
		if err != nil {
			return err
		}
		org := organization(c)
		if _, err := h.Reads.Feeds.Feed(c.UserContext(), kind, org, feedID); err != nil {
			return err
		}
		// Without a cursor the stream starts now: after the feed's latest
		// change.
		if after == nil {
			latest, err := h.Reads.itemChanges(kind).LatestChange(c.UserContext(), feedID)
			if err != nil {
				return err
			}
			after = &latest
		}
		return h.streams.Serve(c, transport.StreamFeed{Kind: kind, ID: feedID}, *after, pages(org, feedID, include))
	}
}

// newsStreamPages are a news feed's changes: each an item added.
func (h *handlers) newsStreamPages(org, feedID uuid.UUID, include bool) transport.StreamReader {
	return func(ctx context.Context, after changes.Key) (transport.StreamPage, error) {
		page, err := h.Reads.News.NewsItems(ctx, org, feedID, newsitems.ItemFilter{Limit: streamPageSize, After: &after})
		if err != nil {
			return transport.StreamPage{}, err
		}
		out := transport.StreamPage{Next: page.Next, More: page.HasMore, Events: make([]transport.StreamEvent, 0, len(page.Items))}
		for _, it := range page.Items {
			data, err := json.Marshal(shape.CurrentNews(newsItem(it), include))
			if err != nil {
				return transport.StreamPage{}, fmt.Errorf("render item %s: %w", it.ID, err)
			}
			out.Events = append(out.Events, transport.StreamEvent{ID: encodeCursor(feedID, it.Change()), Name: "item", Data: data})
		}
		return out, nil
	}
}

// eventStreamPages are an event feed's changes: an item added or changed,
// or removed (its last attachment detached).
func (h *handlers) eventStreamPages(org, feedID uuid.UUID, include bool) transport.StreamReader {
	return func(ctx context.Context, after changes.Key) (transport.StreamPage, error) {
		// No range and no status: every change, each item with every
		// occurrence, as a page of changes without filters lists them.
		f := happeningitems.Filter{Now: domain.Now(), Limit: streamPageSize, After: &after, Shape: happeningitems.Shape{IncludeSource: include}}
		page, err := h.Reads.Happenings.Items(ctx, org, feedID, f)
		if err != nil {
			return transport.StreamPage{}, err
		}
		out := transport.StreamPage{Next: page.Next, More: page.HasMore, Events: make([]transport.StreamEvent, 0, len(page.Entries))}
		for _, it := range page.Entries {
			e := transport.StreamEvent{ID: encodeCursor(feedID, it.Change), Name: "item"}
			if it.Removed {
				e.Name = "removed"
				e.Data, err = json.Marshal(removedEvent{ID: it.ID.String()})
				if err != nil {
					return transport.StreamPage{}, fmt.Errorf("render removal of item %s: %w", it.ID, err)
				}
			} else {
				e.Data = shape.AppendCurrent(nil, eventItem(it, occurrenceBlock(it, f)))
			}
			out.Events = append(out.Events, e)
		}
		return out, nil
	}
}

// removedEvent is the data of a removed event: the id of the item that
// left the feed.
type removedEvent struct {
	ID string `json:"id"`
}

// lastEventID is where a stream resumes: the Last-Event-ID header (an
// EventSource reconnecting sends it, to the same address), else the
// lastEventId query parameter (for clients that cannot set headers, and
// to start from a list answer's pagination.nextCursor; empty means the
// feed's first change); nil when neither is given: the stream starts now.
// The errors never quote the value.
func lastEventID(c *fiber.Ctx, feed uuid.UUID) (*changes.Key, error) {
	const issue = "is not an event id of this feed's stream (pass the id of the last event received, as given)"
	if raw := c.Get(headerLastEventID); raw != "" {
		k, err := decodeCursorAs(raw, feed, headerLastEventID, issue)
		return &k, err
	}
	if !c.Request().URI().QueryArgs().Has("lastEventId") {
		return nil, nil
	}
	raw := c.Query("lastEventId")
	if raw == "" {
		return &changes.Key{}, nil
	}
	k, err := decodeCursorAs(raw, feed, "lastEventId", issue)
	return &k, err
}

// streamWatch is what the live streams' poller reads: each kind's item
// read model and the feeds.
type streamWatch struct{ Reads }

func (w streamWatch) LatestChanges(ctx context.Context, kind domain.FeedKind, feedIDs []uuid.UUID) (map[uuid.UUID]changes.Key, error) {
	if kind == logStreamKind {
		// The organizations whose logs are followed (orglog.go).
		return w.latestLogPositions(ctx, feedIDs)
	}
	return w.itemChanges(kind).LatestChanges(ctx, feedIDs)
}

func (w streamWatch) Gone(ctx context.Context, feedIDs []uuid.UUID) ([]uuid.UUID, error) {
	return w.Feeds.Gone(ctx, feedIDs)
}
