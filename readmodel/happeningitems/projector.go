package happeningitems

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems/migrations"
	"github.com/feedsvc/feedsvc/readmodel/relevance"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// Projector projects the happenings every feed shares and the items of every
// event feed, with the occurrences of each visible item indexed per feed for
// range queries. An item is visible while at least one of the attachments
// that brought it is attached: detaching the last one hides it at once
// (api.md 3), and another attachment finding the happening shows it again, as
// newly added. Deleting a feed deletes its items.
type Projector struct{}

func (Projector) Name() string { return "eventitems" }

// Version 2: items carry their change key; 3: and their relevance score;
// 4: an item other sources list too is shown merged (listings.go); 5: and
// happenings carry their occurrences as the list's arrays; 6: and keep
// what a list reads of them in their rows, uncompressed (the migration
// 20261129034000_event_list_inline: rows are stored so only when written).
func (Projector) Version() int { return 6 }
func (Projector) Tables() []string {
	return []string{"calendar_events", "event_items", "event_item_attachments", "event_item_occurrences",
		"event_feed_spans", "event_detached_attachments", "event_feed_configs", "event_item_listings"}
}

// Migrations are its tables' migrations, in the package migrations
// beside it; the service's schema applies them with every other owner's.
func (Projector) Migrations() migrate.Owner { return migrations.Owner }

func (Projector) Handlers() []projections.Handler {
	return []projections.Handler{
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.HappeningDiscovered, env projections.Envelope) error {
			return projectHappening(ctx, db, e.HappeningID, e.SourceID, e.Details, e.At, env.Position)
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.HappeningChanged, env projections.Envelope) error {
			return projectHappening(ctx, db, e.HappeningID, e.SourceID, e.Details, e.At, env.Position)
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.HappeningItemAdded, env projections.Envelope) error {
			// Visible at once unless its attachment was detached before the
			// crawl that found it could add it.
			return showItem(ctx, db, `WITH item AS (
					INSERT INTO event_items (id, feed_id, organization_id, event_id, source_id, source_type, added_at, visible,
						change_commit, change_prepare)
					SELECT ?0, ?1, ?2, ?3, ?4, ?5, ?6, NOT EXISTS (SELECT 1 FROM event_detached_attachments WHERE attachment_id = ?7), ?8, ?9
					ON CONFLICT DO NOTHING
					RETURNING id, feed_id, added_at, event_id, visible
				), link AS (
					INSERT INTO event_item_attachments (item_id, attachment_id, feed_id, source_id, source_type, linked_at)
					SELECT id, ?7, ?1, ?4, ?5, ?6 FROM item WHERE visible
				)
				SELECT item.id, item.feed_id, item.added_at, e.details, c.config
				FROM item JOIN calendar_events AS e ON e.id = item.event_id
				LEFT JOIN event_feed_configs AS c ON c.feed_id = item.feed_id
				WHERE item.visible`,
				e.ItemID, e.FeedID, e.OrganizationID, e.HappeningID, e.SourceID, string(e.SourceType), e.At, e.AttachmentID,
				int64(env.Position.Commit), int64(env.Position.Prepare))
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.HappeningItemLinked, env projections.Envelope) error {
			// Each further attachment holds the item too; the first current
			// one shows a hidden item again, as added now (a change). Linking
			// a visible item changes nothing a list shows.
			return showItem(ctx, db, `WITH link AS (
					INSERT INTO event_item_attachments (item_id, attachment_id, feed_id, source_id, source_type, linked_at)
					SELECT ?0, ?1, ?2, ?3, ?4, ?5
					WHERE EXISTS (SELECT 1 FROM event_items WHERE id = ?0)
					  AND NOT EXISTS (SELECT 1 FROM event_detached_attachments WHERE attachment_id = ?1)
					ON CONFLICT DO NOTHING
					RETURNING item_id
				), shown AS (
					UPDATE event_items AS i SET visible = true, added_at = ?5, source_id = ?3, source_type = ?4,
						change_commit = ?6, change_prepare = ?7
					FROM link WHERE i.id = link.item_id AND NOT i.visible
					RETURNING i.id, i.feed_id, i.added_at, coalesce(i.view_id, i.event_id) AS event_id
				)
				SELECT shown.id, shown.feed_id, shown.added_at, e.details, c.config
				FROM shown JOIN calendar_events AS e ON e.id = shown.event_id
				LEFT JOIN event_feed_configs AS c ON c.feed_id = shown.feed_id`,
				e.ItemID, e.AttachmentID, e.FeedID, e.SourceID, string(e.SourceType), e.At,
				int64(env.Position.Commit), int64(env.Position.Prepare))
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.HappeningItemCopyFound, env projections.Envelope) error {
			return projectListing(ctx, db, e, env.Position)
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.HappeningItemCopySplit, env projections.Envelope) error {
			return projectListingSplit(ctx, db, e, env.Position)
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.SourceDetached, env projections.Envelope) error {
			if e.Kind != domain.FeedHappenings {
				return nil
			}
			return projectSourceDetached(ctx, db, e, env.Position)
		}),
		projections.On(ofKind(domain.FeedHappenings, func(ctx context.Context, db bun.IDB, e domain.FeedCreated) error {
			if e.Config == nil {
				return nil
			}
			return projectConfig(ctx, db, e.FeedID, *e.Config)
		})),
		projections.On(ofKind(domain.FeedHappenings, func(ctx context.Context, db bun.IDB, e domain.FeedConfigured) error {
			return projectConfig(ctx, db, e.FeedID, e.Config)
		})),
		projections.On(ofKind(domain.FeedHappenings, func(ctx context.Context, db bun.IDB, e domain.FeedDeleted) error {
			if err := projections.Exec(db.NewRaw(`DELETE FROM calendar_events WHERE id IN
				(SELECT view_id FROM event_items WHERE feed_id = ? AND view_id IS NOT NULL)`, e.FeedID).Exec(ctx)); err != nil {
				return err
			}
			for _, table := range []string{"event_item_occurrences", "event_item_attachments", "event_item_listings", "event_items", "event_feed_spans", "event_feed_configs"} {
				if err := projections.Exec(db.NewRaw("DELETE FROM ? WHERE feed_id = ?", bun.Ident(table), e.FeedID).Exec(ctx)); err != nil {
					return err
				}
			}
			return nil
		})),
	}
}

