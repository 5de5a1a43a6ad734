// Package readmodel is the query side. Each read model is one package
// below it (readmodel/feeds, readmodel/newsitems, …) holding its projector,
// its tables' bun models, its queries and its tests; readmodel/changes holds
// the change key the item lists share. This package holds only the lookups
// that span read models: the references commands resolve (commands.Lookups)
// and an item of a feed of either kind.
package readmodel

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/readmodel/sources"
)

// Lookups find what requests refer to by id, as the organization sees it:
// a source record's details and an item of a feed of either kind. It
// implements commands.Lookups.
type Lookups struct {
	sources    *sources.Queries
	news       *newsitems.Queries
	happenings *happeningitems.Queries
}

// NewLookups returns the lookups over db.
func NewLookups(db bun.IDB) *Lookups {
	return &Lookups{sources: sources.NewQueries(db), news: newsitems.NewQueries(db), happenings: happeningitems.NewQueries(db)}
}

// SourceDetails implements commands.Lookups.
func (l *Lookups) SourceDetails(ctx context.Context, org, id uuid.UUID) (domain.SourceDetails, error) {
	return l.sources.SourceDetails(ctx, org, id)
}

// ItemRef implements commands.Lookups: the item of a feed of a kind that
// the organization sees.
func (l *Lookups) ItemRef(ctx context.Context, kind domain.FeedKind, org, feedID, itemID uuid.UUID) (domain.ItemRef, error) {
	if kind == domain.FeedHappenings {
		return l.happenings.ItemRef(ctx, org, feedID, itemID)
	}
	return l.news.ItemRef(ctx, org, feedID, itemID)
}

// ItemOrigin is ItemRef for an item the feed ever had: an event item that
// left its feed (its last attachment detached) still has a history.
func (l *Lookups) ItemOrigin(ctx context.Context, kind domain.FeedKind, org, feedID, itemID uuid.UUID) (domain.ItemRef, error) {
	if kind == domain.FeedHappenings {
		return l.happenings.ItemOrigin(ctx, org, feedID, itemID)
	}
	return l.news.ItemRef(ctx, org, feedID, itemID)
}
