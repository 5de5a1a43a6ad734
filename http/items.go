package http

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/search"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/readmodel/changes"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// Item list limits (api.md 4.2, 8).
const (
	defaultItemLimit = 50
	maxItemLimit     = 100
)

// itemQueryParams are the query parameters item reads take (news and
// events).
var itemQueryParams = []string{"limit", "offset", "since", "until", "include", "status", "orderBy", "cursor", "lastEventId", "q"}

// News item orders: the list's own (D7), or by relevance to q.
const (
	newsOrderByCreated   = "created"
	newsOrderByRelevance = "relevance"
)

// itemQuery is a validated item-list query.
type itemQuery struct {
	filter        newsitems.ItemFilter
	includeSource bool
}

// parseItemQuery reads a news item list's query; with a cursor the list
// pages through the feed's changes after it, and takes no offset.
func parseItemQuery(c *fiber.Ctx, feedID uuid.UUID, legacy bool) (itemQuery, error) {
	q := itemQuery{}
	var err error
	if q.filter.Limit, q.filter.Offset, err = pageParams(c, defaultItemLimit); err != nil {
		return q, err
	}
	if q.filter.After, err = cursorParam(c, feedID); err != nil {
		return q, err
	}
	if q.filter.After != nil {
		if err := withoutOffset(c, "offset"); err != nil {
			return q, err
		}
	}
	if q.filter.Since, err = timeParam(c, "since"); err != nil {
		return q, err
	}
	if q.filter.Until, err = timeParam(c, "until"); err != nil {
		return q, err
	}
	if q.filter.Since != nil && q.filter.Until != nil && !q.filter.Since.Before(*q.filter.Until) {
		return q, envelope.BadRequest("until", "must be after since")
	}
	if q.filter.Query, err = searchParam(c); err != nil {
		return q, err
	}
	switch order := c.Query("orderBy"); {
	case !c.Context().QueryArgs().Has("orderBy"), order == newsOrderByCreated:
	case order == newsOrderByRelevance:
		if err := relevanceNeeds(c, q.filter.Query, q.filter.After != nil); err != nil {
			return q, err
		}
		q.filter.ByRelevance = true
	default:
		return q, envelope.BadRequest("orderBy", "must be created or relevance")
	}
	q.includeSource, err = includeParam(c, legacy)
	return q, err
}

// searchParam reads q, a full-text query in the syntax of domain/search:
// the zero Query when absent; a 400 naming q when given but too long or
// empty after parsing (the answer never quotes it). It reaches the read
// models as a parsed Query, which they bind as a parameter.
func searchParam(c *fiber.Ctx) (search.Query, error) {
	if !c.Context().QueryArgs().Has("q") {
		return search.Query{}, nil
	}
	// Cloned: the words of a Query may share the string's bytes, and
	// Fiber's are borrowed.
	query, err := search.Parse(strings.Clone(c.Query("q")))
	var syntax *search.SyntaxError
	if errors.As(err, &syntax) {
		return search.Query{}, envelope.BadRequest("q", syntax.Issue)
	}
	return query, err
}

// relevanceNeeds refuses orderBy=relevance without a q to rank by, or on a
// page of changes, which lists them in the order they happened.
func relevanceNeeds(c *fiber.Ctx, query search.Query, changes bool) error {
	if query.IsZero() {
		return envelope.BadRequest("orderBy", "relevance needs q: it ranks items by how well they match q")
	}
	if changes {
		return withoutOffset(c, "orderBy")
	}
	return nil
}

// includeParam reads include, which the legacy endpoints do not take.
func includeParam(c *fiber.Ctx, legacy bool) (bool, error) {
	if !legacy {
		return parseInclude(c)
	}
	if c.Query("include") != "" {
		return false, envelope.BadRequest("include", "is not supported on the legacy endpoint")
	}
	return false, nil
}

// parseInclude accepts only the token "source" (api.md 4.2).
func parseInclude(c *fiber.Ctx) (bool, error) {
	raw := c.Query("include")
	if raw == "" {
		return false, nil
	}
	source := false
	for _, tok := range strings.Split(raw, ",") {
		switch strings.TrimSpace(tok) {
		case "source":
			source = true
		case "":
		default:
			return false, envelope.BadRequest("include", "names an unknown section; only source is supported")
		}
	}
	return source, nil
}

// pageParams reads limit (1 to 100, default def) and offset (minimum 0,
// default 0), the paging every item list takes (api.md 8).
func pageParams(c *fiber.Ctx, def int) (limit, offset int, err error) {
	if limit, err = intParam(c, "limit", def, 1, maxItemLimit); err != nil {
		return 0, 0, err
	}
	offset, err = intParam(c, "offset", 0, 0, 1<<31-1)
	return limit, offset, err
}

func intParam(c *fiber.Ctx, name string, def, min, max int) (int, error) {
	raw := c.Query(name)
	if raw == "" && !c.Context().QueryArgs().Has(name) {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, envelope.BadRequest(name, "must be an integer")
	}
	if n < min || n > max {
		return 0, envelope.BadRequest(name, "must be between "+strconv.Itoa(min)+" and "+strconv.Itoa(max))
	}
	return n, nil
}

