package shape

import (
	"bytes"
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

// Occurrence is one occurrence of an event with what its block needs of its
// instance: the stated status and when the instance is over.
type Occurrence struct {
	ID           uuid.UUID
	InstanceID   uuid.UUID
	Start        time.Time
	End          *time.Time
	Stated       string
	InstanceEnds time.Time
}

// Flatten lists an event's occurrences (domain.HappeningDetails.EachOccurrence).
func Flatten(d domain.HappeningDetails) []Occurrence {
	var out []Occurrence
	d.EachOccurrence(func(in domain.HappeningInstance, o domain.Occurrence) {
		out = append(out, Occurrence{ID: o.ID, InstanceID: in.ID, Start: o.Start, End: o.End, Stated: in.Status, InstanceEnds: in.Ends()})
	})
	return out
}

func (o Occurrence) domain() domain.Occurrence {
	return domain.Occurrence{Start: o.Start, End: o.End}
}

// Entry is an occurrence as an item shows it, with its instance's status at
// the time of the query.
type Entry struct {
	ID         uuid.UUID
	InstanceID uuid.UUID
	Start      time.Time
	End        *time.Time
	Status     string
}

// Occurrences is an item's occurrence block.
type Occurrences struct {
	// Next is the block's nextOccurrence; nil when there is none.
	Next *Entry
	// Selected are the occurrences the query selects, soonest first (then
	// by id); their count is the block's totalOccurrences.
	Selected []Entry
	// Upcoming counts the event's occurrences that start after now and are
	// expected to take place (domain.Upcoming), whatever the query's range.
	Upcoming int
}

// InWindow is the block of a list query: the occurrences in the window of
// instances whose status at now is status (any when empty). Next is the
// earliest of them (api.md 2.9), even when it has already begun.
func InWindow(occs []Occurrence, w Window, status string, now time.Time) Occurrences {
	block := collect(occs, w, status, now)
	if len(block.Selected) > 0 {
		block.Next = &block.Selected[0]
	}
	return block
}

// Everything is the block of a single item: every occurrence of every
// instance. With no range to be earliest in, Next is the first occurrence
// not over by now; nil when all are.
func Everything(occs []Occurrence, now time.Time) Occurrences {
	block := collect(occs, Window{}, "", now)
	for i, e := range block.Selected {
		if (domain.Occurrence{Start: e.Start, End: e.End}).Ends().After(now) {
			block.Next = &block.Selected[i]
			break
		}
	}
	return block
}

func collect(occs []Occurrence, w Window, status string, now time.Time) Occurrences {
	block := Occurrences{Selected: []Entry{}}
	for _, o := range occs {
		if domain.Upcoming(o.Stated, o.Start, now) {
			block.Upcoming++
		}
		current := domain.StatusAt(o.Stated, o.InstanceEnds, now)
		if (status != "" && current != status) || !o.domain().Overlaps(w.From, w.To) {
			continue
		}
		block.Selected = append(block.Selected, Entry{ID: o.ID, InstanceID: o.InstanceID, Start: o.Start, End: o.End, Status: current})
	}
	slices.SortFunc(block.Selected, func(a, b Entry) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
	return block
}
