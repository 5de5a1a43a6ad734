package orglog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/projections"
)

// Queries answers reads of the organizations' logs.
type Queries struct{ db bun.IDB }

// NewQueries returns the orglog query side over db.
func NewQueries(db bun.IDB) *Queries { return &Queries{db: db} }

// Entry is one event of an organization's log.
type Entry struct {
	Position      eventstore.Position
	EventID       uuid.UUID
	Type          string
	SchemaVersion int
	// FeedIDs are the organization's feeds the event is about: one for a
	// feed's or an item's event, those carrying a calendar event for its
	// change, none for webhooks and source records.
	FeedIDs    []uuid.UUID
	RecordedAt time.Time
	// Data is the event as the log stores it, with the calendar event's
	// details added to an event item's add (member "event").
	Data json.RawMessage
}

// Filter selects a page of a log.
type Filter struct {
	// After is the position the page starts after (eventstore.Start: the
	// beginning).
	After eventstore.Position
	// Types keeps only events of these stored types when set.
	Types []string
	// FeedID keeps only events about this feed when set.
	FeedID *uuid.UUID
	Limit  int
}

// Page is a page of a log: its entries, where the next page starts, and
// whether more follow at once.
type Page struct {
	Entries []Entry
	Next    eventstore.Position
	HasMore bool
}

// Types are the stored event types an organization's log can hold: every
// type its projector reads but a calendar event's discovery, which it
// keeps for the event items that follow and does not record.
func Types() []string {
	return slices.DeleteFunc(projections.EventTypes(Projector{}), func(t string) bool {
		return t == (domain.HappeningDiscovered{}).EventType()
	})
}

// Read reads a page of org's log.
func (q *Queries) Read(ctx context.Context, org uuid.UUID, f Filter) (Page, error) {
	// The latest position first: every row at or before it is committed
	// (the projector writes in log order), so a page that is not full has
	// seen every matching event up to it, and the next page starts there
	// rather than walking again what the filters skipped.
	latest, err := q.Latest(ctx, org)
	if err != nil {
		return Page{}, err
	}
	var types []string
	if len(f.Types) > 0 {
		types = f.Types
	}
	var rows []struct {
		Commit        int64       `bun:"log_commit"`
		Prepare       int64       `bun:"log_prepare"`
		EventID       uuid.UUID   `bun:"event_id,type:uuid"`
		Type          string      `bun:"event_type"`
		SchemaVersion int         `bun:"schema_version"`
		FeedIDs       []uuid.UUID `bun:"feed_ids,array"`
		RecordedAt    time.Time   `bun:"recorded_at"`
		Data          string      `bun:"data"`
	}
	err = q.db.NewRaw(`SELECT log_commit, log_prepare, event_id, event_type, schema_version, feed_ids, recorded_at, data
		FROM org_log
		WHERE organization_id = ? AND (log_commit, log_prepare) > (?, ?)
		  AND (?::text[] IS NULL OR event_type = ANY(?::text[]))
		  AND (?::uuid IS NULL OR ?::uuid = ANY(feed_ids))
		ORDER BY log_commit, log_prepare LIMIT ?`,
		org, int64(f.After.Commit), int64(f.After.Prepare), pgdialect.Array(types), pgdialect.Array(types), f.FeedID, f.FeedID, f.Limit+1).
		Scan(ctx, &rows)
	if err != nil {
		return Page{}, fmt.Errorf("read the log of %s: %w", org, err)
	}
	page := Page{Entries: make([]Entry, 0, min(len(rows), f.Limit)), Next: f.After}
	if len(rows) > f.Limit {
		page.HasMore = true
		rows = rows[:f.Limit]
	}
	for _, r := range rows {
		page.Entries = append(page.Entries, Entry{
			Position: eventstore.Position{Commit: uint64(r.Commit), Prepare: uint64(r.Prepare)},
			EventID:  r.EventID, Type: r.Type, SchemaVersion: r.SchemaVersion, FeedIDs: r.FeedIDs, RecordedAt: r.RecordedAt, Data: json.RawMessage(r.Data),
		})
	}
	if n := len(page.Entries); n > 0 {
		page.Next = page.Entries[n-1].Position
	}
	if !page.HasMore && page.Next.Less(latest) {
		page.Next = latest
	}
	return page, nil
}

// Latest is the position of the last event of org's log (eventstore.Start
// when it has none).
func (q *Queries) Latest(ctx context.Context, org uuid.UUID) (eventstore.Position, error) {
	got, err := q.LatestOf(ctx, []uuid.UUID{org})
	if err != nil {
		return eventstore.Position{}, err
	}
	return got[org], nil
}

// LatestOf is the position of the last event of each organization's log;
// one without events is left out.
func (q *Queries) LatestOf(ctx context.Context, orgs []uuid.UUID) (map[uuid.UUID]eventstore.Position, error) {
	out := map[uuid.UUID]eventstore.Position{}
	if len(orgs) == 0 {
		return out, nil
	}
	var rows []struct {
		Org     uuid.UUID `bun:"organization_id,type:uuid"`
		Commit  int64     `bun:"log_commit"`
		Prepare int64     `bun:"log_prepare"`
	}
	err := q.db.NewRaw(`SELECT o.id AS organization_id, l.log_commit, l.log_prepare
		FROM unnest(?::uuid[]) AS o(id)
		CROSS JOIN LATERAL (SELECT log_commit, log_prepare FROM org_log WHERE organization_id = o.id
			ORDER BY log_commit DESC, log_prepare DESC LIMIT 1) AS l`, pgdialect.Array(orgs)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("read where the organizations' logs end: %w", err)
	}
	for _, r := range rows {
		out[r.Org] = eventstore.Position{Commit: uint64(r.Commit), Prepare: uint64(r.Prepare)}
	}
	return out, nil
}

// FormatPosition renders a position as the log's cursors and events show
// it: "<commit>-<prepare>", the two numbers the log is ordered by.
func FormatPosition(p eventstore.Position) string {
	return strconv.FormatUint(p.Commit, 10) + "-" + strconv.FormatUint(p.Prepare, 10)
}

// ParsePosition reads a position FormatPosition rendered.
func ParsePosition(s string) (eventstore.Position, bool) {
	c, p, ok := strings.Cut(s, "-")
	if !ok {
		return eventstore.Position{}, false
	}
	commit, err1 := strconv.ParseUint(c, 10, 63)
	prepare, err2 := strconv.ParseUint(p, 10, 63)
	if err1 != nil || err2 != nil {
		return eventstore.Position{}, false
	}
	return eventstore.Position{Commit: commit, Prepare: prepare}, true
}
