// Package negativesources owns the negative sources insight: per
// organization and source record, the feedback given on items the source
// brought (table insight_source_ratings), its projector and the ranking
// GET /insights/sources/negative reads. It is the worked example of adding
// a read model (docs/read-models.md).
package negativesources

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/negativesources/migrations"
)

// Projector counts, per organization and source record, the
// feedback given on items the source brought, for the ranking of sources
// by their share of negative feedback (GET /insights/sources/negative).
// It is the worked example (docs/read-models.md) of adding an insight: a table created
// empty by a migration, this projector, and a query; its first run (or
// `feedsvc projections rebuild negativesources`) reads the whole log, so
// the ranking covers all feedback ever given.
//
// It counts every entry, including those on feeds deleted since: it reads
// FeedbackGiven alone.
type Projector struct{}

func (Projector) Name() string     { return "negativesources" }
func (Projector) Version() int     { return 1 }
func (Projector) Tables() []string { return []string{"insight_source_ratings"} }

// Migrations are its tables' migrations, in the package migrations
// beside it; the service's schema applies them with every other owner's.
func (Projector) Migrations() migrate.Owner { return migrations.Owner }

func (Projector) Handlers() []projections.Handler {
	return []projections.Handler{projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedbackGiven) error {
		if !e.Rating.Known() {
			return fmt.Errorf("feedback %s has unknown rating %q", e.FeedbackID, e.Rating)
		}
		// The column is one of three known names, checked above.
		return projections.Exec(db.NewRaw(fmt.Sprintf(`INSERT INTO insight_source_ratings (organization_id, source_id, %[1]s) VALUES (?, ?, 1)
			ON CONFLICT (organization_id, source_id) DO UPDATE SET %[1]s = insight_source_ratings.%[1]s + 1`, e.Rating),
			e.OrganizationID, e.SourceID).Exec(ctx))
	})}
}
