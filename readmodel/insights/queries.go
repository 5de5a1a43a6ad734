// Package insights owns the feedback insights read model: every feedback
// entry and every item ever added, for GET /insights/feedback (tables
// insight_items, insight_feedback and insight_deleted_feeds), its projector
// and its query.
package insights

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
)

// Queries answers reads of the insights read model.
type Queries struct{ db bun.IDB }

// NewQueries returns the insights' query side over db.
func NewQueries(db bun.IDB) *Queries { return &Queries{db: db} }

// Groupings of feedback insights.
const (
	GroupByDay    = "day"
	GroupByWeek   = "week"
	GroupBySource = "source"
	GroupByItem   = "item"
	GroupByFeed   = "feed"
)

// InsightGroupings are the groupings GET /insights/feedback takes.
var InsightGroupings = []string{GroupByDay, GroupByWeek, GroupBySource, GroupByItem, GroupByFeed}

// FeedbackInsightFilter selects the feedback entries of an insight and
// how they are grouped.
type FeedbackInsightFilter struct {
	// FeedID restricts it to one feed (of either kind) when set.
	FeedID  *uuid.UUID
	GroupBy string
	// Since and Until are exclusive bounds on when feedback was given.
	Since, Until *time.Time
	// Rating keeps only entries of that rating when set.
	Rating        domain.Rating
	Limit, Offset int
}

// FeedbackInsight is one group's figures.
type FeedbackInsight struct {
	// Key is the day or the week's Monday (YYYY-MM-DD, UTC), or the id of
	// the source, item or feed.
	Key string
	// FeedID is set for item groups; FeedKind for item and feed groups.
	FeedID   *uuid.UUID
	FeedKind *string
	Positive int
	Negative int
	Neutral  int
	// ItemsRated counts the group's distinct items with an entry; Items
	// the group's items that existed when its window closed (see the
	// insights notes in docs/api-notes.md), which always include the rated ones.
	ItemsRated int
	Items      int
	// Comments are the latest five non-empty comments, newest first.
	Comments []InsightComment
}

// InsightComment is a comment of a feedback entry.
type InsightComment struct {
	FeedbackID uuid.UUID `json:"feedback_id"`
	ItemID     uuid.UUID `json:"item_id"`
	Rating     string    `json:"rating"`
	Comment    string    `json:"comment"`
	GivenAt    time.Time `json:"given_at"`
}

// FeedbackInsightPage is a page of groups and how many there are.
type FeedbackInsightPage struct {
	Groups []FeedbackInsight
	Total  int
}

// insightGrouping is how one groupBy reads in SQL: the group's key over
// the feedback (fb), the columns a group carries, when its window closes,
// and how many of the items in scope (insight_items AS i, the organization's
// or the feed's) that belong to group g were added before it closed.
type insightGrouping struct {
	key, carried, closes, itemsBefore string
	period                            bool
}

// periodItemsBefore counts the items in scope added before g.closes for a
// day or week: whole days from per-day counts made once per query
// (item_days), and the part of a day that until cuts off from the rows, so
// that a page of weeks does not count the organization's items a hundred
// times over.
const periodItemsBefore = `(SELECT coalesce(sum(d.n), 0) FROM item_days AS d WHERE d.day < date_trunc('day', g.closes AT TIME ZONE 'UTC'))
	+ (SELECT count(*) FROM insight_items AS i WHERE {scope}
		AND i.added_at >= date_trunc('day', g.closes AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AND i.added_at < g.closes)`

var insightGroupings = map[string]insightGrouping{
	GroupByDay: {
		key: "date_trunc('day', fb.given_at AT TIME ZONE 'UTC')", carried: "NULL::uuid AS feed_id, NULL::text AS feed_kind",
		closes: "(gkey + interval '1 day') AT TIME ZONE 'UTC'", itemsBefore: periodItemsBefore, period: true,
	},
	GroupByWeek: {
		key: "date_trunc('week', fb.given_at AT TIME ZONE 'UTC')", carried: "NULL::uuid AS feed_id, NULL::text AS feed_kind",
		closes: "(gkey + interval '7 days') AT TIME ZONE 'UTC'", itemsBefore: periodItemsBefore, period: true,
	},
	GroupBySource: {
		key: "fb.source_id", carried: "NULL::uuid AS feed_id, NULL::text AS feed_kind", closes: "'infinity'::timestamptz",
		itemsBefore: "(SELECT count(*) FROM insight_items AS i WHERE {scope} AND i.source_id = g.gkey AND i.added_at < g.closes)",
	},
	GroupByItem: {
		key: "fb.item_id", carried: "fb.feed_id, fb.feed_kind", closes: "'infinity'::timestamptz",
		itemsBefore: "(SELECT count(*) FROM insight_items AS i WHERE {scope} AND i.item_id = g.gkey AND i.added_at < g.closes)",
	},
	GroupByFeed: {
		key: "fb.feed_id", carried: "NULL::uuid AS feed_id, fb.feed_kind", closes: "'infinity'::timestamptz",
		itemsBefore: "(SELECT count(*) FROM insight_items AS i WHERE {scope} AND i.feed_id = g.gkey AND i.added_at < g.closes)",
	},
}

