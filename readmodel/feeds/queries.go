package feeds

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

// Queries answers reads of the feeds read model.
type Queries struct{ db bun.IDB }

// NewQueries returns the feeds' query side over db.
func NewQueries(db bun.IDB) *Queries { return &Queries{db: db} }

// Feeds lists an organization's feeds of a kind, newest first (D7).
func (q *Queries) Feeds(ctx context.Context, kind domain.FeedKind, org uuid.UUID) ([]Feed, error) {
	feeds := []Feed{}
	err := q.db.NewSelect().Model(&feeds).
		Where("organization_id = ? AND kind = ?", org, kind).
		OrderExpr("created_at DESC, id DESC").
		Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list %s feeds of %s: %w", kind, org, err)
	}
	return feeds, nil
}

// Feed returns one feed of a kind of the organization.
func (q *Queries) Feed(ctx context.Context, kind domain.FeedKind, org, id uuid.UUID) (Feed, error) {
	var f Feed
	err := q.db.NewSelect().Model(&f).Where("id = ? AND organization_id = ? AND kind = ?", id, org, kind).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Feed{}, &domain.NotFoundError{Resource: "feed", ID: id.String()}
	}
	if err != nil {
		return Feed{}, fmt.Errorf("get %s feed %s: %w", kind, id, err)
	}
	return f, nil
}

// MissingFeed returns the first of ids, in their order, that is no feed
// of kind of the organization: one query for a whole list of references.
func (q *Queries) MissingFeed(ctx context.Context, kind domain.FeedKind, org uuid.UUID, ids []uuid.UUID) (uuid.UUID, bool, error) {
	if len(ids) == 0 {
		return uuid.Nil, false, nil
	}
	var missing []uuid.UUID
	err := q.db.NewRaw(`SELECT i.id FROM unnest(?::uuid[]) WITH ORDINALITY AS i(id, n)
		WHERE NOT EXISTS (SELECT 1 FROM feeds f WHERE f.id = i.id AND f.organization_id = ? AND f.kind = ?)
		ORDER BY i.n LIMIT 1`, pgdialect.Array(ids), org, kind).Scan(ctx, &missing)
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("check %s feeds of %s: %w", kind, org, err)
	}
	if len(missing) == 0 {
		return uuid.Nil, false, nil
	}
	return missing[0], true, nil
}

// FeedSources lists a feed's attachments, newest first.
// Attachments carry their organization, so a non-empty answer needs no
// feed check; only an empty one asks whether the feed is there at all.
func (q *Queries) FeedSources(ctx context.Context, kind domain.FeedKind, org, feedID uuid.UUID) ([]FeedSource, error) {
	out := []FeedSource{}
	err := q.db.NewSelect().Model(&out).
		Where("feed_id = ? AND organization_id = ? AND kind = ?", feedID, org, kind).
		OrderExpr("created_at DESC, id DESC").
		Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list sources of feed %s: %w", feedID, err)
	}
	if len(out) == 0 {
		if _, err := q.Feed(ctx, kind, org, feedID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FeedSource returns one attachment of a feed.
func (q *Queries) FeedSource(ctx context.Context, kind domain.FeedKind, org, feedID, id uuid.UUID) (FeedSource, error) {
	var s FeedSource
	err := q.db.NewSelect().Model(&s).
		Where("id = ? AND feed_id = ? AND organization_id = ? AND kind = ?", id, feedID, org, kind).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return FeedSource{}, &domain.NotFoundError{Resource: "source", ID: id.String()}
	}
	if err != nil {
		return FeedSource{}, fmt.Errorf("get source %s of feed %s: %w", id, feedID, err)
	}
	return s, nil
}

// Gone returns those of ids that are no feed (any kind, any
// organization) any more: deleted, or never made. The live item streams'
// poller ends the streams of deleted feeds with it.
func (q *Queries) Gone(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error) {
	gone := []uuid.UUID{}
	if len(ids) == 0 {
		return gone, nil
	}
	err := q.db.NewRaw(`SELECT i.id FROM unnest(?::uuid[]) AS i(id)
		WHERE NOT EXISTS (SELECT 1 FROM feeds f WHERE f.id = i.id)`, pgdialect.Array(ids)).Scan(ctx, &gone)
	if err != nil {
		return nil, fmt.Errorf("check feeds: %w", err)
	}
	return gone, nil
}
