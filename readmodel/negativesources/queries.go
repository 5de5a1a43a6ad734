package negativesources

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
)

// Queries answers reads of the negative sources read model.
type Queries struct{ db bun.IDB }

// NewQueries returns the negative sources' query side over db.
func NewQueries(db bun.IDB) *Queries { return &Queries{db: db} }

// SourceRating is a source record's feedback counts, with the record as
// the organization sees it.
type SourceRating struct {
	SourceID uuid.UUID            `bun:"source_id,type:uuid"`
	Details  domain.SourceDetails `bun:"details,type:jsonb"`
	Positive int                  `bun:"positive"`
	Negative int                  `bun:"negative"`
	Neutral  int                  `bun:"neutral"`
}

// SourceRatingPage is a page of sources and how many there are.
type SourceRatingPage struct {
	Sources []SourceRating
	Total   int
}

// NegativeSources ranks an organization's sources with at least
// minFeedback entries by their share of negative entries (highest first;
// then more negative entries first, then by id).
func (q *Queries) NegativeSources(ctx context.Context, org uuid.UUID, minFeedback, limit, offset int) (SourceRatingPage, error) {
	var rows []struct {
		Total int `bun:"total"`
		SourceRating
		Present bool `bun:"present"`
	}
	err := q.db.NewRaw(`WITH rated AS (
			SELECT r.*, r.positive + r.negative + r.neutral AS entries FROM insight_source_ratings AS r
			WHERE r.organization_id = ?0 AND r.positive + r.negative + r.neutral >= ?1
		), page AS (
			SELECT * FROM rated ORDER BY negative::float8 / entries DESC, negative DESC, source_id LIMIT ?2 OFFSET ?3
		)
		SELECT t.total, p.source_id IS NOT NULL AS present, p.source_id, p.positive, p.negative, p.neutral,
			CASE WHEN so.source_id IS NULL THEN '{}'::jsonb ELSE coalesce(so.details, s.details) END AS details
		FROM (SELECT count(*) AS total FROM rated) AS t
		LEFT JOIN page AS p ON true
		LEFT JOIN sources AS s ON s.id = p.source_id
		LEFT JOIN source_organizations AS so ON so.source_id = p.source_id AND so.organization_id = ?0
		ORDER BY p.negative::float8 / p.entries DESC, p.negative DESC, p.source_id`,
		org, minFeedback, limit, offset).Scan(ctx, &rows)
	if err != nil {
		return SourceRatingPage{}, fmt.Errorf("rank sources of %s by negative feedback: %w", org, err)
	}
	page := SourceRatingPage{Sources: []SourceRating{}}
	for _, r := range rows {
		page.Total = r.Total
		if r.Present {
			page.Sources = append(page.Sources, r.SourceRating)
		}
	}
	return page, nil
}
