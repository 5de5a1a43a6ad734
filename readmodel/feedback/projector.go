// Package feedback owns the feedback read model: every feedback entry on
// items of feeds of every kind and running counts per item, feed and
// source record (tables item_feedback and feedback_counts), its projector
// and its queries.
package feedback

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/feedback/migrations"
)

// Projector projects every feedback entry, on items of feeds of every kind,
// and running counts per item, per feed and per source record, for later
// insights. An entry names its article (news) or its event (events).
type Projector struct{}

func (Projector) Name() string     { return "feedback" }
func (Projector) Version() int     { return 1 }
func (Projector) Tables() []string { return []string{"item_feedback", "feedback_counts"} }

// Migrations are its tables' migrations, in the package migrations
// beside it; the service's schema applies them with every other owner's.
func (Projector) Migrations() migrate.Owner { return migrations.Owner }

func (Projector) Handlers() []projections.Handler {
	return []projections.Handler{projections.On(projectFeedback)}
}

func projectFeedback(ctx context.Context, db bun.IDB, e domain.FeedbackGiven) error {
	res, err := db.NewRaw(`INSERT INTO item_feedback (id, feed_kind, item_id, feed_id, organization_id, news_page_id, event_id, source_id, rating, comment, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		e.FeedbackID, string(e.FeedKind()), e.ItemID, e.FeedID, e.OrganizationID, nullID(e.NewsPageID), nullID(e.HappeningID),
		e.SourceID, string(e.Rating), e.Comment, e.At).Exec(ctx)
	if err != nil {
		return projections.Exec(nil, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	col := string(e.Rating)
	if !e.Rating.Known() {
		return fmt.Errorf("feedback %s has unknown rating %q", e.FeedbackID, e.Rating)
	}
	for scope, id := range map[string]any{
		ScopeItem: e.ItemID, ScopeFeed: e.FeedID, ScopeSource: e.SourceID,
	} {
		q := fmt.Sprintf(`INSERT INTO feedback_counts (scope, scope_id, %[1]s) VALUES (?, ?, 1)
			ON CONFLICT (scope, scope_id) DO UPDATE SET %[1]s = feedback_counts.%[1]s + 1`, col)
		if err := projections.Exec(db.NewRaw(q, scope, id).Exec(ctx)); err != nil {
			return err
		}
	}
	return nil
}

// nullID is NULL for an id the event does not carry.
func nullID(id uuid.UUID) any {
	if id == uuid.Nil {
		return nil
	}
	return id
}
