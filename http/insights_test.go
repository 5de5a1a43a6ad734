package http_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// logFacts is what the insights count, read straight from the event log:
// the oracle the endpoint's figures are checked against.
type logFacts struct {
	items    map[uuid.UUID]loggedItem
	feedback []loggedFeedback // in log order
	deleted  map[uuid.UUID]bool
}

type loggedItem struct {
	org, feed, source uuid.UUID
	kind              domain.FeedKind
	at                time.Time
}

type loggedFeedback struct {
	domain.FeedbackGiven
	order int
}

func readLogFacts(t *testing.T, store eventstore.Store) logFacts {
	t.Helper()
	f := logFacts{items: map[uuid.UUID]loggedItem{}, deleted: map[uuid.UUID]bool{}}
	for from := eventstore.Start; ; {
		recs, err := store.ReadAll(context.Background(), from, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			e, err := domain.DecodeEvent(r.Type, r.Data)
			if err != nil {
				t.Fatal(err)
			}
			switch e := e.(type) {
			case domain.NewsItemAdded:
				f.addItem(e.ItemID, loggedItem{e.OrganizationID, e.FeedID, e.SourceID, domain.FeedNews, e.At})
			case domain.HappeningItemAdded:
				f.addItem(e.ItemID, loggedItem{e.OrganizationID, e.FeedID, e.SourceID, domain.FeedHappenings, e.At})
			case domain.FeedbackGiven:
				f.feedback = append(f.feedback, loggedFeedback{e, len(f.feedback)})
			case domain.FeedDeleted:
				f.deleted[e.FeedID] = true
			}
		}
		if len(recs) == 0 {
			return f
		}
		from = recs[len(recs)-1].Position
	}
}

func (f *logFacts) addItem(id uuid.UUID, it loggedItem) {
	if _, ok := f.items[id]; !ok {
		f.items[id] = it
	}
}

// insightQuery is a query of GET /insights/feedback.
type insightQuery struct {
	feed         *uuid.UUID
	groupBy      string
	since, until *time.Time
	rating       string
}

func (q insightQuery) values() url.Values {
	v := url.Values{"groupBy": {q.groupBy}}
	if q.feed != nil {
		v.Set("feedId", q.feed.String())
	}
	if q.since != nil {
		v.Set("since", q.since.Format(time.RFC3339))
	}
	if q.until != nil {
		v.Set("until", q.until.Format(time.RFC3339))
	}
	if q.rating != "" {
		v.Set("rating", q.rating)
	}
	return v
}

func (q insightQuery) String() string { return q.values().Encode() }

// insightGroup is one group as the API renders it.
type insightGroup struct {
	Key            string           `json:"key"`
	FeedID         string           `json:"feedId,omitempty"`
	FeedKind       string           `json:"feedKind,omitempty"`
	Positive       int              `json:"positive"`
	Negative       int              `json:"negative"`
	Neutral        int              `json:"neutral"`
	Total          int              `json:"total"`
	NetScore       int              `json:"netScore"`
	ItemsRated     int              `json:"itemsRated"`
	Items          int              `json:"items"`
	RatedShare     float64          `json:"ratedShare"`
	LatestComments []insightComment `json:"latestComments"`
}

type insightComment struct {
	FeedbackID string `json:"feedbackId"`
	ItemID     string `json:"itemId"`
	Rating     string `json:"rating"`
	Comment    string `json:"comment"`
	At         string `json:"at"`
}

