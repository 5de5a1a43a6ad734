package crawl

import (
	"context"
	"fmt"
	"net/url"

	"github.com/feedsvc/feedsvc/internal/safehttp"
)

// Test-only views of the robots.txt cache; production code goes through
// GetAllowed and DiscoverSite.

// Allowed reports whether robots.txt lets our user agent fetch rawURL.
func (c *Client) Allowed(ctx context.Context, rawURL string) bool {
	return c.checkRobots(ctx, rawURL) == nil
}

// RobotsSitemaps returns the absolute Sitemap: URLs of baseURL's
// robots.txt. A missing robots.txt yields none and no error; one that cannot
// be read is an error, so the caller can retry rather than conclude the site
// has no sitemaps.
func (c *Client) RobotsSitemaps(ctx context.Context, baseURL string) ([]string, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("robots sitemaps %s: %w", baseURL, err)
	}
	if err := safehttp.CheckURL(u); err != nil {
		return nil, fmt.Errorf("robots sitemaps %s: %w", baseURL, err)
	}
	e := c.robotsFor(ctx, origin(u))
	if e.err != nil {
		return nil, fmt.Errorf("robots sitemaps %s: %w", baseURL, e.err)
	}
	return e.sitemaps, nil
}
