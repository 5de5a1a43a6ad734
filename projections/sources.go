package projections

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel"
)

// Sources projects the shared source records and each organization's view
// of them (created, linked or attached: when, and with which details).
type Sources struct{}

func (Sources) Name() string     { return "sources" }
func (Sources) Version() int     { return 1 }
func (Sources) Tables() []string { return []string{"sources", "source_organizations"} }

func (Sources) Handlers() []Handler {
	return []Handler{
		On(func(ctx context.Context, db bun.IDB, e domain.SourceRegistered) error {
			row := readmodel.Source{ID: e.SourceID, SourceType: string(e.SourceType), Details: e.Details, CreatedAt: e.At}
			if err := exec(db.NewInsert().Model(&row).On("CONFLICT (id) DO NOTHING").Exec(ctx)); err != nil {
				return err
			}
			return link(ctx, db, readmodel.SourceOrganization{SourceID: e.SourceID, OrganizationID: e.OrganizationID, Details: &e.Details, LinkedAt: e.At})
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.SourceLinkedToOrganization) error {
			return link(ctx, db, readmodel.SourceOrganization{SourceID: e.SourceID, OrganizationID: e.OrganizationID, Details: e.Details, LinkedAt: e.At})
		}),
	}
}

func link(ctx context.Context, db bun.IDB, row readmodel.SourceOrganization) error {
	return exec(db.NewInsert().Model(&row).On("CONFLICT (organization_id, source_id) DO NOTHING").Exec(ctx))
}
