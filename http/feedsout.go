package http

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/feedout"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// Feed outputs: a news feed as Atom and JSON Feed, an event feed as an
// iCalendar calendar. They answer a Bearer key with the items scope (these
// routes) or a subscription address (subscriptions.go), and honour
// conditional GETs, since feed readers and calendar apps poll.

// newsOutputItems is how many of the newest items a news output holds:
// what a reader polling every few minutes needs, and the list's maximum
// page.
const newsOutputItems = maxItemLimit

// newsFormat is one rendering of a news feed.
type newsFormat struct {
	name        string
	contentType string
	render      func(feedout.Channel, []feedout.NewsItem) ([]byte, error)
}

var (
	atomFormat = newsFormat{name: "atom", contentType: feedout.AtomType, render: feedout.Atom}
	jsonFormat = newsFormat{name: "json", contentType: feedout.JSONFeedType, render: feedout.JSONFeed}
)

// newsOutput answers with the feed's newest items in format f, by the key's
// organization.
func (h *handlers) newsOutput(f newsFormat) fiber.Handler {
	return func(c *fiber.Ctx) error {
		feedID, err := pathUUID(c, "feedId")
		if err != nil {
			return err
		}
		return h.writeNewsOutput(c, organization(c), feedID, f)
	}
}

// writeNewsOutput renders feed's output for org. A feed of another
// organization answers 404 as a missing one does.
func (h *handlers) writeNewsOutput(c *fiber.Ctx, org, feedID uuid.UUID, f newsFormat) error {
	ctx := c.UserContext()
	feed, err := h.Reads.Feeds.Feed(ctx, domain.FeedNews, org, feedID)
	if err != nil {
		return err
	}
	page, err := h.Reads.News.NewsItems(ctx, org, feedID, newsitems.ItemFilter{Limit: newsOutputItems})
	if err != nil {
		return err
	}
	modified := feed.UpdatedAt
	items := make([]feedout.NewsItem, 0, len(page.Items))
	for _, it := range page.Items {
		if it.UpdatedAt.After(modified) {
			modified = it.UpdatedAt
		}
		items = append(items, shape.CurrentNews(newsItem(it), true))
	}
	self := selfURL(c)
	// The feed's latest change key moves with every item added, and the
	// feed's updatedAt with every rename: together with the format and
	// the address they fix the bytes, so they make a strong validator
	// without rendering.
	tag := etag(f.name, self, feed.Name, feed.Description, feed.UpdatedAt, page.Changes.Next.Commit, page.Changes.Next.Prepare, page.Changes.Next.Item[:])
	if notModified(c, tag, modified) {
		return nil
	}
	body, err := f.render(feedout.Channel{FeedID: feedID, Title: feed.Name, Description: feed.Description, SelfURL: self, Updated: modified}, items)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, f.contentType)
	return c.Status(fiber.StatusOK).Send(body)
}

// selfURL is the absolute address the request was made to, query and all
// (a subscription address keeps its token: the reader already holds it).
func selfURL(c *fiber.Ctx) string {
	return c.BaseURL() + string(c.Request().URI().RequestURI())
}

// etag is a strong entity tag over parts.
func etag(parts ...any) string {
	hash := sha256.New()
	var n [8]byte
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			binary.BigEndian.PutUint64(n[:], uint64(len(v)))
			hash.Write(n[:])
			hash.Write([]byte(v))
		case []byte:
			binary.BigEndian.PutUint64(n[:], uint64(len(v)))
			hash.Write(n[:])
			hash.Write(v)
		case uint64:
			binary.BigEndian.PutUint64(n[:], v)
			hash.Write(n[:])
		case int:
			binary.BigEndian.PutUint64(n[:], uint64(v))
			hash.Write(n[:])
		case time.Time:
			binary.BigEndian.PutUint64(n[:], uint64(v.UnixNano()))
			hash.Write(n[:])
		}
	}
	return `"` + hex.EncodeToString(hash.Sum(nil)[:16]) + `"`
}

// notModified sets the validators and, when the request's conditions hold
// them current, answers 304 (RFC 9110 section 13.1): If-None-Match decides
// when given, If-Modified-Since otherwise.
func notModified(c *fiber.Ctx, tag string, modified time.Time) bool {
	modified = modified.UTC().Truncate(time.Second)
	c.Set(fiber.HeaderETag, tag)
	c.Set(fiber.HeaderLastModified, modified.Format(timeFormatHTTP))
	// Readers revalidate every time; the body may be cached.
	c.Set(fiber.HeaderCacheControl, "private, no-cache")
	fresh := false
	if inm := c.Get(fiber.HeaderIfNoneMatch); inm != "" {
		fresh = matchesETag(inm, tag)
	} else if ims := c.Get(fiber.HeaderIfModifiedSince); ims != "" {
		if t, err := time.Parse(timeFormatHTTP, ims); err == nil {
			fresh = !modified.After(t)
		}
	}
	if fresh {
		c.Status(fiber.StatusNotModified)
		c.Response().ResetBody()
	}
	return fresh
}

// timeFormatHTTP is the IMF-fixdate of RFC 9110 section 5.6.7.
const timeFormatHTTP = "Mon, 02 Jan 2006 15:04:05 GMT"

// matchesETag reports whether an If-None-Match list names tag, by the weak
// comparison the header uses.
func matchesETag(list, tag string) bool {
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == tag {
			return true
		}
	}
	return false
}

// outputRoutes wires the outputs for Bearer keys with the items scope. It
// runs before the item routes, so that items/stream is not taken for an
// item id.
func (h *handlers) outputRoutes(news, events fiber.Router, items fiber.Handler) {
	news.Get("/:feedId/feed.atom", items, h.newsOutput(atomFormat))
	news.Get("/:feedId/feed.json", items, h.newsOutput(jsonFormat))
	events.Get("/:id/calendar.ics", items, h.calendarOutput)
	news.Get("/:feedId/items/stream", items, h.itemStream(domain.FeedNews, "feedId", h.newsStreamPages))
	events.Get("/:id/items/stream", items, h.itemStream(domain.FeedHappenings, "id", h.eventStreamPages))
}