// projectHappening stores a happening's current state, rendered in both
// item shapes, and replaces the occurrences of every visible item of it, in
// every feed: each of them changed at pos.
func projectHappening(ctx context.Context, db bun.IDB, id, sourceID uuid.UUID, d domain.HappeningDetails, at time.Time, pos eventstore.Position) error {
	if err := storeHappening(ctx, db, id, sourceID, d, at, pos); err != nil {
		return err
	}
	// The items shown merged with other listings (view_id) are merged
	// anew, whether the happening is theirs or one of their listings.
	var merged []uuid.UUID
	if err := db.NewRaw(`SELECT id FROM event_items WHERE event_id = ?0 AND view_id IS NOT NULL
		UNION SELECT item_id FROM event_item_listings WHERE event_id = ?0`, id).Scan(ctx, &merged); err != nil {
		return projections.Exec(nil, err)
	}
	for _, item := range merged {
		if err := remerge(ctx, db, item, pos); err != nil {
			return err
		}
	}
	return nil
}

// storeHappening stores a happening's state and rewrites the occurrences
// of the visible items shown from it alone (view_id NULL). A merged view's
// row (listings.go) keeps no arrays: a page gathers its occurrences from
// the item's rows.
func storeHappening(ctx context.Context, db bun.IDB, id, sourceID uuid.UUID, d domain.HappeningDetails, at time.Time, pos eventstore.Position) error {
	r, err := render(d)
	if err != nil {
		return fmt.Errorf("render event %s: %w", id, err)
	}
	details, current, legacy, source := r.details, r.current, r.legacy, r.source
	occ := occurrenceArrays(occurrenceRows(d))
	// One statement stores the happening, drops its items' occurrence rows and
	// marks and names the items whose rows are to be written anew.
	var items []visibleItem
	err = db.NewRaw(`WITH event AS (
			INSERT INTO calendar_events (id, source_id, details, current_head, current_published, current_tail,
				legacy_head, legacy_published, legacy_tail, source_block, discovered_at, updated_at,
				occurrence_ids, occurrence_instances, occurrence_starts, occurrence_ends, occurrence_statuses, occurrence_instance_ends)
			VALUES (?0, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10,
				?13::uuid[], ?14::uuid[], ?15::timestamptz[], ?16::timestamptz[], ?17::text[], ?18::timestamptz[])
			ON CONFLICT (id) DO UPDATE SET source_id = EXCLUDED.source_id, details = EXCLUDED.details,
				current_head = EXCLUDED.current_head, current_published = EXCLUDED.current_published, current_tail = EXCLUDED.current_tail,
				legacy_head = EXCLUDED.legacy_head, legacy_published = EXCLUDED.legacy_published, legacy_tail = EXCLUDED.legacy_tail,
				source_block = EXCLUDED.source_block, updated_at = EXCLUDED.updated_at,
				occurrence_ids = EXCLUDED.occurrence_ids, occurrence_instances = EXCLUDED.occurrence_instances,
				occurrence_starts = EXCLUDED.occurrence_starts, occurrence_ends = EXCLUDED.occurrence_ends,
				occurrence_statuses = EXCLUDED.occurrence_statuses, occurrence_instance_ends = EXCLUDED.occurrence_instance_ends
		), old AS (
			DELETE FROM event_item_occurrences AS o USING event_items AS i
			WHERE i.event_id = ?0 AND i.view_id IS NULL AND o.item_id = i.id
		), items AS (
			UPDATE event_items SET change_commit = ?11, change_prepare = ?12 WHERE event_id = ?0 AND view_id IS NULL AND visible
			RETURNING id, feed_id, added_at
		)
		SELECT items.*, c.config FROM items LEFT JOIN event_feed_configs AS c ON c.feed_id = items.feed_id`,
		id, sourceID, string(details), string(current.Head), string(current.Published), string(current.Tail),
		string(legacy.Head), string(legacy.Published), string(legacy.Tail), string(source), at,
		int64(pos.Commit), int64(pos.Prepare),
		pgdialect.Array(occ.ids), pgdialect.Array(occ.instances), pgdialect.Array(occ.starts), pgdialect.Array(occ.ends),
		pgdialect.Array(occ.statuses), pgdialect.Array(occ.instanceEnds)).Scan(ctx, &items)
	if err != nil {
		return projections.Exec(nil, err)
	}
	if err := scoreItems(ctx, db, items, d); err != nil {
		return err
	}
	return insertOccurrences(ctx, db, items, d)
}