// insightsSQL is the one statement of an insight page. Its named
// arguments are insightArgs; a NULL one filters nothing.
//
//   - fb: the entries the filter keeps, with their group's key and when
//     the group's window closes;
//   - rated: one row per group and item, with the item's counts and
//     whether it was added at or after the window closed (it existed all
//     the same, having been rated: the denominator adds it); grouping
//     twice counts distinct items without sorting every entry;
//   - groups: the counts of every group; page: the groups of the page;
//   - notes: per group on the page, its latest five comments, whose text
//     is read for those alone.
const insightsSQL = `WITH fb AS MATERIALIZED (
		SELECT e.*, least({closes}, coalesce(?until::timestamptz, 'infinity')) AS closes
		FROM (SELECT fb.feedback_id, fb.item_id, fb.feed_id, fb.feed_kind, fb.rating, fb.comment <> '' AS noted,
				fb.given_at, fb.log_commit, fb.log_prepare, fb.item_added_at, {key} AS gkey
			FROM insight_feedback AS fb
			WHERE fb.organization_id = ?org
			  AND (?feed::uuid IS NULL OR fb.feed_id = ?feed::uuid)
			  AND (?since::timestamptz IS NULL OR fb.given_at > ?since::timestamptz)
			  AND (?until::timestamptz IS NULL OR fb.given_at < ?until::timestamptz)
			  AND (?rating::text IS NULL OR fb.rating = ?rating::text)) AS e
	), rated AS (
		SELECT gkey, {carried}, closes,
			count(*) FILTER (WHERE rating = 'positive') AS positive,
			count(*) FILTER (WHERE rating = 'negative') AS negative,
			count(*) FILTER (WHERE rating = 'neutral') AS neutral,
			bool_or(item_added_at IS NULL OR item_added_at >= closes) AS late
		FROM fb GROUP BY gkey, item_id, 2, 3, closes
	), groups AS (
		SELECT gkey, feed_id, feed_kind, closes, sum(positive) AS positive, sum(negative) AS negative, sum(neutral) AS neutral,
			sum(positive + negative + neutral) AS total, count(*) AS items_rated, count(*) FILTER (WHERE late) AS late
		FROM rated GROUP BY gkey, feed_id, feed_kind, closes
	), page AS MATERIALIZED (
		SELECT g.* FROM groups AS g ORDER BY {order} LIMIT ?limit OFFSET ?offset
	), item_days AS MATERIALIZED (
		SELECT date_trunc('day', i.added_at AT TIME ZONE 'UTC') AS day, count(*) AS n
		FROM insight_items AS i WHERE {period} AND {scope} GROUP BY 1
	), notes AS (
		SELECT c.gkey, json_agg(json_build_object('feedback_id', c.feedback_id, 'item_id', c.item_id, 'rating', c.rating,
			'comment', (SELECT f.comment FROM insight_feedback AS f WHERE f.feedback_id = c.feedback_id),
			'given_at', c.given_at) ORDER BY c.rn) AS comments
		FROM (SELECT r.*, row_number() OVER (PARTITION BY r.gkey ORDER BY r.given_at DESC, r.log_commit DESC, r.log_prepare DESC) AS rn
			FROM fb AS r JOIN page AS g ON g.gkey = r.gkey WHERE r.noted) AS c
		WHERE c.rn <= 5 GROUP BY c.gkey
	)
	SELECT t.total_groups, {keyText} AS key, g.feed_id, g.feed_kind, g.positive, g.negative, g.neutral, g.items_rated,
		{itemsBefore} + g.late AS items, coalesce(notes.comments, '[]') AS comments
	FROM (SELECT count(*) AS total_groups FROM groups) AS t
	LEFT JOIN page AS g ON true
	LEFT JOIN notes ON notes.gkey = g.gkey
	ORDER BY {order}`

