package insights

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/insights/migrations"
)

// Projector projects what GET /insights/feedback reads: every feedback
// entry on an item of a feed of any kind, and every item ever added to a
// feed, whose count is the denominator of "share of items rated". An item
// counts from its first add and stays counted after it leaves an event
// feed (its feedback stays too). A deleted feed leaves the insights with
// all its items and feedback, whatever order the log has them in: the
// deletion removes them and events of that feed later in the log are
// dropped.
//
// Feedback is additive (api.md 4.2): every FeedbackGiven is one more
// entry, a later one on the same item never replaces an earlier one, as
// the domain decides it (domain.rate).
type Projector struct{}

func (Projector) Name() string { return "insights" }
func (Projector) Version() int { return 1 }
func (Projector) Tables() []string {
	return []string{"insight_items", "insight_feedback", "insight_deleted_feeds"}
}

// Migrations are its tables' migrations, in the package migrations
// beside it; the service's schema applies them with every other owner's.
func (Projector) Migrations() migrate.Owner { return migrations.Owner }

func (Projector) Handlers() []projections.Handler {
	return []projections.Handler{
		projections.On(func(ctx context.Context, db bun.IDB, e domain.NewsItemAdded) error {
			return insightWrite(ctx, db, func(b *insightBatch) {
				b.items = append(b.items, insightItem{e.ItemID, e.OrganizationID, e.FeedID, domain.FeedNews, e.SourceID, e.At})
			})
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.HappeningItemAdded) error {
			return insightWrite(ctx, db, func(b *insightBatch) {
				b.items = append(b.items, insightItem{e.ItemID, e.OrganizationID, e.FeedID, domain.FeedHappenings, e.SourceID, e.At})
			})
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.FeedbackGiven, env projections.Envelope) error {
			if !e.Rating.Known() {
				return fmt.Errorf("feedback %s has unknown rating %q", e.FeedbackID, e.Rating)
			}
			return insightWrite(ctx, db, func(b *insightBatch) { b.feedback = append(b.feedback, insightFeedback{e, env}) })
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedDeleted) error {
			return insightWrite(ctx, db, func(b *insightBatch) { b.deleted = append(b.deleted, e.FeedID) })
		}),
	}
}

// IndexesLast: a rebuild creates the organization, feed and source
// indexes after the catch-up (projections.IndexesLast).
func (Projector) IndexesLast() string {
	return "inserts find rows by primary key (an item's add time for its feedback); only a feed's deletion deletes by feed, " +
		"which during a rebuild scans the shadow tables once per batch holding a deletion"
}

type insightItem struct {
	id, org, feed uuid.UUID
	kind          domain.FeedKind
	source        uuid.UUID
	at            time.Time
}

type insightFeedback struct {
	e   domain.FeedbackGiven
	env projections.Envelope
}

// insightBatch is a batch's writes, made at its end in three statements:
// items first, so that a feedback row finds when its item was added, then
// feedback, then deletions. Where a deletion falls in the batch does not
// matter: rows of a feed deleted in the batch are inserted and then
// removed, rows of one deleted before are never inserted.
type insightBatch struct {
	items    []insightItem
	feedback []insightFeedback
	deleted  []uuid.UUID
}

type insightBatchKey struct{}

// insightWrite adds to the batch's writes, or writes at once outside a
// batch.
func insightWrite(ctx context.Context, db bun.IDB, add func(*insightBatch)) error {
	if b, ok := projections.Deferred(ctx, insightBatchKey{}, func() *insightBatch { return &insightBatch{} }); ok {
		add(b)
		return nil
	}
	b := &insightBatch{}
	add(b)
	return b.Flush(ctx, db)
}

func (b *insightBatch) Flush(ctx context.Context, db bun.IDB) error {
	for _, f := range []func(context.Context, bun.IDB) error{b.insertItems, b.insertFeedback, b.deleteFeeds} {
		if err := f(ctx, db); err != nil {
			return err
		}
	}
	return nil
}

