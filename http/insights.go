package http

import (
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/readmodel/insights"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// insightQueryParams are the query parameters insight reads take besides
// those of item lists.
var insightQueryParams = []string{"feedId", "groupBy", "rating", "minFeedback"}

const defaultInsightLimit = 50

var groupByIssue = "must be one of " + strings.Join(insights.InsightGroupings, ", ")

func parseInsightQuery(c *fiber.Ctx) (insights.FeedbackInsightFilter, error) {
	var f insights.FeedbackInsightFilter
	var err error
	switch f.GroupBy = c.Query("groupBy"); {
	case f.GroupBy == "":
		return f, envelope.BadRequest("groupBy", "is required; "+groupByIssue)
	case !slices.Contains(insights.InsightGroupings, f.GroupBy):
		return f, envelope.BadRequest("groupBy", groupByIssue)
	}
	if raw := c.Query("feedId"); raw != "" {
		id, err := parseUUID("feedId", raw)
		if err != nil {
			return f, err
		}
		f.FeedID = &id
	}
	if f.Rating = domain.Rating(c.Query("rating")); f.Rating != "" && !f.Rating.Known() {
		return f, envelope.BadRequest("rating", "must be one of positive, negative, neutral")
	}
	if f.Since, err = timeParam(c, "since"); err != nil {
		return f, err
	}
	if f.Until, err = timeParam(c, "until"); err != nil {
		return f, err
	}
	if f.Since != nil && f.Until != nil && !f.Since.Before(*f.Until) {
		return f, envelope.BadRequest("until", "must be after since")
	}
	f.Limit, f.Offset, err = pageParams(c, defaultInsightLimit)
	return f, err
}

// insightJSON is one group of GET /insights/feedback.
type insightJSON struct {
	Key            string        `json:"key"`
	FeedID         string        `json:"feedId,omitempty"`
	FeedKind       string        `json:"feedKind,omitempty"`
	Positive       int           `json:"positive"`
	Negative       int           `json:"negative"`
	Neutral        int           `json:"neutral"`
	Total          int           `json:"total"`
	NetScore       int           `json:"netScore"`
	ItemsRated     int           `json:"itemsRated"`
	Items          int           `json:"items"`
	RatedShare     float64       `json:"ratedShare"`
	LatestComments []commentJSON `json:"latestComments"`
}

type commentJSON struct {
	FeedbackID string `json:"feedbackId"`
	ItemID     string `json:"itemId"`
	Rating     string `json:"rating"`
	Comment    string `json:"comment"`
	At         string `json:"at"`
}

func insightOut(g insights.FeedbackInsight) insightJSON {
	out := insightJSON{
		Key: g.Key, Positive: g.Positive, Negative: g.Negative, Neutral: g.Neutral,
		Total: g.Positive + g.Negative + g.Neutral, NetScore: g.Positive - g.Negative,
		ItemsRated: g.ItemsRated, Items: g.Items, LatestComments: make([]commentJSON, 0, len(g.Comments)),
	}
	if g.FeedID != nil {
		out.FeedID = g.FeedID.String()
	}
	if g.FeedKind != nil {
		out.FeedKind = *g.FeedKind
	}
	if g.Items > 0 {
		out.RatedShare = float64(g.ItemsRated) / float64(g.Items)
	}
	for _, n := range g.Comments {
		out.LatestComments = append(out.LatestComments, commentJSON{
			FeedbackID: n.FeedbackID.String(), ItemID: n.ItemID.String(), Rating: n.Rating, Comment: n.Comment, At: shape.Timestamp(n.GivenAt),
		})
	}
	return out
}

type insightList struct {
	Groups     []insightJSON `json:"groups"`
	Total      int           `json:"total"`
	Pagination pagination    `json:"pagination"`
}

func (h *handlers) feedbackInsights(c *fiber.Ctx) error {
	f, err := parseInsightQuery(c)
	if err != nil {
		return err
	}
	page, err := h.Reads.Insights.FeedbackInsights(c.UserContext(), organization(c), f)
	if err != nil {
		return err
	}
	out := make([]insightJSON, 0, len(page.Groups))
	for _, g := range page.Groups {
		out = append(out, insightOut(g))
	}
	return envelope.OK(c, fiber.StatusOK, insightList{Groups: out, Total: page.Total,
		Pagination: pageOf(f.Limit, f.Offset, len(out), page.Total)})
}

// sourceRatingJSON is one source of GET /insights/sources/negative: the
// record as the organization sees it, and its feedback.
type sourceRatingJSON struct {
	SourceID string `json:"sourceId"`
	domain.SourceDetails
	Positive      int     `json:"positive"`
	Negative      int     `json:"negative"`
	Neutral       int     `json:"neutral"`
	Total         int     `json:"total"`
	NegativeShare float64 `json:"negativeShare"`
}

type sourceRatingList struct {
	Sources    []sourceRatingJSON `json:"sources"`
	Total      int                `json:"total"`
	Pagination pagination         `json:"pagination"`
}

func (h *handlers) negativeSources(c *fiber.Ctx) error {
	limit, offset, err := pageParams(c, defaultInsightLimit)
	if err != nil {
		return err
	}
	minFeedback, err := intParam(c, "minFeedback", 1, 1, 1_000_000)
	if err != nil {
		return err
	}
	page, err := h.Reads.NegativeSources.NegativeSources(c.UserContext(), organization(c), minFeedback, limit, offset)
	if err != nil {
		return err
	}
	out := make([]sourceRatingJSON, 0, len(page.Sources))
	for _, s := range page.Sources {
		total := s.Positive + s.Negative + s.Neutral
		out = append(out, sourceRatingJSON{
			SourceID: s.SourceID.String(), SourceDetails: s.Details, Positive: s.Positive, Negative: s.Negative,
			Neutral: s.Neutral, Total: total, NegativeShare: float64(s.Negative) / float64(total),
		})
	}
	return envelope.OK(c, fiber.StatusOK, sourceRatingList{Sources: out, Total: page.Total,
		Pagination: pageOf(limit, offset, len(out), page.Total)})
}
