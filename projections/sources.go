package projections

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel"
)

// Sources projects the shared source records and which organizations know
// them (created, linked or attached).
type Sources struct{}

func (Sources) Name() string     { return "sources" }
func (Sources) Tables() []string { return []string{"sources", "source_organizations"} }
func (Sources) EventTypes() []string {
	return []string{
		domain.SourceRegistered{}.EventType(), domain.SourceLinkedToOrganization{}.EventType(),
		domain.NewsSourceAttached{}.EventType(),
	}
}

func (Sources) Project(ctx context.Context, db bun.IDB, env Envelope) error {
	switch e := env.Event.(type) {
	case domain.SourceRegistered:
		row := readmodel.Source{ID: e.SourceID, SourceType: string(e.SourceType), Details: e.Details, CreatedAt: e.At}
		if err := exec(db.NewInsert().Model(&row).On("CONFLICT (id) DO NOTHING").Exec(ctx)); err != nil {
			return err
		}
		return link(ctx, db, readmodel.SourceOrganization{SourceID: e.SourceID, OrganizationID: e.OrganizationID, LinkedAt: e.At})
	case domain.SourceLinkedToOrganization:
		return link(ctx, db, readmodel.SourceOrganization{SourceID: e.SourceID, OrganizationID: e.OrganizationID, LinkedAt: e.At})
	case domain.NewsSourceAttached:
		return link(ctx, db, readmodel.SourceOrganization{SourceID: e.SourceID, OrganizationID: e.OrganizationID, LinkedAt: e.At})
	}
	return nil
}

func link(ctx context.Context, db bun.IDB, row readmodel.SourceOrganization) error {
	return exec(db.NewInsert().Model(&row).On("CONFLICT (organization_id, source_id) DO NOTHING").Exec(ctx))
}
