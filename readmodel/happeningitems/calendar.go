package happeningitems

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
)

// CalendarHappening is a happening as a calendar output needs it: its details and
// when it was first found and last changed.
type CalendarHappening struct {
	ID           uuid.UUID
	Details      domain.HappeningDetails
	DiscoveredAt time.Time
	UpdatedAt    time.Time
}

// Sequence is the happening's iCalendar SEQUENCE: whole seconds from its
// discovery to its last change, so it grows with every change a second or
// more after the one before (the read model keeps no change count, and the
// times are the log's, so a rebuild gives the same numbers).
func (e CalendarHappening) Sequence() int {
	return int(max(0, e.UpdatedAt.Sub(e.DiscoveredAt)/time.Second))
}

// CalendarHappenings returns happenings by id, with their change times.
func (q *Queries) CalendarHappenings(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]CalendarHappening, error) {
	out := make(map[uuid.UUID]CalendarHappening, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID           uuid.UUID       `bun:"id,type:uuid"`
		Details      json.RawMessage `bun:"details"`
		DiscoveredAt time.Time       `bun:"discovered_at"`
		UpdatedAt    time.Time       `bun:"updated_at"`
	}
	if err := q.db.NewRaw(`SELECT id, details, discovered_at, updated_at FROM calendar_events WHERE id IN (?)`, bun.In(ids)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read calendar events: %w", err)
	}
	for _, r := range rows {
		e := CalendarHappening{ID: r.ID, DiscoveredAt: r.DiscoveredAt, UpdatedAt: r.UpdatedAt}
		if err := json.Unmarshal(r.Details, &e.Details); err != nil {
			return nil, fmt.Errorf("decode event %s: %w", r.ID, err)
		}
		out[r.ID] = e
	}
	return out, nil
}
