package web

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/feedsvc/feedsvc/ingest/connector"
)

// siteState is a site's discovery, kept as the source's connector state so
// that robots.txt and the home page are not read on every poll.
type siteState struct {
	BaseURL      string    `json:"baseUrl"`
	Sitemaps     []string  `json:"sitemaps"`
	Feeds        []string  `json:"feeds"`
	DiscoveredAt time.Time `json:"discoveredAt"`
}

// forgotten is the state of a site to be discovered again.
var forgotten = json.RawMessage(`null`)

// site returns the site's discovery: the kept one while it is fresh, else
// a new one, with the state to keep (nil when the kept one served).
func (c *Connector) site(ctx context.Context, src connector.Source) (siteState, json.RawMessage, error) {
	var kept siteState
	// A malformed state is only a lost cache: the site is discovered again.
	_ = json.Unmarshal(src.State, &kept)
	if kept.BaseURL != "" && c.now().Sub(kept.DiscoveredAt) < c.opts.DiscoveryTTL {
		return kept, nil, nil
	}
	found, err := c.client.DiscoverSite(ctx, src.Details.Domain)
	if err != nil {
		return siteState{}, nil, fmt.Errorf("discover site: %w", err)
	}
	s := siteState{BaseURL: found.BaseURL, Sitemaps: found.Sitemaps, Feeds: found.Feeds, DiscoveredAt: c.now()}
	state, err := json.Marshal(s)
	if err != nil {
		return siteState{}, nil, fmt.Errorf("encode discovery of %s: %w", src.Details.Domain, err)
	}
	c.log.Debug("site discovered", "source_id", src.ID, "base_url", s.BaseURL, "sitemaps", len(s.Sitemaps), "feeds", len(s.Feeds))
	return s, state, nil
}
