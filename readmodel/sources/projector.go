package sources

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/sources/migrations"
)

// Projector projects the shared source records and each organization's view
// of them (created, linked or attached: when, and with which details).
type Projector struct{}

func (Projector) Name() string     { return "sources" }
func (Projector) Version() int     { return 1 }
func (Projector) Tables() []string { return []string{"sources", "source_organizations"} }

// Migrations are its tables' migrations, in the package migrations
// beside it; the service's schema applies them with every other owner's.
func (Projector) Migrations() migrate.Owner { return migrations.Owner }

func (Projector) Handlers() []projections.Handler {
	return []projections.Handler{
		projections.On(func(ctx context.Context, db bun.IDB, e domain.SourceRegistered) error {
			row := Source{ID: e.SourceID, SourceType: string(e.SourceType), Details: e.Details, CreatedAt: e.At}
			if err := projections.Exec(db.NewInsert().Model(&row).On("CONFLICT (id) DO NOTHING").Exec(ctx)); err != nil {
				return err
			}
			return link(ctx, db, SourceOrganization{SourceID: e.SourceID, OrganizationID: e.OrganizationID, Details: &e.Details, LinkedAt: e.At})
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.SourceLinkedToOrganization) error {
			return link(ctx, db, SourceOrganization{SourceID: e.SourceID, OrganizationID: e.OrganizationID, Details: e.Details, LinkedAt: e.At})
		}),
	}
}

func link(ctx context.Context, db bun.IDB, row SourceOrganization) error {
	return projections.Exec(db.NewInsert().Model(&row).On("CONFLICT (organization_id, source_id) DO NOTHING").Exec(ctx))
}