func (b *insightBatch) insertItems(ctx context.Context, db bun.IDB) error {
	for rows := b.items; len(rows) > 0; {
		chunk := rows[:min(len(rows), projections.MaxRowsPerInsert)]
		rows = rows[len(chunk):]
		ids, orgs, feeds, sources := make([][16]byte, len(chunk)), make([][16]byte, len(chunk)), make([][16]byte, len(chunk)), make([][16]byte, len(chunk))
		kinds, at := make([]string, len(chunk)), make([]time.Time, len(chunk))
		for i, r := range chunk {
			ids[i], orgs[i], feeds[i], sources[i], kinds[i], at[i] = r.id, r.org, r.feed, r.source, string(r.kind), r.at
		}
		if err := projections.ExecArraysUnlessConflict(ctx, db, insertItemsSQL, insertItemsSQL+" ON CONFLICT (item_id) DO NOTHING",
			ids, orgs, feeds, kinds, sources, at); err != nil {
			return err
		}
	}
	return nil
}

func (b *insightBatch) insertFeedback(ctx context.Context, db bun.IDB) error {
	for rows := b.feedback; len(rows) > 0; {
		chunk := rows[:min(len(rows), projections.MaxRowsPerInsert)]
		rows = rows[len(chunk):]
		n := len(chunk)
		ids, orgs, feeds, items, sources := make([][16]byte, n), make([][16]byte, n), make([][16]byte, n), make([][16]byte, n), make([][16]byte, n)
		kinds, ratings, comments := make([]string, n), make([]string, n), make([]string, n)
		at, commits, prepares := make([]time.Time, n), make([]int64, n), make([]int64, n)
		for i, r := range chunk {
			e := r.e
			ids[i], orgs[i], feeds[i], items[i], sources[i] = e.FeedbackID, e.OrganizationID, e.FeedID, e.ItemID, e.SourceID
			kinds[i], ratings[i], comments[i], at[i] = string(e.FeedKind()), string(e.Rating), e.Comment, e.At
			commits[i], prepares[i] = int64(r.env.Position.Commit), int64(r.env.Position.Prepare)
		}
		// The item's add precedes its feedback in the log (one stream), so
		// its row is there: written by an earlier batch, or by this one's
		// insertItems, which runs first.
		if err := projections.ExecArraysUnlessConflict(ctx, db, insertFeedbackSQL, insertFeedbackSQL+" ON CONFLICT (feedback_id) DO NOTHING",
			ids, orgs, feeds, kinds, items, sources, ratings, comments, at, commits, prepares); err != nil {
			return err
		}
	}
	return nil
}

// The inserts of a batch's rows, which are all new but in a rebuild of an
// odd log (projections.ExecArraysUnlessConflict adds ON CONFLICT DO
// NOTHING when they are not): an item's first add counts, and a feedback
// entry is recorded once.
const (
	insertItemsSQL = `INSERT INTO insight_items (item_id, organization_id, feed_id, feed_kind, source_id, added_at)
		SELECT r.* FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::uuid[], $6::timestamptz[])
			AS r(item_id, organization_id, feed_id, feed_kind, source_id, added_at)
		WHERE NOT EXISTS (SELECT 1 FROM insight_deleted_feeds AS d WHERE d.feed_id = r.feed_id)`
	insertFeedbackSQL = `INSERT INTO insight_feedback (feedback_id, organization_id, feed_id, feed_kind, item_id,
			source_id, rating, comment, given_at, log_commit, log_prepare, item_added_at)
		SELECT r.*, (SELECT i.added_at FROM insight_items AS i WHERE i.item_id = r.item_id)
		FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::uuid[], $6::uuid[], $7::text[],
			$8::text[], $9::timestamptz[], $10::bigint[], $11::bigint[])
			AS r(feedback_id, organization_id, feed_id, feed_kind, item_id, source_id, rating, comment, given_at, log_commit, log_prepare)
		WHERE NOT EXISTS (SELECT 1 FROM insight_deleted_feeds AS d WHERE d.feed_id = r.feed_id)`
)

func (b *insightBatch) deleteFeeds(ctx context.Context, db bun.IDB) error {
	if len(b.deleted) == 0 {
		return nil
	}
	ids := make([][16]byte, len(b.deleted))
	for i, id := range b.deleted {
		ids[i] = id
	}
	return projections.ExecArrays(ctx, db, `WITH gone AS (
			INSERT INTO insight_deleted_feeds (feed_id) SELECT unnest($1::uuid[]) ON CONFLICT DO NOTHING
		), items AS (
			DELETE FROM insight_items WHERE feed_id = ANY($1::uuid[])
		)
		DELETE FROM insight_feedback WHERE feed_id = ANY($1::uuid[])`, ids)
}
