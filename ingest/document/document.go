// Package document is what fetching gives and extracting takes: the bytes
// of one document with the URL and media type they came with, so that one
// fetch serves every extractor (articles, JSON-LD events, iCalendar) and a
// document that did not come from a fetch (a parse request) is read the
// same way.
package document

import (
	"mime"
	"net/http"
	"strings"
	"time"
)

// Document is a fetched document.
type Document struct {
	// URL is where the bytes came from: the final URL after redirects.
	URL string
	// ContentType is the Content-Type it came with; empty when unknown.
	ContentType string
	Body        []byte
	// Validators are the response's cache validators, for fetching it
	// again conditionally.
	Validators Validators
}

// Validators are the HTTP cache validators of a response, replayed as
// If-None-Match / If-Modified-Since so that an unchanged resource costs a
// 304.
type Validators struct {
	ETag         string
	LastModified string
	// Fresh is how long the response said it stays fresh (Cache-Control
	// max-age, Expires, a feed's ttl or sy:updatePeriod), and Throttle how
	// long its site asked to be left alone (Retry-After on a success,
	// robots.txt Crawl-delay); zero when it said nothing. Neither is
	// replayed: the scheduler polls the source no sooner than they say,
	// each within its own bound (ingest/schedule.go).
	Fresh, Throttle Hint
}

// Hint is how long a response asks not to be read again, and which of its
// signals asks it (one of the By constants); the zero Hint asks nothing.
type Hint struct {
	For time.Duration
	By  string
}

// The signals a Hint names, as the source's polling block shows them.
const (
	ByCacheControl     = "cacheControl"
	ByExpires          = "expires"
	ByFeedTTL          = "feedTtl"
	ByFeedUpdatePeriod = "feedUpdatePeriod"
	ByRetryAfter       = "retryAfter"
	ByCrawlDelay       = "crawlDelay"
)

// Longer is the longer of h and o (h when they are equal).
func (h Hint) Longer(o Hint) Hint {
	if o.For > h.For {
		return o
	}
	return h
}

// Conditional reports whether v makes a request conditional.
func (v Validators) Conditional() bool { return v.ETag != "" || v.LastModified != "" }

// ValidatorStore remembers the validators of listings (sitemaps, feeds,
// index pages, calendars) between crawls, keyed by the URL requested. A
// listing that answers 304 lists nothing: whoever stored the validators
// has dealt with what it listed. Implementations must be safe for
// concurrent use.
type ValidatorStore interface {
	// Validators returns what to send with a request for url; the zero
	// value makes the request unconditional.
	Validators(url string) Validators
	// SetValidators records what url answered, in full or with a 304. The
	// zero value means there is nothing to remember.
	SetValidators(url string, v Validators)
}

// MediaType is the document's media type, lower-cased and without
// parameters: from its Content-Type, else sniffed from its bytes.
func (d Document) MediaType() string {
	ct := d.ContentType
	if strings.TrimSpace(ct) == "" {
		ct = http.DetectContentType(d.Body)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}

// IsHTML reports whether the document is an HTML page.
func (d Document) IsHTML() bool {
	mt := d.MediaType()
	return mt == "text/html" || mt == "application/xhtml+xml"
}
