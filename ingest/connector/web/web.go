// Package web is the connector for websites: a site (its sitemaps, its
// feeds, else its home page's links), one sitemap, or one index page. It
// reads them with package crawl, which is polite and SSRF-safe.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/ingest/document"
)

// DefaultDiscoveryTTL is Options.DiscoveryTTL's default.
const DefaultDiscoveryTTL = 24 * time.Hour

// Options tune the connector. Zero values mean the documented default.
type Options struct {
	// DiscoveryTTL is how long a site's discovered sitemaps and feeds are
	// reused before robots.txt and the home page are read again.
	DiscoveryTTL time.Duration
	// FeedsRead, when set, is told after each Discover of the links (WebSub
	// hubs, self URL) of every feed the discovery read in full, for the
	// WebSub subscriber (package websub) to record.
	FeedsRead func(ctx context.Context, sourceID uuid.UUID, feeds []crawl.FeedLinks)
}

// Connector reads websites.
type Connector struct {
	client *crawl.Client
	opts   Options
	log    *slog.Logger
	now    func() time.Time
}

// New returns the web connector, fetching through client (share one per
// process, so that per-host limits and robots.txt are shared too).
func New(client *crawl.Client, opts Options, logger *slog.Logger) *Connector {
	if opts.DiscoveryTTL <= 0 {
		opts.DiscoveryTTL = DefaultDiscoveryTTL
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Connector{client: client, opts: opts, log: logger.With("connector", "web"), now: time.Now}
}

// SourceTypes implements connector.Connector.
func (c *Connector) SourceTypes() []domain.SourceType {
	return []domain.SourceType{domain.SourceSite, domain.SourceSitemap, domain.SourceSiteIndexPage}
}

// listing is one place candidates come from.
type listing struct {
	kind string // sitemap, feed, index
	url  string
}

// Discover reads every listing of the source, conditionally with the
// source's validators, and returns what they list (a URL listed twice is
// named twice; the worker merges them). since only prunes the children of
// sitemap indexes. A failing listing is logged and skipped unless all
// fail.
func (c *Connector) Discover(ctx context.Context, src connector.Source, since time.Time) (connector.Discovery, error) {
	var out connector.Discovery
	if c.opts.FeedsRead != nil {
		var mu sync.Mutex
		var feeds []crawl.FeedLinks
		ctx = crawl.WithFeedObserver(ctx, func(f crawl.FeedLinks) {
			mu.Lock()
			defer mu.Unlock()
			feeds = append(feeds, f)
		})
		defer func() {
			mu.Lock()
			defer mu.Unlock()
			if len(feeds) > 0 {
				c.opts.FeedsRead(ctx, src.ID, feeds)
			}
		}()
	}
	listings, err := c.listings(ctx, src, &out)
	if err != nil {
		return out, judge(err)
	}
	var errs []error
	for _, li := range listings {
		cands, err := c.list(ctx, li, since, src.Validators)
		out.Listings++
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			out.ListingErrors++
			errs = append(errs, fmt.Errorf("%s %s: %w", li.kind, li.url, err))
			c.log.Warn("listing failed", "source_id", src.ID, "kind", li.kind, "url", li.url, "err", err)
			continue
		}
		for _, cand := range cands {
			out.Candidates = append(out.Candidates, connector.Candidate{
				URL: cand.URL, Title: cand.Title, Description: cand.Description, ImageURL: cand.ImageURL,
				PublishedAt: cand.PublishedAt, LastMod: cand.LastMod,
			})
		}
	}
	if len(errs) == len(listings) {
		if src.Details.SourceType == domain.SourceSite {
			// The site may have moved its sitemaps or feeds: discover it
			// again next time rather than retry stale URLs for a day.
			out.State = forgotten
		}
		return out, judge(fmt.Errorf("every listing failed: %w", errors.Join(errs...)))
	}
	return out, nil
}

// listings are where the source's candidates are listed; a site's come
// from its discovery, which may update out.State.
func (c *Connector) listings(ctx context.Context, src connector.Source, out *connector.Discovery) ([]listing, error) {
	d := src.Details
	switch d.SourceType {
	case domain.SourceSitemap:
		return []listing{{"sitemap", d.URL}}, nil
	case domain.SourceSiteIndexPage:
		return []listing{{"index", d.URL}}, nil
	case domain.SourceSite:
	default:
		return nil, fmt.Errorf("source type %q is not a website", d.SourceType)
	}
	site, state, err := c.site(ctx, src)
	if err != nil {
		return nil, err
	}
	out.State = state
	var listings []listing
	if src.Quick && len(site.Feeds) > 0 && len(site.Sitemaps) > 0 {
		// A feed shows a site's new article first, in a few entries; its
		// sitemaps name every article, and are read on the polls that
		// keep the promise.
		out.Partial = true
	} else {
		for _, u := range site.Sitemaps {
			listings = append(listings, listing{"sitemap", u})
		}
	}
	for _, u := range site.Feeds {
		listings = append(listings, listing{"feed", u})
	}
	if len(listings) == 0 {
		// A site without sitemaps or feeds can still be read through the
		// links of its home page.
		listings = append(listings, listing{"index", strings.TrimSuffix(site.BaseURL, "/") + "/"})
	}
	return listings, nil
}

func (c *Connector) list(ctx context.Context, li listing, since time.Time, validators document.ValidatorStore) ([]crawl.Candidate, error) {
	switch li.kind {
	case "sitemap":
		return c.client.SitemapCandidates(ctx, li.url, since, validators)
	case "feed":
		return c.client.FeedCandidates(ctx, li.url, validators)
	default:
		return c.client.IndexPageCandidates(ctx, li.url, validators)
	}
}

// Fetch fetches a candidate page, if robots.txt allows it, conditionally
// when the candidate carries validators.
func (c *Connector) Fetch(ctx context.Context, cand connector.Candidate) (document.Document, error) {
	doc, err := c.client.FetchDocument(ctx, cand.URL, cand.Cond)
	if errors.Is(err, crawl.ErrNotModified) {
		return document.Document{}, connector.ErrUnchanged
	}
	return doc, judge(err)
}
