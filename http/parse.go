package http

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/ingest/parse"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// Codes of the parse endpoint's own failures.
const (
	codeNothingExtracted = "NOTHING_EXTRACTED"
	codeFetchFailed      = "FETCH_FAILED"
)

type parseBody struct {
	URL  *string `json:"url"`
	HTML *string `json:"html"`
}

// parseJSON is the answer: what the page holds. Arrays are always
// present; the article only when the page has one.
type parseJSON struct {
	URL      string            `json:"url,omitempty"`
	Article  *articleJSON      `json:"article,omitempty"`
	Events   []json.RawMessage `json:"events"`
	Feeds    []string          `json:"feeds"`
	Sitemaps []string          `json:"sitemaps"`
}

// articleJSON follows the strip-null rule of the current shapes.
type articleJSON struct {
	URL         string `json:"url,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	ImageURL    string `json:"imageUrl,omitempty"`
	PublishedAt string `json:"publishedAt,omitempty"`
	Author      string `json:"author,omitempty"`
	SiteName    string `json:"siteName,omitempty"`
	Language    string `json:"language,omitempty"`
	Text        string `json:"text,omitempty"`
	HTML        string `json:"html,omitempty"`
}

// parsePage answers POST /parse: body {url} or {html, url?}.
func (h *handlers) parsePage(c *fiber.Ctx) error {
	var body parseBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	req, err := h.parseRequest(body)
	if err != nil {
		return err
	}
	res, err := h.Parser.Parse(c.UserContext(), req)
	var fetch *parse.FetchError
	switch {
	case errors.As(err, &fetch):
		return &envelope.Error{Status: fiber.StatusBadGateway, Code: codeFetchFailed,
			Message: "the page could not be fetched: " + fetch.Reason, Field: "url", Issue: fetch.Reason}
	case errors.Is(err, parse.ErrTooLarge):
		// The body limit (1 MiB) refuses larger HTML first as long as it is
		// below the parser's own bound.
		return &envelope.Error{Status: fiber.StatusRequestEntityTooLarge, Message: "html: is too large", Field: "html", Issue: "too large"}
	case errors.Is(err, parse.ErrNothing):
		return &envelope.Error{Status: fiber.StatusUnprocessableEntity, Code: codeNothingExtracted,
			Message: "the page holds no article, event or feed the service can read"}
	case err != nil:
		return err
	}
	out, err := parseOut(res)
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusOK, out)
}

// parseRequest checks the body: a URL the service may fetch, or HTML with
// an optional URL it came from.
func (h *handlers) parseRequest(body parseBody) (parse.Request, error) {
	var req parse.Request
	if body.URL == nil && body.HTML == nil {
		return req, envelope.BadRequest("url", "is required unless html is given")
	}
	if body.HTML != nil {
		if strings.TrimSpace(*body.HTML) == "" {
			return req, envelope.BadRequest("html", "must not be empty")
		}
		req.HTML = body.HTML
	}
	if body.URL != nil {
		u, err := h.targets.URL("url", *body.URL)
		if err != nil {
			return req, err
		}
		req.URL = u
	}
	return req, nil
}

// parseOut renders a result; its events as event items in the current
// shape with their source block, each under its event id (there is no
// feed to give it an item id) and added when the page was read.
func parseOut(res parse.Result) (parseJSON, error) {
	out := parseJSON{URL: res.URL, Events: make([]json.RawMessage, 0, len(res.Events)), Feeds: res.Feeds, Sitemaps: res.Sitemaps}
	if a := res.Article; a != nil {
		out.Article = &articleJSON{
			URL: a.URL, Title: a.Title, Description: a.Description, ImageURL: a.Image,
			Author: a.Author, SiteName: a.SiteName, Language: a.Language, Text: a.Text, HTML: a.HTML,
		}
		if a.PublishedAt != nil {
			out.Article.PublishedAt = shape.Timestamp(*a.PublishedAt)
		}
	}
	for _, d := range res.Events {
		id := domain.HappeningID(d.Identity)
		it, err := shape.Standalone(d, false, id, id, res.ReadAt)
		if err != nil {
			return parseJSON{}, err
		}
		if it.Source, err = shape.SourceBlock(d); err != nil {
			return parseJSON{}, err
		}
		out.Events = append(out.Events, shape.AppendCurrent(nil, it))
	}
	return out, nil
}
