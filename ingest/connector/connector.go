// Package connector is how the ingestion worker reads sources of any kind:
// each kind of source (websites, calendars, platform accounts) has a
// Connector, in a package of its own under connector/, registered by the
// source types it reads. The worker schedules, leases, remembers what it
// has seen, judges failures and backfills the same way for every kind; a
// connector only says what a source offers and fetches it.
package connector

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/document"
)

// Connector reads one kind of source.
type Connector interface {
	// SourceTypes are the source types it reads.
	SourceTypes() []domain.SourceType
	// Discover lists what the source offers that may be new: every
	// candidate its listings name, with what they say about it. since is
	// how far back the worker looks; a connector may use it to skip
	// listings that are older, but judging each candidate's date is the
	// worker's. Discover fails only when the source itself cannot be read
	// (every listing failed); the error should carry a Judgement.
	Discover(ctx context.Context, src Source, since time.Time) (Discovery, error)
	// Fetch fetches one candidate's document whole, for the extractors to
	// read. Its errors should carry a Judgement; one without is taken for
	// transient. When c.Cond is conditional, a connector that can ask
	// whether the document changed since (a website) returns ErrUnchanged
	// when it did not; one that cannot ignores Cond.
	Fetch(ctx context.Context, c Candidate) (document.Document, error)
}

// Source is a source record as a connector reads it.
type Source struct {
	ID      uuid.UUID
	Details domain.SourceDetails
	// State is what the connector kept about the source last time
	// (Discovery.State), nil when nothing.
	State json.RawMessage
	// Validators remembers the cache validators of the source's listings
	// between crawls, for conditional requests. The worker keeps what they
	// answered only once it has dealt with everything they listed.
	Validators document.ValidatorStore
	// Quick: the source is checked sooner than the polling promise
	// because it publishes often, and its slow listings were read whole
	// within the promise. A connector may then read only the listings
	// that show a new document first (a site's feeds, not its sitemaps)
	// and say so (Discovery.Partial); the worker sees to it that every
	// listing is read at least once per promise interval.
	Quick bool
}

// Discovery is what Discover found.
type Discovery struct {
	Candidates []Candidate
	// Listings and ListingErrors count the listings read and those that
	// failed, for the worker's log.
	Listings, ListingErrors int
	// State, when not nil, replaces what the worker keeps for the source
	// (a cache of what the connector learned about it, such as a site's
	// sitemaps), even when Discover failed. It is small JSON, and only a
	// cache: losing it must cost no more than reading the source again.
	State json.RawMessage
	// Exhaustive: the candidates name every document of the source that
	// can still change (a platform lists recent posts and upcoming events
	// each time), so a document that held events is re-read only when the
	// listing names it again. A website's listings name only what is new,
	// so its event pages are re-read whether listed or not.
	Exhaustive bool
	// Partial: a Quick discovery left listings unread; their stored
	// validators are kept for the next whole read.
	Partial bool
}

// Candidate is a document a source lists, with whatever the listing said
// about it. Failed candidates are kept as JSON until retried, so its
// fields are stored by name.
type Candidate struct {
	URL         string
	Title       string
	Description string
	ImageURL    string
	PublishedAt time.Time
	LastMod     time.Time
	// Data is what the listing gave beyond these fields, for the
	// connector's Fetch (a platform lists each post whole); nil when
	// nothing.
	Data json.RawMessage `json:",omitempty"`
	// Cond are the validators the document answered when it was last read
	// whole, for a conditional Fetch; zero when it is not being re-read.
	// Not stored: they are the worker's, kept beside the document.
	Cond document.Validators `json:"-"`
}

// ErrUnchanged is what Fetch returns when a conditional request found the
// document as it was (an HTTP 304): nothing to read again.
var ErrUnchanged = errors.New("document unchanged")