// expected computes the groups of q for org from the log, by the rules
// the README states, written out independently of the SQL.
func (f logFacts) expected(org uuid.UUID, q insightQuery) []insightGroup {
	inScope := func(orgID, feedID uuid.UUID) bool {
		return orgID == org && !f.deleted[feedID] && (q.feed == nil || *q.feed == feedID)
	}
	type acc struct {
		g      insightGroup
		closes time.Time
		rated  map[uuid.UUID]bool
		notes  []loggedFeedback
	}
	groups := map[string]*acc{}
	for _, fb := range f.feedback {
		switch {
		case !inScope(fb.OrganizationID, fb.FeedID),
			q.since != nil && !fb.At.After(*q.since),
			q.until != nil && !fb.At.Before(*q.until),
			q.rating != "" && string(fb.Rating) != q.rating:
			continue
		}
		key, closes := "", time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
		day := fb.At.UTC().Truncate(24 * time.Hour)
		g := insightGroup{}
		switch q.groupBy {
		case "day":
			key, closes = day.Format(time.DateOnly), day.Add(24*time.Hour)
		case "week":
			monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
			key, closes = monday.Format(time.DateOnly), monday.AddDate(0, 0, 7)
		case "source":
			key = fb.SourceID.String()
		case "item":
			key, g.FeedID, g.FeedKind = fb.ItemID.String(), fb.FeedID.String(), string(fb.FeedKind())
		case "feed":
			key, g.FeedKind = fb.FeedID.String(), string(fb.FeedKind())
		}
		if q.until != nil && q.until.Before(closes) {
			closes = *q.until
		}
		a := groups[key]
		if a == nil {
			g.Key = key
			a = &acc{g: g, closes: closes, rated: map[uuid.UUID]bool{}}
			groups[key] = a
		}
		switch fb.Rating {
		case domain.RatingPositive:
			a.g.Positive++
		case domain.RatingNegative:
			a.g.Negative++
		case domain.RatingNeutral:
			a.g.Neutral++
		}
		a.rated[fb.ItemID] = true
		if fb.Comment != "" {
			a.notes = append(a.notes, fb)
		}
	}
	var out []insightGroup
	for _, a := range groups {
		g := a.g
		g.Total = g.Positive + g.Negative + g.Neutral
		g.NetScore = g.Positive - g.Negative
		g.ItemsRated = len(a.rated)
		for id, it := range f.items {
			inGroup := map[string]bool{"day": true, "week": true, "source": it.source.String() == g.Key,
				"item": id.String() == g.Key, "feed": it.feed.String() == g.Key}[q.groupBy]
			if inScope(it.org, it.feed) && inGroup && (it.at.Before(a.closes) || a.rated[id]) {
				g.Items++
			}
		}
		g.RatedShare = float64(g.ItemsRated) / float64(g.Items)
		g.LatestComments = []insightComment{}
		slices.SortFunc(a.notes, func(x, y loggedFeedback) int {
			return cmp.Or(y.At.Compare(x.At), cmp.Compare(y.order, x.order))
		})
		for _, n := range a.notes[:min(5, len(a.notes))] {
			g.LatestComments = append(g.LatestComments, insightComment{n.FeedbackID.String(), n.ItemID.String(), string(n.Rating), n.Comment, n.At.UTC().Format("2006-01-02T15:04:05.000Z")})
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(x, y insightGroup) int {
		if q.groupBy == "day" || q.groupBy == "week" {
			return strings.Compare(y.Key, x.Key)
		}
		return cmp.Or(cmp.Compare(y.Total, x.Total), strings.Compare(x.Key, y.Key))
	})
	return out
}

// fetchInsights reads every page of q, limit groups at a time.
func fetchInsights(t *testing.T, h *servicetest.Harness, key string, q insightQuery, limit int) []insightGroup {
	t.Helper()
	var all []insightGroup
	for offset := 0; ; offset += limit {
		v := q.values()
		v.Set("limit", fmt.Sprint(limit))
		v.Set("offset", fmt.Sprint(offset))
		r := h.DoWith("GET", "/insights/feedback?"+v.Encode(), nil, map[string]string{"Authorization": "Bearer " + key}).MustStatus(t, 200)
		var body struct {
			Data struct {
				Groups     []insightGroup `json:"groups"`
				Total      int            `json:"total"`
				Pagination struct {
					HasMore bool `json:"hasMore"`
				} `json:"pagination"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(r.Raw), &body); err != nil {
			t.Fatal(err)
		}
		all = append(all, body.Data.Groups...)
		if !body.Data.Pagination.HasMore {
			if body.Data.Total != len(all) {
				t.Fatalf("%s: total %d but %d groups over the pages", q, body.Data.Total, len(all))
			}
			return all
		}
	}
}

func TestFeedbackInsightsEqualCountsMadeFromTheEventLogForEveryGrouping(t *testing.T) {
	h := servicetest.Start(t)
	hist := servicetest.WriteFeedbackHistory(h, 7)
	facts := readLogFacts(t, h.Service.Store)
	if len(facts.feedback) < 70 {
		t.Fatalf("the history holds %d feedback entries; the test needs a varied one", len(facts.feedback))
	}
	day := func(d int, hour int) *time.Time {
		t := hist.Start.AddDate(0, 0, d).Add(time.Duration(hour) * time.Hour)
		return &t
	}
	news, events := hist.News[0], hist.Events[0]
	var queries []insightQuery
	for _, groupBy := range []string{"day", "week", "source", "item", "feed"} {
		queries = append(queries,
			insightQuery{groupBy: groupBy},
			insightQuery{groupBy: groupBy, feed: &news},
			insightQuery{groupBy: groupBy, feed: &events},
			insightQuery{groupBy: groupBy, since: day(2, 13), until: day(8, 7)},
			insightQuery{groupBy: groupBy, rating: "negative"},
			insightQuery{groupBy: groupBy, feed: &news, since: day(1, 0), rating: "positive"},
		)
	}
	checked := 0
	for _, q := range queries {
		t.Run(strings.ReplaceAll(q.String(), "/", "_"), func(t *testing.T) {
			want := facts.expected(hist.Org, q)
			for _, limit := range []int{100, 3} {
				got := fetchInsights(t, h, h.Key, q, limit)
				if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
					t.Fatalf("limit %d: the endpoint says\n%s\nthe log says\n%s", limit, g, w)
				}
			}
			if len(want) > 0 {
				checked++
			}
		})
	}
	if checked < len(queries)-2 {
		t.Fatalf("only %d of %d queries found feedback; the history is too thin to test them", checked, len(queries))
	}

	t.Run("another organization sees only its own feedback", func(t *testing.T) {
		for _, groupBy := range []string{"source", "feed", "day"} {
			q := insightQuery{groupBy: groupBy}
			got, want := fetchInsights(t, h, hist.OtherKey, q, 100), facts.expected(hist.Other, q)
			if g, w := mustJSON(t, got), mustJSON(t, want); g != w || len(want) == 0 {
				t.Fatalf("%s: the endpoint says\n%s\nthe log says\n%s", groupBy, g, w)
			}
		}
	})
}

// sourceRating is one source of GET /insights/sources/negative.
type sourceRating struct {
	SourceID      string  `json:"sourceId"`
	SourceType    string  `json:"sourceType"`
	Domain        string  `json:"domain"`
	Positive      int     `json:"positive"`
	Negative      int     `json:"negative"`
	Neutral       int     `json:"neutral"`
	Total         int     `json:"total"`
	NegativeShare float64 `json:"negativeShare"`
}

// expectedNegativeSources ranks org's sources from the log: every entry
// counts, deleted feeds' too.
func (f logFacts) expectedNegativeSources(org uuid.UUID, minFeedback int, domains map[uuid.UUID]string) []sourceRating {
	bySource := map[uuid.UUID]*sourceRating{}
	for _, fb := range f.feedback {
		if fb.OrganizationID != org {
			continue
		}
		r := bySource[fb.SourceID]
		if r == nil {
			r = &sourceRating{SourceID: fb.SourceID.String(), SourceType: "site", Domain: domains[fb.SourceID]}
			bySource[fb.SourceID] = r
		}
		switch fb.Rating {
		case domain.RatingPositive:
			r.Positive++
		case domain.RatingNegative:
			r.Negative++
		default:
			r.Neutral++
		}
		r.Total++
	}
	var out []sourceRating
	for _, r := range bySource {
		if r.Total >= minFeedback {
			r.NegativeShare = float64(r.Negative) / float64(r.Total)
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(x, y sourceRating) int {
		return cmp.Or(cmp.Compare(y.NegativeShare, x.NegativeShare), cmp.Compare(y.Negative, x.Negative), strings.Compare(x.SourceID, y.SourceID))
	})
	return out
}

func TestSourcesRankedByNegativeShareEqualTheLogAndAnswerOnlyTheirOrganization(t *testing.T) {
	h := servicetest.Start(t)
	hist := servicetest.WriteFeedbackHistory(h, 11)
	facts := readLogFacts(t, h.Service.Store)
	domains := map[uuid.UUID]string{}
	var rows []struct {
		ID     uuid.UUID `bun:"id"`
		Domain string    `bun:"domain"`
	}
	if err := h.Service.DB.Bun.NewRaw("SELECT id, details->>'domain' AS domain FROM sources").Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		domains[r.ID] = r.Domain
	}
	for _, c := range []struct {
		name        string
		key         string
		org         uuid.UUID
		minFeedback int
	}{
		{"acme, every source", h.Key, hist.Org, 1},
		{"acme, sources with ten entries or more", h.Key, hist.Org, 10},
		{"globex, every source", hist.OtherKey, hist.Other, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := facts.expectedNegativeSources(c.org, c.minFeedback, domains)
			if len(want) < 2 {
				t.Fatalf("%d sources: too few to rank", len(want))
			}
			for _, limit := range []int{100, 1} {
				var got []sourceRating
				for offset := 0; ; offset += limit {
					r := h.DoWith("GET", fmt.Sprintf("/insights/sources/negative?minFeedback=%d&limit=%d&offset=%d", c.minFeedback, limit, offset),
						nil, map[string]string{"Authorization": "Bearer " + c.key}).MustStatus(t, 200)
					var body struct {
						Data struct {
							Sources    []sourceRating `json:"sources"`
							Total      int            `json:"total"`
							Pagination struct {
								HasMore bool `json:"hasMore"`
							} `json:"pagination"`
						} `json:"data"`
					}
					if err := json.Unmarshal([]byte(r.Raw), &body); err != nil {
						t.Fatal(err)
					}
					if body.Data.Total != len(want) {
						t.Fatalf("total %d, want %d", body.Data.Total, len(want))
					}
					got = append(got, body.Data.Sources...)
					if !body.Data.Pagination.HasMore {
						break
					}
				}
				if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
					t.Fatalf("limit %d: the endpoint says\n%s\nthe log says\n%s", limit, g, w)
				}
			}
		})
	}
}

func TestInsightQueriesAreValidatedAndIsolated(t *testing.T) {
	h := servicetest.Start(t)
	feed := h.Do("POST", "/feeds/news", map[string]string{"name": "n", "description": "d"}).MustStatus(t, 201).Data()["id"].(string)
	other := h.NewKey("other")
	otherFeed := h.DoWith("POST", "/feeds/news", map[string]string{"name": "n", "description": "d"},
		map[string]string{"Authorization": "Bearer " + other}).MustStatus(t, 201).Data()["id"].(string)
	cases := []struct {
		name, path, field string
	}{
		{"no groupBy", "/insights/feedback", "groupBy"},
		{"an unknown groupBy", "/insights/feedback?groupBy=month", "groupBy"},
		{"a malformed feedId", "/insights/feedback?groupBy=day&feedId=feed-1", "feedId"},
		{"an unknown rating", "/insights/feedback?groupBy=day&rating=great", "rating"},
		{"a malformed since", "/insights/feedback?groupBy=day&since=last-week", "since"},
		{"since not before until", "/insights/feedback?groupBy=day&since=2026-11-20&until=2026-11-20", "until"},
		{"a limit over 100", "/insights/feedback?groupBy=day&limit=101", "limit"},
		{"a negative offset", "/insights/feedback?groupBy=day&offset=-1", "offset"},
		{"groupBy given twice", "/insights/feedback?groupBy=day&groupBy=week", "groupBy"},
		{"a zero minFeedback", "/insights/sources/negative?minFeedback=0", "minFeedback"},
		{"a non-numeric minFeedback", "/insights/sources/negative?minFeedback=many", "minFeedback"},
	}
	for _, c := range cases {
		t.Run(c.name+" answers 400 in the news dialect naming the field", func(t *testing.T) {
			r := h.Do("GET", c.path, nil).MustStatus(t, 400)
			e := r.Body["error"].(map[string]any)
			if e["code"] != "VALIDATION_ERROR" || e["details"].(map[string]any)["field"] != c.field {
				t.Fatalf("error %v", e)
			}
			for _, echoed := range []string{"month", "feed-1", "great", "last-week", "many"} {
				if strings.Contains(r.Raw, echoed) {
					t.Fatalf("the answer echoes the request: %s", r.Raw)
				}
			}
		})
	}
	t.Run("another organization's feed answers 404 feed", func(t *testing.T) {
		r := h.Do("GET", "/insights/feedback?groupBy=day&feedId="+otherFeed, nil).MustStatus(t, 404)
		if e := r.Body["error"].(map[string]any); e["code"] != "NOT_FOUND" || e["resource"] != "feed" {
			t.Fatalf("error %v", e)
		}
	})
	t.Run("an own feed without feedback answers an empty page", func(t *testing.T) {
		d := h.Do("GET", "/insights/feedback?groupBy=feed&feedId="+feed, nil).MustStatus(t, 200).Data()
		if d["total"] != 0.0 || len(d["groups"].([]any)) != 0 || d["pagination"].(map[string]any)["hasMore"] != false {
			t.Fatalf("data %v", d)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
