package happeningitems

import (
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/readmodel/changes"
)

// totals remembers, per feed, the last range total a list counted, with
// the box of ranges it holds for: an event list's total (the items with an
// occurrence in [since, until)) is a walk of every occurrence row in the
// range, most of a list's Postgres time, and since defaults to now, so no
// two requests ask for the same range. But the total is a step function
// of the range: it changes only when since passes an occurrence's end
// (or the start of one with no length) or until passes a start, and when
// the feed's items change. So a total counted at (since, until) with the
// feed's latest change key L is exact for every since in [since, sinceBefore)
// and until in [until, untilUpTo] while the latest change is still L,
// where sinceBefore is the first such end after since and untilUpTo the
// first start at or after until (boundsSQL). A list reads the latest
// change in its round trip anyway; a hit skips the walk.
//
// Every change of what an item's occurrence rows say, or of whether it
// is listed, moves the feed's latest change key (the projector writes the
// item's key with the rows: projectHappening, showItem,
// projectSourceDetached), and keys only grow (changes.Key). Nothing is
// kept in Postgres: each process counts for itself.
type totals struct {
	mu    sync.Mutex
	feeds map[uuid.UUID]countedTotal
}

// countedTotal is a total and the box of ranges it holds for.
type countedTotal struct {
	latest             changes.Key
	since, sinceBefore time.Time
	until, untilUpTo   time.Time
	total              int
}

// maxRememberedFeeds bounds the memory; past it the map starts again.
const maxRememberedFeeds = 10_000

// holds reports whether c's total is the total of [since, until).
func (c countedTotal) holds(since, until time.Time) bool {
	return !since.Before(c.since) && since.Before(c.sinceBefore) && !until.Before(c.until) && !until.After(c.untilUpTo)
}

func (t *totals) get(feed uuid.UUID) (countedTotal, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.feeds[feed]
	return c, ok
}

func (t *totals) put(feed uuid.UUID, c countedTotal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.feeds == nil || len(t.feeds) >= maxRememberedFeeds {
		t.feeds = make(map[uuid.UUID]countedTotal)
	}
	t.feeds[feed] = c
}

// forget drops feed's total if it is still the one counted at latest.
func (t *totals) forget(feed uuid.UUID, latest changes.Key) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.feeds[feed]; ok && c.latest == latest {
		delete(t.feeds, feed)
	}
}

// farFuture stands for a bound no occurrence sets.
var farFuture = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// boundsSQL finds, for feed $1 and range [$2, $3), the box a total counted
// there holds for: the first instant after $2 at which an occurrence in
// the range is over (its end, or a microsecond after the start of one
// with no length; the next start after $2 bounds those that begin later)
// and the first start at or after $3. Those under way at $2 reach back by
// the feed's longest occurrence, as the range query does (inWindow).
const boundsSQL = `SELECT least(
		(SELECT min(greatest(ends_at, starts_at + interval '1 microsecond')) FROM event_item_occurrences
		 WHERE feed_id = $1
		   AND starts_at >= $2::timestamptz - coalesce((SELECT longest FROM event_feed_spans WHERE feed_id = $1), interval '0')
		   AND starts_at <= $2 AND greatest(ends_at, starts_at + interval '1 microsecond') > $2),
		(SELECT min(starts_at) FROM event_item_occurrences WHERE feed_id = $1 AND starts_at > $2)),
	(SELECT min(starts_at) FROM event_item_occurrences WHERE feed_id = $1 AND starts_at >= $3)`