// timeParam accepts RFC 3339 date-times and plain dates (D2).
func timeParam(c *fiber.Ctx, name string) (*time.Time, error) {
	raw := c.Query(name)
	if raw == "" {
		return nil, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		t, err := time.Parse(layout, raw)
		if err != nil {
			continue
		}
		// Postgres timestamps stop at year 1 and 294276; dates outside
		// 1970-9999 are typos, not queries.
		if t = t.UTC(); t.Year() < 1970 || t.Year() > 9999 {
			return nil, envelope.BadRequest(name, "must be between 1970 and 9999")
		}
		return &t, nil
	}
	return nil, envelope.BadRequest(name, "must be an ISO 8601 date-time or date")
}

type pagination struct {
	Limit   int  `json:"limit"`
	Offset  int  `json:"offset"`
	HasMore bool `json:"hasMore"`
	// NextCursor is on item lists only: where polling their changes goes on.
	NextCursor string `json:"nextCursor,omitempty"`
}

// pageOf is the pagination of a page of shown items at offset out of total.
func pageOf(limit, offset, shown, total int) pagination {
	return pagination{Limit: limit, Offset: offset, HasMore: offset+shown < total}
}

// itemPageOf is the pagination of an item list's page: by offset, or of
// changes after a cursor (after is set), where more changes follow at once
// when the page says so. Either way nextCursor is where polling goes on.
func itemPageOf(feedID uuid.UUID, limit, offset, shown, total int, after *changes.Key, ch changes.Changes) pagination {
	p := pageOf(limit, offset, shown, total)
	if after != nil {
		p.HasMore = ch.HasMore
	}
	p.NextCursor = encodeCursor(feedID, ch.Next)
	return p
}

// removedOf lists the ids of items removed, on pages of changes only.
func removedOf(after *changes.Key, removed []uuid.UUID) *[]string {
	if after == nil {
		return nil
	}
	ids := make([]string, len(removed))
	for i, id := range removed {
		ids[i] = id.String()
	}
	return &ids
}

type itemList struct {
	Items any `json:"items"`
	// Removed is on pages of changes only (a pointer, so that an empty
	// list is still shown there).
	Removed    *[]string  `json:"removedItemIds,omitempty"`
	Total      int        `json:"total"`
	Pagination pagination `json:"pagination"`
}

func (h *handlers) listNewsItems(c *fiber.Ctx) error { return h.newsItems(c, false) }

func (h *handlers) listNewsItemsV0(c *fiber.Ctx) error { return h.newsItems(c, true) }

func (h *handlers) newsItems(c *fiber.Ctx, legacy bool) error {
	feedID, err := pathUUID(c, "feedId")
	if err != nil {
		return err
	}
	q, err := parseItemQuery(c, feedID, legacy)
	if err != nil {
		return err
	}
	page, err := h.Reads.News.NewsItems(c.UserContext(), organization(c), feedID, q.filter)
	if err != nil {
		return err
	}
	var items any
	if legacy {
		out := make([]shape.LegacyNewsJSON, 0, len(page.Items))
		for _, it := range page.Items {
			out = append(out, shape.LegacyNews(newsItem(it)))
		}
		items = out
	} else {
		out := make([]shape.NewsJSON, 0, len(page.Items))
		for _, it := range page.Items {
			out = append(out, shape.CurrentNews(newsItem(it), q.includeSource))
		}
		items = out
	}
	return envelope.OK(c, fiber.StatusOK, itemList{
		Items: items, Removed: removedOf(q.filter.After, page.Removed), Total: page.Total,
		Pagination: itemPageOf(feedID, q.filter.Limit, q.filter.Offset, len(page.Items), page.Total, q.filter.After, page.Changes),
	})
}

func (h *handlers) getNewsItem(c *fiber.Ctx) error {
	feedID, itemID, err := pathUUIDs(c, "feedId", "itemId")
	if err != nil {
		return err
	}
	include, err := parseInclude(c)
	if err != nil {
		return err
	}
	it, err := h.Reads.News.NewsItem(c.UserContext(), organization(c), feedID, itemID)
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusOK, shape.CurrentNews(newsItem(it), include))
}

// newsItem is what the shapes render an item from.
func newsItem(it newsitems.NewsItem) shape.News {
	return shape.News{
		ID: it.ID, NewsPageID: it.NewsPageID, VersionID: it.VersionID,
		URL: it.URL, Title: it.Title, Description: it.Description, ImageURL: it.ImageURL,
		PublishedAt: it.PublishedAt, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt,
		Block: it.Block(), Platform: it.Platform,
	}
}

type feedbackBody struct {
	Rating  *string `json:"rating"`
	Comment *string `json:"comment"`
}

type feedbackJSON struct {
	ID string `json:"id"`
}

func (h *handlers) giveNewsFeedback(c *fiber.Ctx) error {
	return h.giveFeedback(c, domain.FeedNews, "feedId")
}

// giveFeedback rates an item of a feed of kind; feedParam names the feed's
// path parameter.
func (h *handlers) giveFeedback(c *fiber.Ctx, kind domain.FeedKind, feedParam string) error {
	feedID, itemID, err := pathUUIDs(c, feedParam, "itemId")
	if err != nil {
		return err
	}
	var body feedbackBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	if body.Rating == nil {
		return envelope.BadRequest("rating", "is required")
	}
	comment := ""
	if body.Comment != nil {
		comment = *body.Comment
	}
	cmd := commands.GiveFeedback{
		FeedRef: commands.FeedRef{Kind: kind, Org: organization(c), FeedID: feedID},
		ItemID:  itemID, Rating: *body.Rating, Comment: comment,
	}
	id, err := write(c, h, (*commands.Handler).GiveFeedback, cmd)
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusOK, feedbackJSON{ID: id.String()})
}
