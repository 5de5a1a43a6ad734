package social

import (
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/platform"
	"github.com/feedsvc/feedsvc/platform/facebook"
	"github.com/feedsvc/feedsvc/platform/graph"
	"github.com/feedsvc/feedsvc/platform/instagram"
	"github.com/feedsvc/feedsvc/platform/tiktok"
	"github.com/feedsvc/feedsvc/platform/twitter"
)

// Providers builds the provider of each platform the settings give one:
// its official API when its credentials are set. Each provider has a
// client of its own, so that each platform's budget and back-off are its
// own; one Providers per process, shared by the API (lookups) and the
// crawler.
func Providers(s platform.Settings, allowPrivateNetworks bool) map[domain.SourceType]platform.Platform {
	client := func(name string) *platform.Client {
		return platform.NewClient(name, platform.ClientOptions{
			RequestsPerMinute: s.Budget(name), AllowPrivateNetworks: allowPrivateNetworks,
		})
	}
	out := map[domain.SourceType]platform.Platform{}
	if s.APIConfigured(domain.SourceTwitter) {
		out[domain.SourceTwitter] = twitter.New(s.TwitterAPIURL, s.TwitterBearerToken, client("twitter"))
	}
	if s.APIConfigured(domain.SourceInstagram) {
		g := graph.New(s.InstagramAPIURL, s.InstagramAccessToken, client("instagram"))
		out[domain.SourceInstagram] = instagram.New(g, s.InstagramBusinessID)
	}
	if s.APIConfigured(domain.SourceTikTok) {
		out[domain.SourceTikTok] = tiktok.New(s.TikTokAPIURL, s.TikTokClientKey, s.TikTokClientSecret, client("tiktok"))
	}
	if s.APIConfigured(domain.SourceFacebook) {
		out[domain.SourceFacebook] = facebook.New(graph.New(s.FacebookAPIURL, s.FacebookAccessToken, client("facebook")))
	}
	return out
}
