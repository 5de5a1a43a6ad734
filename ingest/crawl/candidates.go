package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/extract"
	"github.com/feedsvc/feedsvc/internal/safehttp"
)

// Bounds on sitemap index traversal: news sites keep indexes of hundreds of
// monthly sitemaps, of which only the recent ones matter to us.
const (
	maxSitemapDepth    = 2
	maxSitemapChildren = 50
)

// Candidate is an article URL found in a listing, with whatever the listing
// said about it.
type Candidate struct {
	URL         string
	Title       string
	Description string
	ImageURL    string
	PublishedAt time.Time
	LastMod     time.Time
}

func conditional(store document.ValidatorStore, u string) document.Validators {
	if store == nil {
		return document.Validators{}
	}
	return store.Validators(u)
}

// remember tells store (which may be nil) what listing u answered, with
// the Crawl-delay its site's robots.txt asks of us when this client has
// the file at hand (read within robotsTTL, for the site's pages or its
// discovery): a poll is at least one request to the site, so the source
// is polled no more often than that.
func (c *Client) remember(store document.ValidatorStore, u string, v document.Validators) {
	if store == nil {
		return
	}
	if pu, err := url.Parse(u); err == nil {
		if e := c.robots.get(origin(pu)); e != nil && e.delay > 0 {
			v.Throttle = v.Throttle.Longer(document.Hint{For: e.delay, By: document.ByCrawlDelay})
		}
	}
	store.SetValidators(u, v)
}

// SitemapCandidates lists the URLs of a sitemap, with whatever dates it
// gives; judging them by date is the caller's business. A sitemap index is
// followed to depth 2, skipping children whose lastmod is before since and
// reading at most 50 children, newest lastmod first. A failing child is
// skipped; only when every child fails is the listing an error. A "sitemap"
// that turns out to be an RSS or Atom feed is read as one. Sitemaps are not
// checked against robots.txt, which is where sites advertise them.
//
// With a store, sitemaps and feeds are fetched conditionally. An index is
// always read in full (its validators are not kept): a 304 would hide its
// children, which are what changes and which are fetched conditionally
// themselves. store may be nil.
func (c *Client) SitemapCandidates(ctx context.Context, sitemapURL string, since time.Time, store document.ValidatorStore) ([]Candidate, error) {
	w := &sitemapWalk{c: c, since: since, store: store, budget: maxSitemapChildren, seen: map[string]bool{}}
	if err := w.visit(ctx, sitemapURL, 0); err != nil {
		return nil, err
	}
	return w.out, nil
}

// sitemapWalk carries the state of one SitemapCandidates call.
type sitemapWalk struct {
	c      *Client
	since  time.Time
	store  document.ValidatorStore
	mu     sync.Mutex
	budget int
	seen   map[string]bool
	out    []Candidate
}

func (w *sitemapWalk) visit(ctx context.Context, sitemapURL string, depth int) error {
	resp, err := w.c.fetch(ctx, sitemapURL, conditional(w.store, sitemapURL), w.c.opts.MaxSitemapBytes)
	if err != nil {
		return fmt.Errorf("sitemap: %w", err)
	}
	if resp.NotModified {
		w.c.remember(w.store, sitemapURL, resp.Validators)
		return nil
	}
	sm, err := extract.ParseSitemap(resp.Body)
	if errors.Is(err, extract.ErrNotSitemap) {
		if err := w.addFeed(resp); err != nil {
			return err
		}
		observeFeed(ctx, resp)
		resp.Validators.Fresh = resp.Validators.Fresh.Longer(feedFreshness(resp.Body))
		w.c.remember(w.store, sitemapURL, resp.Validators)
		return nil
	}
	if err != nil {
		return fmt.Errorf("sitemap %s: %w", sitemapURL, err)
	}
	if !sm.Index {
		w.addURLs(sm.URLs)
		w.c.remember(w.store, sitemapURL, resp.Validators)
		return nil
	}
	w.c.remember(w.store, sitemapURL, document.Validators{})
	if depth >= maxSitemapDepth {
		return fmt.Errorf("sitemap %s: index nested deeper than %d levels", sitemapURL, maxSitemapDepth)
	}
	return w.visitChildren(ctx, resp.URL, sm.Children, depth+1)
}