// render renders a happening in both item shapes and its source block.
func render(d domain.HappeningDetails) (rendered, error) {
	var r rendered
	var err error
	if r.details, err = json.Marshal(d); err != nil {
		return rendered{}, fmt.Errorf("encode details: %w", err)
	}
	if r.current, err = shape.RenderStatic(d, false); err != nil {
		return rendered{}, err
	}
	if r.legacy, err = shape.RenderStatic(d, true); err != nil {
		return rendered{}, err
	}
	if r.source, err = shape.SourceBlock(d); err != nil {
		return rendered{}, err
	}
	return r, nil
}

// showItem runs a statement that makes an item visible and returns it with
// its happening's details (no row when it stays hidden or its happening is not
// known yet: the happening's discovery writes the occurrences then), and writes
// its occurrences.
func showItem(ctx context.Context, db bun.IDB, statement string, args ...any) error {
	var shown []struct {
		visibleItem
		Details domain.HappeningDetails `bun:"details,type:jsonb"`
	}
	if err := db.NewRaw(statement, args...).Scan(ctx, &shown); err != nil {
		return projections.Exec(nil, err)
	}
	for _, it := range shown {
		items := []visibleItem{it.visibleItem}
		if err := scoreItems(ctx, db, items, it.Details); err != nil {
			return err
		}
		if err := insertOccurrences(ctx, db, items, it.Details); err != nil {
			return err
		}
	}
	return nil
}

