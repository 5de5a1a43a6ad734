package ingest

import (
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/ingest/connector"
)

// A crawl cut short by MaxFetchesPerCrawl leaves what it did not fetch
// here, and the crawl that goes on with the backlog, when this process
// leases it, starts from that instead of reading the source's listings
// again: a site listing thousands of articles would otherwise have its
// listings read and parsed once per MaxFetchesPerCrawl articles.
//
// Going on without reading the listings is safe. What was published since
// the read is found by the next poll, whose conditional requests carry the
// validators of that read (so a changed listing is read in full). Those
// validators are stored only when the last crawl of the backlog completes
// and every crawl of it recorded its failures, which is the rule of
// listings.go applied to the backlog as a whole. Another process may crawl
// the source in between: the left-over candidates are still checked
// against crawl_seen and crawl_failures, so nothing is fetched twice, and
// it matters only that they are a subset of what the read listed.

// backlog is what a crawl left for the next one.
type backlog struct {
	// rest are the candidates not yet fetched, newest first.
	rest []connector.Candidate
	// listings are the validators of the read the candidates came from.
	listings *listingValidators
	// unrecorded: a crawl of this backlog failed to record its failures.
	unrecorded bool
	at         time.Time
}

// backlogs are the backlogs this process left, by source.
type backlogs struct {
	mu     sync.Mutex
	bySrc  map[uuid.UUID]backlog
	maxAge time.Duration
}

func newBacklogs(maxAge time.Duration) *backlogs {
	return &backlogs{bySrc: map[uuid.UUID]backlog{}, maxAge: maxAge}
}

// put keeps a source's backlog, forgetting those too old to be the one a
// crawl goes on with: the crawl that goes on with a backlog is due at once,
// so one this process has not leased within maxAge (a lease's duration)
// was most likely taken by another process, or its source disabled.
func (b *backlogs) put(sourceID uuid.UUID, bl backlog) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, old := range b.bySrc {
		if time.Since(old.at) > b.maxAge {
			delete(b.bySrc, id)
		}
	}
	bl.at = time.Now()
	b.bySrc[sourceID] = bl
}

// take returns and forgets a source's backlog.
func (b *backlogs) take(sourceID uuid.UUID) (backlog, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bl, ok := b.bySrc[sourceID]
	delete(b.bySrc, sourceID)
	if !ok || time.Since(bl.at) > b.maxAge {
		return backlog{}, false
	}
	return bl, true
}