// FeedbackInsights groups an organization's feedback (or one feed's) as
// the filter says. A feed the organization does not have is not found.
func (q *Queries) FeedbackInsights(ctx context.Context, org uuid.UUID, f FeedbackInsightFilter) (FeedbackInsightPage, error) {
	query, args, err := insightQuery(org, f)
	if err != nil {
		return FeedbackInsightPage{}, err
	}
	if f.FeedID != nil {
		if err := q.feedOfAnyKind(ctx, org, *f.FeedID); err != nil {
			return FeedbackInsightPage{}, err
		}
	}
	var rows []insightRow
	if err = q.db.NewRaw(query, args).Scan(ctx, &rows); err != nil {
		return FeedbackInsightPage{}, fmt.Errorf("feedback insights of %s: %w", org, err)
	}
	page := FeedbackInsightPage{Groups: []FeedbackInsight{}}
	for _, r := range rows {
		page.Total = r.TotalGroups
		if r.Key == nil { // no group on this page
			continue
		}
		g := FeedbackInsight{
			Key: *r.Key, FeedID: r.FeedID, FeedKind: r.FeedKind, Positive: r.Positive, Negative: r.Negative,
			Neutral: r.Neutral, ItemsRated: r.ItemsRated, Items: r.Items,
		}
		if err := json.Unmarshal(r.Comments, &g.Comments); err != nil {
			return FeedbackInsightPage{}, fmt.Errorf("feedback insights of %s: read comments: %w", org, err)
		}
		page.Groups = append(page.Groups, g)
	}
	return page, nil
}

// insightQuery is the statement and arguments of an insight page.
func insightQuery(org uuid.UUID, f FeedbackInsightFilter) (string, insightArgs, error) {
	g, ok := insightGroupings[f.GroupBy]
	if !ok {
		return "", insightArgs{}, fmt.Errorf("feedback insights: unknown grouping %q", f.GroupBy)
	}
	args := insightArgs{Org: org, Feed: f.FeedID, Since: f.Since, Until: f.Until, Limit: f.Limit, Offset: f.Offset}
	if f.Rating != "" {
		rating := string(f.Rating)
		args.Rating = &rating
	}
	keyText, order := "g.gkey::text", "g.total DESC, g.gkey"
	if g.period {
		keyText, order = "to_char(g.gkey, 'YYYY-MM-DD')", "g.gkey DESC"
	}
	query := strings.NewReplacer(
		"{itemsBefore}", g.itemsBefore, "{key}", g.key, "{carried}", g.carried, "{closes}", g.closes,
		"{keyText}", keyText, "{order}", order, "{period}", fmt.Sprint(g.period),
	).Replace(insightsSQL)
	return strings.ReplaceAll(query, "{scope}", "i.organization_id = ?org AND (?feed::uuid IS NULL OR i.feed_id = ?feed::uuid)"), args, nil
}

// insightArgs are the insight query's named arguments; nil is NULL, no
// filter.
type insightArgs struct {
	Org    uuid.UUID  `bun:"org,type:uuid"`
	Feed   *uuid.UUID `bun:"feed,type:uuid"`
	Since  *time.Time `bun:"since"`
	Until  *time.Time `bun:"until"`
	Rating *string    `bun:"rating"`
	Limit  int        `bun:"limit"`
	Offset int        `bun:"offset"`
}

// insightRow is a row of the insight query: the number of groups, and a
// group unless the page has none.
type insightRow struct {
	TotalGroups int `bun:"total_groups"`
	Key         *string
	FeedID      *uuid.UUID `bun:"feed_id,type:uuid"`
	FeedKind    *string
	Positive    int
	Negative    int
	Neutral     int
	ItemsRated  int
	Items       int
	Comments    []byte `bun:"comments"`
}

// feedOfAnyKind checks that the organization has the feed, of any kind.
func (q *Queries) feedOfAnyKind(ctx context.Context, org, id uuid.UUID) error {
	var kind string
	err := q.db.NewRaw("SELECT kind FROM feeds WHERE id = ? AND organization_id = ?", id, org).Scan(ctx, &kind)
	if errors.Is(err, sql.ErrNoRows) {
		return &domain.NotFoundError{Resource: "feed", ID: id.String()}
	}
	if err != nil {
		return fmt.Errorf("get feed %s: %w", id, err)
	}
	return nil
}