// projectConfig stores an event feed's config and scores the feed's items
// against it anew: their relevance_score is what lists show, read from
// the row rather than computed per request.
func projectConfig(ctx context.Context, db bun.IDB, feedID uuid.UUID, config domain.FeedConfig) error {
	raw, err := json.Marshal(config)
	if err != nil {
		return fmt.Errorf("encode config of feed %s: %w", feedID, err)
	}
	if err := projections.Exec(db.NewRaw(`INSERT INTO event_feed_configs (feed_id, config) VALUES (?, ?)
		ON CONFLICT (feed_id) DO UPDATE SET config = EXCLUDED.config`, feedID, string(raw)).Exec(ctx)); err != nil {
		return err
	}
	if !scores(config) {
		return projections.Exec(db.NewRaw(`UPDATE event_items SET relevance_score = NULL
			WHERE feed_id = ? AND relevance_score IS NOT NULL`, feedID).Exec(ctx))
	}
	var items []struct {
		ID      uuid.UUID               `bun:"id"`
		Details domain.HappeningDetails `bun:"details,type:jsonb"`
	}
	if err := db.NewRaw(`SELECT i.id, e.details FROM event_items AS i JOIN calendar_events AS e ON e.id = i.event_id
		WHERE i.feed_id = ?`, feedID).Scan(ctx, &items); err != nil {
		return projections.Exec(nil, err)
	}
	ids, values := make([]string, len(items)), make([]float64, len(items))
	for i, it := range items {
		ids[i], values[i] = it.ID.String(), score(it.Details, config)
	}
	return writeScores(ctx, db, ids, values)
}

// scores reports whether config gives anything to score by (relevance.Score).
func scores(config domain.FeedConfig) bool { return config.Geo != nil || len(config.Keywords) > 0 }

// score is d's relevance to a config that scores.
func score(d domain.HappeningDetails, config domain.FeedConfig) float64 {
	s, _ := relevance.Score(d, config)
	return s
}

// scoreItems scores items of one happening, each against its feed's config;
// items of feeds whose config scores nothing keep a NULL score (the config
// handler clears them when it changes).
func scoreItems(ctx context.Context, db bun.IDB, items []visibleItem, d domain.HappeningDetails) error {
	var ids []string
	var values []float64
	for _, it := range items {
		if len(it.Config) == 0 {
			continue
		}
		var config domain.FeedConfig
		if err := json.Unmarshal(it.Config, &config); err != nil {
			return fmt.Errorf("decode config of feed %s: %w", it.FeedID, err)
		}
		if scores(config) {
			ids, values = append(ids, it.ID.String()), append(values, score(d, config))
		}
	}
	return writeScores(ctx, db, ids, values)
}

func writeScores(ctx context.Context, db bun.IDB, ids []string, values []float64) error {
	if len(ids) == 0 {
		return nil
	}
	return projections.Exec(db.NewRaw(`UPDATE event_items AS i SET relevance_score = s.score
		FROM unnest(?::uuid[], ?::float8[]) AS s(id, score) WHERE i.id = s.id`,
		pgdialect.Array(ids), pgdialect.Array(values)).Exec(ctx))
}

