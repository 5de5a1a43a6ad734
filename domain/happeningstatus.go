package domain

import (
	"time"

	"github.com/google/uuid"
)

// Ends is when the occurrence is over: its end, or its start when it has
// none (an instant).
func (o Occurrence) Ends() time.Time {
	if o.End != nil && o.End.After(o.Start) {
		return *o.End
	}
	return o.Start
}

// Overlaps reports whether the occurrence falls in [from, to): it starts
// before to and is still going on at from (an instant at from counts). A
// nil bound is open. The read model's range query (readmodel, on
// event_item_occurrences) states the same rule in SQL.
func (o Occurrence) Overlaps(from, to *time.Time) bool {
	if to != nil && !o.Start.Before(*to) {
		return false
	}
	return from == nil || o.Ends().After(*from) || !o.Start.Before(*from)
}

// Ends is when the instance's last occurrence is over.
func (in HappeningInstance) Ends() time.Time {
	var end time.Time
	for _, o := range in.Occurrences {
		if e := o.Ends(); e.After(end) {
			end = e
		}
	}
	return end
}

// StatusAt is the instance's status at now: the stated one, except that an
// instance going ahead (scheduled or rescheduled) whose occurrences have all
// ended is completed. A cancelled or postponed instance stays so: it did not
// take place.
func (in HappeningInstance) StatusAt(now time.Time) string {
	return StatusAt(in.Status, in.Ends(), now)
}

// StatusAt is the status at now of an instance stated as status that is
// over at ends (see HappeningInstance.StatusAt).
func StatusAt(status string, ends, now time.Time) string {
	if Happens(status) && !ends.After(now) {
		return StatusCompleted
	}
	return status
}

// Upcoming reports whether an occurrence starting at start, of an instance
// stated as status, is still to come at now and expected to take place.
func Upcoming(status string, start, now time.Time) bool {
	return start.After(now) && Happens(status)
}

// Happens reports whether an instance with this stated status is expected
// to take place at its occurrences' times.
func Happens(status string) bool {
	return status == StatusScheduled || status == StatusRescheduled
}

// EachOccurrence calls f for every occurrence of the happening with its
// instance, instance by instance. Occurrence ids derive from their instance
// and start (assignIDs), so a source that lists one start twice gives one
// occurrence: the first met.
func (d HappeningDetails) EachOccurrence(f func(in HappeningInstance, o Occurrence)) {
	seen := make(map[uuid.UUID]bool)
	for _, in := range d.Instances {
		for _, o := range in.Occurrences {
			if !seen[o.ID] {
				seen[o.ID] = true
				f(in, o)
			}
		}
	}
}
