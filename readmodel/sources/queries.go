package sources

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/domain"
)

// Queries answers reads of the sources read model.
type Queries struct{ db bun.IDB }

// NewQueries returns the sources' query side over db.
func NewQueries(db bun.IDB) *Queries { return &Queries{db: db} }

// sourceView selects a record as one organization sees it: its own
// details (its siteId) and when it first registered the record.
func (q *Queries) sourceView(org uuid.UUID) *bun.SelectQuery {
	return q.db.NewSelect().
		ColumnExpr("source.id, source.source_type").
		ColumnExpr("coalesce(so.details, source.details) AS details").
		ColumnExpr("so.linked_at AS created_at").
		TableExpr("sources AS source").
		Join("JOIN source_organizations AS so ON so.source_id = source.id").
		Where("so.organization_id = ?", org)
}

// Sources lists the source records an organization created or attached,
// newest first, as it sees them.
func (q *Queries) Sources(ctx context.Context, org uuid.UUID) ([]Source, error) {
	out := []Source{}
	err := q.sourceView(org).OrderExpr("so.linked_at DESC, source.id DESC").Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("list sources of %s: %w", org, err)
	}
	return out, nil
}

// Source returns a record the organization knows, as it sees it; others
// answer not found.
func (q *Queries) Source(ctx context.Context, org, id uuid.UUID) (Source, error) {
	var s Source
	err := q.sourceView(org).Where("source.id = ?", id).Scan(ctx, &s)
	if errors.Is(err, sql.ErrNoRows) {
		return Source{}, &domain.NotFoundError{Resource: "source", ID: id.String()}
	}
	if err != nil {
		return Source{}, fmt.Errorf("get source %s: %w", id, err)
	}
	return s, nil
}

// SourceDetails implements commands.Lookups.
func (q *Queries) SourceDetails(ctx context.Context, org, id uuid.UUID) (domain.SourceDetails, error) {
	s, err := q.Source(ctx, org, id)
	if err != nil {
		return domain.SourceDetails{}, err
	}
	return s.Details, nil
}

// KnownSources says which of ids are source records the organization
// registered or attached.
func (q *Queries) KnownSources(ctx context.Context, org uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	var known []uuid.UUID
	err := q.db.NewRaw(`SELECT source_id FROM source_organizations WHERE organization_id = ? AND source_id = ANY(?::uuid[])`,
		org, pgdialect.Array(ids)).Scan(ctx, &known)
	if err != nil {
		return nil, fmt.Errorf("find sources %s knows: %w", org, err)
	}
	out := make(map[uuid.UUID]bool, len(known))
	for _, id := range known {
		out[id] = true
	}
	return out, nil
}
