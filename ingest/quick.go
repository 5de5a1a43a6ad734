package ingest

import (
	"sync"
	"time"

	"github.com/google/uuid"
)

// Quick polls. A busy source is checked every minute or so (schedule.go),
// and a site's feeds show its new article first, in a few entries, while
// its sitemaps name every article and change with each of them: reading
// the sitemaps on every one of those polls doubled the requests of a busy
// site and parsed a whole sitemap per publication. So a poll sooner than
// the promise reads only what shows new documents first
// (connector.Source.Quick; the web connector reads a site's feeds and
// leaves its sitemaps) while the source's whole read is recent, and the
// promise is kept for every listing:
//
//   - a poll is quick only within PollInterval - MinPollInterval of this
//     process's last whole read of the source (its listings all read and
//     none failing), with the same date window;
//   - a quick poll's next poll is due no later than that whole read plus
//     PollInterval, whatever the schedule says (a site's own request for
//     longer excepted), and is a whole read, since it falls outside the
//     window above.
//
// The whole reads are remembered in this process only: a process that has
// none for a source (it started, or another process polled the source)
// reads it whole, which costs a request and keeps the promise.
type wholeReads struct {
	mu sync.Mutex
	m  map[uuid.UUID]wholeRead
	// pruned is when entries past any use were last dropped.
	pruned time.Time
}

// wholeRead is when a source's listings were last all read, and the date
// window they were read with.
type wholeRead struct {
	at, since time.Time
}

// quick returns whether a poll of the source starting now may be quick,
// and when its next poll is due at the latest if it is.
func (w *Worker) quick(id uuid.UUID, now, since time.Time) (bool, time.Time) {
	window := w.cfg.PollInterval - w.cfg.MinPollInterval
	if window <= 0 {
		return false, time.Time{}
	}
	w.whole.mu.Lock()
	defer w.whole.mu.Unlock()
	r, ok := w.whole.m[id]
	if !ok || now.Sub(r.at) >= window || since.Before(r.since) {
		return false, time.Time{}
	}
	return true, r.at.Add(w.cfg.PollInterval)
}

// readWhole records that a poll that started at began read every listing
// of the source with the date window since. Once an interval, entries
// older than the interval (no use to quick) are dropped, so that detached
// sources do not pile up.
func (w *Worker) readWhole(id uuid.UUID, began, since time.Time) {
	w.whole.mu.Lock()
	defer w.whole.mu.Unlock()
	if w.whole.m == nil {
		w.whole.m = map[uuid.UUID]wholeRead{}
	}
	w.whole.m[id] = wholeRead{at: began, since: since}
	if began.Sub(w.whole.pruned) >= w.cfg.PollInterval {
		w.whole.pruned = began
		for k, r := range w.whole.m {
			if began.Sub(r.at) > w.cfg.PollInterval {
				delete(w.whole.m, k)
			}
		}
	}
}
