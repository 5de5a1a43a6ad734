// Package eventshape renders event items in the API's two shapes (api.md
// 2.9): the current one, and the legacy one that the v0 list and the
// event.item_added webhook's data share. It also computes an item's
// occurrence block for a query's range, so every renderer agrees on it.
package eventshape

import (
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// Window is a query's range of occurrence dates, [From, To); a nil bound is
// open.
type Window struct {
	From, To *time.Time
}

// Entry is one occurrence as an item shows it, with its instance's status
// at the time of the query.
type Entry struct {
	ID         uuid.UUID
	InstanceID uuid.UUID
	Start      time.Time
	End        *time.Time
	Status     string
	ends       time.Time
}

// Occurrences is an item's occurrence block.
type Occurrences struct {
	// Next is the earliest occurrence selected; nil when there is none.
	Next *Entry
	// Selected are the occurrences the query selects, soonest first; their
	// count is the block's totalOccurrences.
	Selected []Entry
	// Upcoming counts the event's occurrences that start after now and are
	// expected to take place (of scheduled or rescheduled instances),
	// whatever the query's range.
	Upcoming int
}

// InWindow is the block of a list query: the occurrences in the window of
// instances whose status at now is status (any when empty). Next is the
// earliest of them (api.md 2.9), even when it has already begun.
func InWindow(d domain.EventDetails, w Window, status string, now time.Time) Occurrences {
	block := collect(d, w, status, now)
	if len(block.Selected) > 0 {
		block.Next = &block.Selected[0]
	}
	return block
}

// Everything is the block of a single item: every occurrence of every
// instance. With no range to be earliest in, Next is the first occurrence
// not over by now; nil when all are.
func Everything(d domain.EventDetails, now time.Time) Occurrences {
	block := collect(d, Window{}, "", now)
	for i := range block.Selected {
		if block.Selected[i].ends.After(now) {
			block.Next = &block.Selected[i]
			break
		}
	}
	return block
}

func collect(d domain.EventDetails, w Window, status string, now time.Time) Occurrences {
	block := Occurrences{Selected: []Entry{}}
	d.EachOccurrence(func(in domain.EventInstance, o domain.EventOccurrence) {
		if o.Start.After(now) && domain.Happens(in.Status) {
			block.Upcoming++
		}
		current := in.StatusAt(now)
		if (status != "" && current != status) || !o.Overlaps(w.From, w.To) {
			return
		}
		block.Selected = append(block.Selected, Entry{
			ID: o.ID, InstanceID: in.ID, Start: o.Start, End: o.End, Status: current, ends: o.Ends(),
		})
	})
	slices.SortFunc(block.Selected, func(a, b Entry) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return slices.Compare(a.ID[:], b.ID[:])
	})
	return block
}
