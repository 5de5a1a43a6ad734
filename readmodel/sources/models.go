// Package sources owns the sources read model: the shared source records
// and each organization's view of them (tables sources and
// source_organizations), its projector, and the queries the API and the
// commands (a siteId's details) read them with.
package sources

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
)

// Source is a row of sources: a shared source record, or (from the
// queries) one organization's view of it.
type Source struct {
	bun.BaseModel `bun:"table:sources"`

	ID         uuid.UUID            `bun:"id,pk,type:uuid"`
	SourceType string               `bun:"source_type"`
	Details    domain.SourceDetails `bun:"details,type:jsonb"`
	CreatedAt  time.Time            `bun:"created_at"`
}

// View is the record as the domain describes an organization's view.
func (s Source) View() domain.SourceView {
	return domain.SourceView{ID: s.ID, Details: s.Details, CreatedAt: s.CreatedAt}
}

// SourceOrganization links a source record to an organization that created
// or attached it.
type SourceOrganization struct {
	bun.BaseModel `bun:"table:source_organizations"`

	SourceID       uuid.UUID             `bun:"source_id,pk,type:uuid"`
	OrganizationID uuid.UUID             `bun:"organization_id,pk,type:uuid"`
	Details        *domain.SourceDetails `bun:"details,type:jsonb"`
	LinkedAt       time.Time             `bun:"linked_at"`
}
