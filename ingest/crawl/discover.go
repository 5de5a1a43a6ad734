package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/extract"
	"github.com/feedsvc/feedsvc/internal/safehttp"
)

// Site is what DiscoverSite learned about a site.
type Site struct {
	// BaseURL is scheme://host[:port] of the home page after redirects,
	// e.g. "https://www.example.com".
	BaseURL string
	// Sitemaps come from robots.txt, else from probing /sitemap.xml and
	// /sitemap_index.xml.
	Sitemaps []string
	// Feeds are the feeds the home page announces.
	Feeds []string
}

// wellKnownSitemaps are probed when robots.txt lists no sitemap.
var wellKnownSitemaps = []string{"/sitemap.xml", "/sitemap_index.xml"}

// DiscoverSite finds the sitemaps and feeds of the site name
// ("example.com" or "host:port"; an http(s) scheme or trailing slash is
// tolerated, as domain.NormalizeDomain has it). It tries https
// first and falls back to http only when https cannot connect (refused, TLS
// failure, timeout), never when https answers with an HTTP error, so that a
// site is not silently downgraded.
func (c *Client) DiscoverSite(ctx context.Context, name string) (Site, error) {
	host, err := domain.NormalizeDomain(name)
	if err != nil {
		return Site{}, fmt.Errorf("discover %s: %w", name, err)
	}
	var errs []error
	for _, scheme := range []string{"https", "http"} {
		site, err := c.discoverAt(ctx, scheme+"://"+host)
		if err == nil {
			return site, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil || !connectionFailure(err) {
			break
		}
	}
	return Site{}, fmt.Errorf("discover %s: %w", name, errors.Join(errs...))
}

// discoverAt discovers a site at one origin. Reading robots.txt comes first:
// it is needed anyway, whether it connects decides the scheme, and when it
// is temporarily unreadable nothing else may be fetched.
func (c *Client) discoverAt(ctx context.Context, base string) (Site, error) {
	robots := c.robotsFor(ctx, base)
	if robots.err != nil {
		// Unreachable: the caller may fall back to http. Reachable but
		// failing (5xx, 429): crawling must wait, so report it.
		return Site{}, fmt.Errorf("robots.txt: %w", robots.err)
	}
	site := Site{BaseURL: base, Sitemaps: robots.sitemaps}
	home, err := c.GetAllowed(ctx, base+"/", document.Validators{})
	switch {
	case err == nil:
		site.BaseURL = originOf(home.URL, base)
		site.Feeds = extract.FeedLinks(home.URL, extract.ToUTF8(home.Body, home.ContentType))
	case connectionFailure(err):
		return Site{}, err
	}
	if len(site.Sitemaps) == 0 {
		site.Sitemaps = c.probeSitemaps(ctx, site.BaseURL)
	}
	return site, nil
}

// Sitemaps finds the sitemaps of the site pageURL is on, as DiscoverSite
// does: those its robots.txt lists, else the well-known ones that exist.
// It fails only when robots.txt cannot be read.
func (c *Client) Sitemaps(ctx context.Context, pageURL string) ([]string, error) {
	u, err := url.Parse(pageURL)
	if err != nil {
		return nil, fmt.Errorf("sitemaps of %s: %w", pageURL, err)
	}
	if err := safehttp.CheckURL(u); err != nil {
		return nil, fmt.Errorf("sitemaps of %s: %w", pageURL, err)
	}
	base := origin(u)
	robots := c.robotsFor(ctx, base)
	if robots.err != nil {
		return nil, fmt.Errorf("sitemaps of %s: robots.txt: %w", base, robots.err)
	}
	if len(robots.sitemaps) > 0 {
		return slices.Clone(robots.sitemaps), nil
	}
	return c.probeSitemaps(ctx, base), nil
}

// probeSitemaps returns the well-known sitemap URLs that exist. Existing
// means a 2xx that parses as a sitemap: many sites answer unknown paths with
// a 200 HTML page.
func (c *Client) probeSitemaps(ctx context.Context, base string) []string {
	var found []string
	for _, p := range wellKnownSitemaps {
		resp, err := c.fetch(ctx, base+p, document.Validators{}, c.opts.MaxSitemapBytes)
		if err != nil {
			continue
		}
		if _, err := extract.ParseSitemap(resp.Body); err == nil {
			found = append(found, resp.URL)
		}
	}
	return found
}

func originOf(rawURL, fallback string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return fallback
	}
	return origin(u)
}

// connectionFailure reports errors where the server was never reached or
// the TLS session never established, as opposed to HTTP-level answers,
// lasting refusals (Permanent) and the caller's own cancellation.
func connectionFailure(err error) bool {
	var se *StatusError
	return err != nil && !errors.As(err, &se) && !Permanent(err) && !errors.Is(err, context.Canceled)
}
