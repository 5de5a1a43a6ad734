package social

import (
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/platform"
	"github.com/feedsvc/feedsvc/ingest/platform/facebook"
	"github.com/feedsvc/feedsvc/ingest/platform/graph"
	"github.com/feedsvc/feedsvc/ingest/platform/instagram"
	"github.com/feedsvc/feedsvc/ingest/platform/rsshub"
	"github.com/feedsvc/feedsvc/ingest/platform/tiktok"
	"github.com/feedsvc/feedsvc/ingest/platform/twitter"
)

// Providers builds the provider of each platform the settings give one:
// its official API when its credentials are set, else the RSSHub instance
// when one is set. Each API has a client of its own, so that each
// platform's budget and back-off are its own; the platforms read through
// RSSHub share one, since they share its budget. One Providers per
// process, shared by the API (lookups) and the crawler.
func Providers(s platform.Settings, allowPrivateNetworks bool) map[domain.SourceType]platform.Platform {
	client := func(name string) *platform.Client {
		return platform.NewClient(name, platform.ClientOptions{
			RequestsPerMinute: s.Budget(name), AllowPrivateNetworks: allowPrivateNetworks,
		})
	}
	apis := map[domain.SourceType]func() platform.Platform{
		domain.SourceTwitter: func() platform.Platform {
			return twitter.New(s.TwitterAPIURL, s.TwitterBearerToken, client("twitter"))
		},
		domain.SourceInstagram: func() platform.Platform {
			return instagram.New(graph.New(s.InstagramAPIURL, s.InstagramAccessToken, client("instagram")), s.InstagramBusinessID)
		},
		domain.SourceTikTok: func() platform.Platform {
			return tiktok.New(s.TikTokAPIURL, s.TikTokClientKey, s.TikTokClientSecret, client("tiktok"))
		},
		domain.SourceFacebook: func() platform.Platform {
			return facebook.New(graph.New(s.FacebookAPIURL, s.FacebookAccessToken, client("facebook")))
		},
	}
	var hub *platform.Client
	out := map[domain.SourceType]platform.Platform{}
	for t, api := range apis {
		switch {
		case s.APIConfigured(t):
			out[t] = api()
		case s.RSSHubURL != "":
			if hub == nil {
				hub = client("rsshub")
			}
			out[t] = rsshub.New(s.RSSHubURL, t, hub)
		}
	}
	return out
}
