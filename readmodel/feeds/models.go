// Package feeds owns the feeds read model: feeds of every kind and their
// source attachments (tables feeds and feed_sources), its projector, and
// the queries the API answers feed and attachment reads from.
package feeds

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
)

// Feed is a row of feeds: a feed of any kind.
type Feed struct {
	bun.BaseModel `bun:"table:feeds"`

	ID             uuid.UUID          `bun:"id,pk,type:uuid"`
	Kind           domain.FeedKind    `bun:"kind"`
	OrganizationID uuid.UUID          `bun:"organization_id,type:uuid"`
	Name           string             `bun:"name"`
	Description    string             `bun:"description"`
	Enabled        bool               `bun:"enabled"`
	EnabledBy      string             `bun:"enabled_by"`
	EnabledReason  string             `bun:"enabled_reason"`
	Config         *domain.FeedConfig `bun:"config,type:jsonb"`
	Rules          *domain.FeedRules  `bun:"rules,type:jsonb"`
	CreatedAt      time.Time          `bun:"created_at"`
	UpdatedAt      time.Time          `bun:"updated_at"`
}

// State is the feed as the domain describes it.
func (f Feed) State() domain.FeedState {
	s := domain.FeedState{
		ID: f.ID, Kind: f.Kind, Name: f.Name, Description: f.Description, Enabled: f.Enabled,
		EnabledBy: f.EnabledBy, Reason: f.EnabledReason, Config: f.Config, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt,
	}
	if f.Rules != nil {
		s.Rules = *f.Rules
	}
	return s
}

// FeedSource is a row of feed_sources: one attachment of a feed of any
// kind.
type FeedSource struct {
	bun.BaseModel `bun:"table:feed_sources"`

	ID             uuid.UUID            `bun:"id,pk,type:uuid"`
	Kind           domain.FeedKind      `bun:"kind"`
	FeedID         uuid.UUID            `bun:"feed_id,type:uuid"`
	OrganizationID uuid.UUID            `bun:"organization_id,type:uuid"`
	SourceID       uuid.UUID            `bun:"source_id,type:uuid"`
	SourceType     string               `bun:"source_type"`
	Details        domain.SourceDetails `bun:"details,type:jsonb"`
	Enabled        bool                 `bun:"enabled"`
	CreatedAt      time.Time            `bun:"created_at"`
	UpdatedAt      time.Time            `bun:"updated_at"`
}

// Attachment is the attachment as the domain describes it.
func (a FeedSource) Attachment() domain.Attachment {
	return domain.Attachment{
		ID: a.ID, FeedID: a.FeedID, SourceID: a.SourceID, SourceType: domain.SourceType(a.SourceType), Details: a.Details,
		Enabled: a.Enabled, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
	}
}