// visitChildren fetches the selected children concurrently (the per-host
// limit still applies) and succeeds when at least one child does.
func (w *sitemapWalk) visitChildren(ctx context.Context, parentURL string, children []extract.SitemapRef, depth int) error {
	refs := w.selectChildren(parentURL, children)
	if len(refs) == 0 {
		return nil
	}
	var mu sync.Mutex
	var errs []error
	var g errgroup.Group
	g.SetLimit(w.c.opts.PerHost)
	for _, ref := range refs {
		g.Go(func() error {
			if err := w.visit(ctx, ref, depth); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait() // the goroutines never return errors; they collect them
	if len(errs) == len(refs) {
		return fmt.Errorf("sitemap index %s: all %d children failed: %w", parentURL, len(refs), errors.Join(errs...))
	}
	return nil
}

// selectChildren drops children older than since, orders the rest newest
// lastmod first (undated ones after, in document order) and takes what is
// left of the budget.
func (w *sitemapWalk) selectChildren(parentURL string, children []extract.SitemapRef) []string {
	base, _ := url.Parse(parentURL)
	var keep []extract.SitemapRef
	for _, ch := range children {
		if !ch.LastMod.IsZero() && ch.LastMod.Before(w.since) {
			continue
		}
		keep = append(keep, ch)
	}
	slices.SortStableFunc(keep, func(a, b extract.SitemapRef) int {
		switch {
		case a.LastMod.IsZero() && b.LastMod.IsZero():
			return 0
		case a.LastMod.IsZero():
			return 1
		case b.LastMod.IsZero():
			return -1
		}
		return b.LastMod.Compare(a.LastMod)
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, ch := range keep {
		abs := absolute(base, ch.URL)
		if abs == "" || w.seen["sitemap:"+abs] {
			continue
		}
		if w.budget == 0 {
			break
		}
		w.budget--
		w.seen["sitemap:"+abs] = true
		out = append(out, abs)
	}
	return out
}

func (w *sitemapWalk) addURLs(urls []extract.SitemapURL) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, u := range urls {
		w.add(Candidate{URL: u.URL, Title: u.Title, ImageURL: u.ImageURL, PublishedAt: u.PublishedAt, LastMod: u.LastMod})
	}
}

func (w *sitemapWalk) addFeed(resp *Response) error {
	cands, err := feedCandidates(resp)
	if err != nil {
		return fmt.Errorf("sitemap %s: neither a sitemap nor a feed: %w", resp.URL, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, cand := range cands {
		w.add(cand)
	}
	return nil
}

// add appends a candidate once; w.mu must be held.
func (w *sitemapWalk) add(cand Candidate) {
	u, err := url.Parse(cand.URL)
	if err != nil || safehttp.CheckURL(u) != nil || w.seen[cand.URL] {
		return
	}
	w.seen[cand.URL] = true
	w.out = append(w.out, cand)
}

// FeedCandidates lists the entries of an RSS, Atom or JSON feed, fetched
// conditionally with a store (which may be nil). Like sitemaps, feeds are
// published for machines and are not checked against robots.txt (feed
// readers do not consult it).
func (c *Client) FeedCandidates(ctx context.Context, feedURL string, store document.ValidatorStore) ([]Candidate, error) {
	resp, err := c.Get(ctx, feedURL, conditional(store, feedURL))
	if err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	if resp.NotModified {
		c.remember(store, feedURL, resp.Validators)
		return nil, nil
	}
	cands, err := feedCandidates(resp)
	if err != nil {
		return nil, err
	}
	observeFeed(ctx, resp)
	resp.Validators.Fresh = resp.Validators.Fresh.Longer(feedFreshness(resp.Body))
	c.remember(store, feedURL, resp.Validators)
	return cands, nil
}

func feedCandidates(resp *Response) ([]Candidate, error) {
	entries, err := extract.Feed(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("feed %s: %w", resp.URL, err)
	}
	base, _ := url.Parse(resp.URL)
	out := make([]Candidate, 0, len(entries))
	seen := map[string]bool{}
	for _, e := range entries {
		u := absolute(base, e.URL)
		if u == "" || seen[u] {
			continue
		}
		seen[u] = true
		out = append(out, Candidate{URL: u, Title: e.Title, Description: e.Description,
			ImageURL: absolute(base, e.ImageURL), PublishedAt: e.PublishedAt})
	}
	return out, nil
}

// IndexPageCandidates lists the links of an index page (a home page or a
// section front) that extract.LikelyArticle accepts, fetched conditionally
// with a store (which may be nil). The page is fetched only if robots.txt
// allows it.
func (c *Client) IndexPageCandidates(ctx context.Context, pageURL string, store document.ValidatorStore) ([]Candidate, error) {
	resp, err := c.GetAllowed(ctx, pageURL, conditional(store, pageURL))
	if err != nil {
		return nil, fmt.Errorf("index page: %w", err)
	}
	if resp.NotModified {
		c.remember(store, pageURL, resp.Validators)
		return nil, nil
	}
	if !resp.IsHTML() {
		return nil, fmt.Errorf("index page %s: %w (%s)", resp.URL, extract.ErrNotHTML, resp.ContentType)
	}
	c.remember(store, pageURL, resp.Validators)
	var out []Candidate
	for _, link := range extract.Links(resp.URL, extract.ToUTF8(resp.Body, resp.ContentType)) {
		if extract.LikelyArticle(resp.URL, link) {
			out = append(out, Candidate{URL: link})
		}
	}
	return out, nil
}

// FetchDocument fetches one document (an article page), if robots.txt
// allows it, whole: what it is, and whether it is what the caller wants, is
// for the extractors to judge. With validators (cond) the request is
// conditional, and a 304 is ErrNotModified.
func (c *Client) FetchDocument(ctx context.Context, pageURL string, cond document.Validators) (document.Document, error) {
	resp, err := c.GetAllowed(ctx, pageURL, cond)
	if err != nil {
		return document.Document{}, fmt.Errorf("document: %w", err)
	}
	if resp.NotModified {
		return document.Document{}, fmt.Errorf("document %s: %w", pageURL, ErrNotModified)
	}
	return resp.Document, nil
}

// absolute resolves ref against base, returning "" unless the result is an
// http(s) URL.
func absolute(base *url.URL, ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ""
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if base != nil {
		r = base.ResolveReference(r)
	}
	if safehttp.CheckURL(r) != nil {
		return ""
	}
	return r.String()
}
