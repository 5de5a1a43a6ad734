package web

import "encoding/json"

// DiscoveredFeeds are the feeds a site's kept discovery (its connector
// state) found, in the order the site listed them; none when the state is
// not a discovery.
func DiscoveredFeeds(state json.RawMessage) []string {
	var s siteState
	if json.Unmarshal(state, &s) != nil {
		return nil
	}
	return s.Feeds
}