// projectSourceDetached hides the items no other attachment holds and
// names a remaining attachment as the source of those others hold. Both
// are changes at pos: a hidden item is removed from its list, and another
// source type shows in the legacy shape (a new source of the same type
// shows nowhere, so it is no change).
func projectSourceDetached(ctx context.Context, db bun.IDB, e domain.SourceDetached, pos eventstore.Position) error {
	if err := projections.Exec(db.NewRaw(`INSERT INTO event_detached_attachments (attachment_id) VALUES (?) ON CONFLICT DO NOTHING`,
		e.AttachmentID).Exec(ctx)); err != nil {
		return err
	}
	var items []string
	if err := db.NewRaw(`DELETE FROM event_item_attachments WHERE attachment_id = ? RETURNING item_id::text`,
		e.AttachmentID).Scan(ctx, &items); err != nil {
		return projections.Exec(nil, err)
	}
	if len(items) == 0 {
		return nil
	}
	ids, commit, prepare := pgdialect.Array(items), int64(pos.Commit), int64(pos.Prepare)
	stmts := []string{
		`UPDATE event_items AS i SET source_id = a.source_id, source_type = a.source_type,
			change_commit = CASE WHEN i.source_type = a.source_type THEN i.change_commit ELSE ?1 END,
			change_prepare = CASE WHEN i.source_type = a.source_type THEN i.change_prepare ELSE ?2 END
		FROM (SELECT DISTINCT ON (item_id) item_id, source_id, source_type FROM event_item_attachments
			WHERE item_id = ANY(?0::uuid[]) ORDER BY item_id, linked_at, attachment_id) AS a
		WHERE i.id = a.item_id`,
		`UPDATE event_items AS i SET visible = false, change_commit = ?1, change_prepare = ?2
		WHERE i.id = ANY(?0::uuid[]) AND NOT EXISTS (SELECT 1 FROM event_item_attachments AS a WHERE a.item_id = i.id)`,
		`DELETE FROM event_item_occurrences AS o USING event_items AS i
		WHERE i.id = ANY(?0::uuid[]) AND NOT i.visible AND o.item_id = i.id`,
	}
	for _, s := range stmts {
		if err := projections.Exec(db.NewRaw(s, ids, commit, prepare).Exec(ctx)); err != nil {
			return err
		}
	}
	return nil
}

// visibleItem is an item whose occurrences are to be written and score
// computed, with its feed's config (event_feed_configs; none stored yet
// when nil).
type visibleItem struct {
	ID      uuid.UUID       `bun:"id"`
	FeedID  uuid.UUID       `bun:"feed_id"`
	AddedAt time.Time       `bun:"added_at"`
	Config  json.RawMessage `bun:"config,type:jsonb"`
}

// insertOccurrences writes the occurrence rows of items, from their happening's
// details, and widens their feeds' longest span: one statement for every
// item and occurrence. When an occurrence and an instance are over comes
// from the domain (shape.Flatten), so the range query and the
// occurrence blocks agree.
func insertOccurrences(ctx context.Context, db bun.IDB, items []visibleItem, d domain.HappeningDetails) error {
	rows := occurrenceRows(d)
	if len(items) == 0 || len(rows) == 0 {
		return nil
	}
	itemIDs, feeds, added := make([]string, len(items)), make([]string, len(items)), make([]time.Time, len(items))
	for i, it := range items {
		itemIDs[i], feeds[i], added[i] = it.ID.String(), it.FeedID.String(), it.AddedAt
	}
	n := len(rows)
	ids, instances, statuses := make([]string, n), make([]string, n), make([]string, n)
	stated := make([]*time.Time, n)
	starts, ends, prevEnds, prevStarts, instanceEnds := make([]time.Time, n), make([]time.Time, n), make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
	for i, r := range rows {
		ids[i], instances[i], statuses[i], stated[i] = r.ID.String(), r.InstanceID.String(), r.Stated, r.End
		starts[i], ends[i], prevEnds[i], prevStarts[i], instanceEnds[i] = r.Start, r.ends, r.prevEnds, r.prevStart, r.InstanceEnds
	}
	return projections.Exec(db.NewRaw(`WITH ins AS (
		INSERT INTO event_item_occurrences (feed_id, item_id, occurrence_id, instance_id, starts_at, end_at, ends_at,
			prev_ends, prev_start, status, instance_ends_at, added_at)
		SELECT i.feed_id, i.item_id, o.id, o.instance_id, o.starts_at, o.end_at, o.ends_at,
			o.prev_ends, o.prev_start, o.status, o.instance_ends_at, i.added_at
		FROM unnest(?::uuid[], ?::uuid[], ?::timestamptz[]) AS i(item_id, feed_id, added_at)
		CROSS JOIN unnest(?::uuid[], ?::uuid[], ?::timestamptz[], ?::timestamptz[], ?::timestamptz[],
			?::timestamptz[], ?::timestamptz[], ?::text[], ?::timestamptz[])
			AS o(id, instance_id, starts_at, end_at, ends_at, prev_ends, prev_start, status, instance_ends_at)
		ON CONFLICT DO NOTHING
		RETURNING feed_id, ends_at - starts_at AS span
	)
	INSERT INTO event_feed_spans (feed_id, longest)
	SELECT feed_id, max(span) FROM ins GROUP BY feed_id
	ON CONFLICT (feed_id) DO UPDATE SET longest = greatest(event_feed_spans.longest, EXCLUDED.longest)`,
		pgdialect.Array(itemIDs), pgdialect.Array(feeds), pgdialect.Array(added),
		pgdialect.Array(ids), pgdialect.Array(instances), pgdialect.Array(starts), pgdialect.Array(stated), pgdialect.Array(ends),
		pgdialect.Array(prevEnds), pgdialect.Array(prevStarts), pgdialect.Array(statuses), pgdialect.Array(instanceEnds),
	).Exec(ctx))
}

