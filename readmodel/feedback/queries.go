package feedback

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Queries answers reads of the feedback read model.
type Queries struct{ db bun.IDB }

// NewQueries returns the feedback query side over db.
func NewQueries(db bun.IDB) *Queries { return &Queries{db: db} }

// Counts are the ratings given within a scope.
type Counts struct {
	Positive int64 `bun:"positive"`
	Negative int64 `bun:"negative"`
	Neutral  int64 `bun:"neutral"`
}

// Feedback scopes: counts are kept per item, per feed and per source record.
const (
	ScopeItem   = "item"
	ScopeFeed   = "feed"
	ScopeSource = "source"
)

// Counts returns the counts of one scope; zero when none.
func (q *Queries) Counts(ctx context.Context, scope string, id uuid.UUID) (Counts, error) {
	var c Counts
	err := q.db.NewRaw("SELECT positive, negative, neutral FROM feedback_counts WHERE scope = ? AND scope_id = ?", scope, id).
		Scan(ctx, &c.Positive, &c.Negative, &c.Neutral)
	if errors.Is(err, sql.ErrNoRows) {
		return Counts{}, nil
	}
	if err != nil {
		return Counts{}, fmt.Errorf("feedback counts of %s %s: %w", scope, id, err)
	}
	return c, nil
}
