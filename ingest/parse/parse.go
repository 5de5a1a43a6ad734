// Package parse reads one page the way the crawler reads pages and tells
// what the service finds in it: the article (its metadata and its main
// text), the events it holds, the feeds it announces and the sitemaps of
// its site. POST /parse answers with it; nothing is stored.
//
// A page is fetched with the crawler's client (robots.txt, the address
// guard, its size and time bounds) or given as HTML. The extractors are
// the crawler's too (extract, extract/events), with a readability library
// for the main text, which crawling has no use for.
package parse

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/calendar"
	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/extract"
)

// Bounds of one parse.
const (
	// MaxHTMLBytes bounds HTML given to be parsed as the crawler's client
	// bounds a page it fetches.
	MaxHTMLBytes = crawl.DefaultMaxBodyBytes
	// timeout bounds a whole parse: robots.txt and the page within the
	// crawler's own per-request bound, then the sitemaps.
	timeout = 25 * time.Second
	// sitemapsTimeout bounds the look for the site's sitemaps, which only
	// adds to what the page gave.
	sitemapsTimeout = 5 * time.Second
)

// UnknownURL is where HTML given without a URL, which declares none
// either, is read: relative links on it resolve there. The .invalid name
// is reserved (RFC 2606), so it never names a real page.
const UnknownURL = "https://page.invalid/"

var (
	// ErrNothing is a page that holds nothing the service reads: no
	// article, no event, no feed.
	ErrNothing = errors.New("nothing extractable")
	// ErrTooLarge is HTML over MaxHTMLBytes.
	ErrTooLarge = fmt.Errorf("html larger than %d bytes", MaxHTMLBytes)
)

// Request is one page to read: fetched from URL, or HTML as given (with
// the URL it came from, when known). URL must be absolute http(s) and
// allowed by the caller's target policy.
type Request struct {
	URL  string
	HTML *string
}

// Result is what a page holds.
type Result struct {
	// URL is where the page was read: the final URL after redirects, or
	// the URL given or declared with HTML; empty when unknown.
	URL string
	// Article is nil when the page has none.
	Article *Article
	Events  []domain.HappeningDetails
	// Feeds are the feeds the page announces (or the page itself, when it
	// is a feed); Sitemaps are its site's (or the page itself).
	Feeds    []string
	Sitemaps []string
	// ReadAt is when the page was read: the clock its events are judged
	// by (which occurrences are still to come).
	ReadAt time.Time
}

func (r Result) empty() bool {
	return r.Article == nil && len(r.Events) == 0 && len(r.Feeds) == 0 && len(r.Sitemaps) == 0
}

// Parser reads pages. It is safe for concurrent use.
type Parser struct {
	client *crawl.Client
	logger *slog.Logger
	now    func() time.Time
	limits calendar.Limits
}

// New returns a Parser fetching through client: share the process's, so
// that its per-host limits and robots.txt cache are shared too.
func New(client *crawl.Client, logger *slog.Logger) *Parser {
	return &Parser{client: client, logger: logger, now: time.Now}
}

// WithLimits bounds the reading of each page's events as the crawler's
// (config.Config.Documents); zero fields take extract/events' defaults.
func (p *Parser) WithLimits(l calendar.Limits) *Parser {
	p.limits = l
	return p
}

// Parse reads the page. A page that could not be fetched is a
// *FetchError; one that holds nothing the service reads is ErrNothing;
// HTML over MaxHTMLBytes is ErrTooLarge.
func (p *Parser) Parse(ctx context.Context, req Request) (Result, error) {
	if req.HTML != nil && len(*req.HTML) > MaxHTMLBytes {
		return Result{}, ErrTooLarge
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	doc, err := p.document(ctx, req)
	if err != nil {
		return Result{}, err
	}
	res := Result{ReadAt: p.now().UTC()}
	if doc.URL != UnknownURL {
		res.URL = doc.URL
	}
	if err := p.read(doc, &res); err != nil {
		return Result{}, err
	}
	// The site's sitemaps: only for a page the caller named, since they
	// cost requests to the site.
	if req.URL != "" && len(res.Sitemaps) == 0 {
		res.Sitemaps = p.sitemaps(ctx, doc.URL)
	}
	return res, nil
}

// document fetches the page, or wraps the HTML given.
func (p *Parser) document(ctx context.Context, req Request) (document.Document, error) {
	if req.HTML == nil {
		resp, err := p.client.GetAllowed(ctx, req.URL, document.Validators{})
		if err != nil {
			return document.Document{}, fetchFailed(err)
		}
		return resp.Document, nil
	}
	doc := document.Document{URL: req.URL, ContentType: "text/html; charset=utf-8", Body: []byte(*req.HTML)}
	if doc.URL == "" {
		doc.URL = extract.DeclaredURL(doc.Body, doc.ContentType)
	}
	if doc.URL == "" {
		doc.URL = UnknownURL
	}
	return doc, nil
}

// read fills res from what the document is: an HTML page, a calendar, a
// feed or a sitemap.
func (p *Parser) read(doc document.Document, res *Result) error {
	if doc.IsHTML() {
		res.Article = readArticle(doc)
		res.Events = p.events(doc, res.ReadAt)
		res.Feeds = nonNil(extract.FeedLinks(doc.URL, extract.ToUTF8(doc.Body, doc.ContentType)))
	} else {
		res.Events = p.events(doc, res.ReadAt)
		res.Feeds, res.Sitemaps = []string{}, []string{}
		if _, err := extract.Feed(doc.Body); err == nil {
			res.Feeds = []string{doc.URL}
		} else if _, err := extract.ParseSitemap(doc.Body); err == nil {
			res.Sitemaps = []string{doc.URL}
		}
	}
	if res.Sitemaps == nil {
		res.Sitemaps = []string{}
	}
	if res.empty() {
		return fmt.Errorf("read %s: %w", doc.URL, ErrNothing)
	}
	return nil
}

// events are the events the document holds, with the ids they have when
// a crawl records them; none when it is neither a page nor a calendar.
func (p *Parser) events(doc document.Document, now time.Time) []domain.HappeningDetails {
	found, err := calendar.Extract(doc, calendar.Options{Now: now, Limits: p.limits})
	out := make([]domain.HappeningDetails, 0, len(found.Happenings))
	if err != nil {
		return out
	}
	if found.CutOff != nil {
		p.logger.Info("parse: document cut off; what fitted is answered", "url", doc.URL, "bound", found.CutOff.Bound, "limit", found.CutOff.Limit)
	}
	for _, d := range found.Happenings {
		_, d = domain.IdentifiedHappening(d)
		out = append(out, d)
	}
	return out
}

// sitemaps are the sitemaps of the page's site; none when its robots.txt
// cannot be read in time.
func (p *Parser) sitemaps(ctx context.Context, pageURL string) []string {
	ctx, cancel := context.WithTimeout(ctx, sitemapsTimeout)
	defer cancel()
	found, err := p.client.Sitemaps(ctx, pageURL)
	if err != nil {
		p.logger.Debug("parse: no sitemaps", "url", pageURL, "err", err)
	}
	return nonNil(found)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