// occurrenceColumns are a happening's occurrences as the arrays a list
// reads (calendar_events.occurrence_*): the columns of its occurrence rows.
type occurrenceColumns struct {
	ids, instances, statuses []string
	starts, instanceEnds     []time.Time
	ends                     []*time.Time
}

func occurrenceArrays(rows []occurrenceRow) occurrenceColumns {
	n := len(rows)
	c := occurrenceColumns{ids: make([]string, n), instances: make([]string, n), statuses: make([]string, n),
		starts: make([]time.Time, n), instanceEnds: make([]time.Time, n), ends: make([]*time.Time, n)}
	for i, r := range rows {
		c.ids[i], c.instances[i], c.statuses[i] = r.ID.String(), r.InstanceID.String(), r.Stated
		c.starts[i], c.instanceEnds[i], c.ends[i] = r.Start, r.InstanceEnds, r.End
	}
	return c
}

// occurrenceRow is one occurrence of a happening as the range index holds it.
type occurrenceRow struct {
	shape.Occurrence
	ends, prevEnds, prevStart time.Time
}

// occurrenceRows are a happening's occurrences in start order (then id), each
// with when it is over and the latest end and the last start of those
// before it (year 1 for the first): in any range, the occurrence whose
// earlier ones are all over before the range and all began before it is
// the happening's first there.
func occurrenceRows(d domain.HappeningDetails) []occurrenceRow {
	var rows []occurrenceRow
	for _, o := range shape.Flatten(d) {
		rows = append(rows, occurrenceRow{Occurrence: o, ends: domain.Occurrence{Start: o.Start, End: o.End}.Ends()})
	}
	slices.SortFunc(rows, func(a, b occurrenceRow) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return slices.Compare(a.ID[:], b.ID[:])
	})
	var latest, last time.Time
	for i := range rows {
		rows[i].prevEnds, rows[i].prevStart = latest, last
		if rows[i].ends.After(latest) {
			latest = rows[i].ends
		}
		last = rows[i].Start
	}
	return rows
}

// kinded is a feed event, which says which kind of feed it happened to.
type kinded interface {
	domain.Event
	FeedKind() domain.FeedKind
}

// ofKind keeps a handler of feed events to the events of one kind of feed.
func ofKind[E kinded](kind domain.FeedKind, f func(ctx context.Context, db bun.IDB, e E) error) func(ctx context.Context, db bun.IDB, e E) error {
	return func(ctx context.Context, db bun.IDB, e E) error {
		if e.FeedKind() != kind {
			return nil
		}
		return f(ctx, db, e)
	}
}
