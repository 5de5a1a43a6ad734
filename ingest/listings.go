package ingest

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/ingest/crawlstate"
	"github.com/feedsvc/feedsvc/ingest/document"
)

// Conditional GET of listings. A crawl reads the validators its source's
// listings answered last time from crawl_listings, and the source's
// connector sends them, so an unchanged sitemap, feed, index page or
// calendar costs a 304 and lists nothing. That is only right if everything the listing named when
// the validators were stored has been dealt with, so a crawl stores the
// validators it got back only when it dealt with every candidate:
//
//   - it succeeded (a failed or interrupted crawl left candidates
//     unfetched) and was not cut short by MaxFetchesPerCrawl;
//   - every candidate that failed is in crawl_failures, whence
//     the store's FailedCandidates brings it back on each poll until it succeeds or is
//     given up, whether or not its listing answers 304;
//   - its date window reaches back no further than the one the validators
//     were stored under (covered_since): a crawl looking further back, for
//     a new attachment, reads the listings in full.
//
// What a connector reads to find a source's listings (a site's home page,
// for the web connector) is not a listing and is read in full.

// listingValidators is a crawl's document.ValidatorStore: what crawl_listings
// holds for the source, and what the crawl's requests answered.
type listingValidators struct {
	since time.Time // the crawl's date window
	mu    sync.Mutex
	// stored is what crawl_listings held, usable for this window.
	stored map[string]document.Validators
	// requested are the listing URLs asked for in this crawl, answered
	// those that answered (in full or 304), with what they answered.
	requested map[string]bool
	answered  map[string]document.Validators
	// partial: the crawl was quick and left listings unread (quick.go);
	// their stored rows stay as they are.
	partial bool
}

// listingsFor keeps of the source's stored validators (read with its
// claim, crawlstate.Leased) those a crawl with the date window since may use.
func listingsFor(rows []crawlstate.Listing, since time.Time) *listingValidators {
	lv := &listingValidators{since: since, stored: map[string]document.Validators{}, requested: map[string]bool{}, answered: map[string]document.Validators{}}
	for _, r := range rows {
		if !r.CoveredSince.After(since) {
			lv.stored[r.URL] = document.Validators{ETag: r.ETag, LastModified: r.LastModified}
		}
	}
	return lv
}

func (lv *listingValidators) Validators(url string) document.Validators {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	lv.requested[url] = true
	return lv.stored[url]
}

func (lv *listingValidators) SetValidators(url string, v document.Validators) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	lv.answered[url] = v
}

// unchanged reports whether storing would change nothing: every listing
// asked for answered what was stored for it, and every stored one was
// asked for (most polls: each listing answered 304). The rows then keep
// their covered_since, which claims no less than this crawl could: an
// unchanged listing lists what it listed when they were stored.
func (lv *listingValidators) unchanged() bool {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if len(lv.requested) != len(lv.stored) && !lv.partial {
		return false
	}
	for u := range lv.requested {
		v, answered := lv.answered[u]
		s, stored := lv.stored[u]
		if !answered || !stored || v.ETag != s.ETag || v.LastModified != s.LastModified {
			return false
		}
	}
	return true
}

// hints are what the crawl's listings said about when to read them again:
// the shortest freshness any claimed (a source changes when any of its
// listings does), and the longest throttle any site asked for (each of
// them is a request to it); zero when none said anything.
func (lv *listingValidators) hints() (fresh, throttle document.Hint) {
	if lv == nil {
		return fresh, throttle
	}
	lv.mu.Lock()
	defer lv.mu.Unlock()
	for _, v := range lv.answered {
		if v.Fresh.For > 0 && (fresh.For == 0 || v.Fresh.For < fresh.For) {
			fresh = v.Fresh
		}
		throttle = throttle.Longer(v.Throttle)
	}
	return fresh, throttle
}

// saveListings stores what the crawl's listings answered, once the crawl
// dealt with every candidate (see above). A listing that failed this time
// keeps its row, which still describes what was dealt with; rows of
// listings not asked for any more, and of those with nothing to remember
// (a sitemap index), go.
func (w *Worker) saveListings(ctx context.Context, sourceID uuid.UUID, lv *listingValidators) error {
	if lv.unchanged() {
		return nil
	}
	lv.mu.Lock()
	var keep []string
	var save []crawlstate.ListingValidators
	for u := range lv.requested {
		v, ok := lv.answered[u]
		if !ok {
			keep = append(keep, u)
			continue
		}
		if !v.Conditional() {
			continue
		}
		keep = append(keep, u)
		save = append(save, crawlstate.ListingValidators{URL: u, ETag: v.ETag, LastModified: v.LastModified})
	}
	if lv.partial {
		for u := range lv.stored {
			if !lv.requested[u] {
				keep = append(keep, u)
			}
		}
	}
	lv.mu.Unlock()
	return w.store.SaveListings(ctx, sourceID, keep, save, lv.since)
}
