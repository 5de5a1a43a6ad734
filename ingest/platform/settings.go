package platform

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/feedsvc/feedsvc/domain"
)

// Default API addresses. The paths under each are the platform's own, so
// a local fake of the API can stand in for the real one.
const (
	DefaultTwitterAPIURL   = "https://api.x.com"
	DefaultInstagramAPIURL = "https://graph.facebook.com/v21.0"
	DefaultTikTokAPIURL    = "https://open.tiktokapis.com"
	DefaultFacebookAPIURL  = "https://graph.facebook.com/v21.0"
)

// Settings are the operator's platform settings (docs/platforms.md and
// docs/operating.md). A platform's API is used when its credentials are set; else
// RSSHub, when RSSHubURL is; else the platform has no provider and its
// sources are refused.
type Settings struct {
	TwitterAPIURL      string
	TwitterBearerToken Secret

	InstagramAPIURL      string
	InstagramAccessToken Secret
	InstagramBusinessID  string

	TikTokAPIURL       string
	TikTokClientKey    string
	TikTokClientSecret Secret

	FacebookAPIURL      string
	FacebookAccessToken Secret

	// RSSHubURL is a self-hosted RSSHub instance, the provider of the
	// platforms without API credentials.
	RSSHubURL string

	// RequestsPerMinute is the request budget of each provider in this
	// process, by platform (and "rsshub"); missing means
	// DefaultRequestsPerMinute.
	RequestsPerMinute map[string]int
}

// budgetNames are the providers with a budget setting of their own.
var budgetNames = []string{"twitter", "instagram", "tiktok", "facebook", "rsshub"}

// SettingsFromEnv reads the settings through lookup (os.LookupEnv).
// Malformed values are errors, not defaults.
func SettingsFromEnv(lookup func(string) (string, bool)) (Settings, error) {
	get := func(key, def string) string {
		if v, ok := lookup(key); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		return def
	}
	s := Settings{
		TwitterAPIURL:        get("FEEDSVC_TWITTER_API_URL", DefaultTwitterAPIURL),
		TwitterBearerToken:   Secret(get("FEEDSVC_TWITTER_BEARER_TOKEN", "")),
		InstagramAPIURL:      get("FEEDSVC_INSTAGRAM_API_URL", DefaultInstagramAPIURL),
		InstagramAccessToken: Secret(get("FEEDSVC_INSTAGRAM_ACCESS_TOKEN", "")),
		InstagramBusinessID:  get("FEEDSVC_INSTAGRAM_BUSINESS_ID", ""),
		TikTokAPIURL:         get("FEEDSVC_TIKTOK_API_URL", DefaultTikTokAPIURL),
		TikTokClientKey:      get("FEEDSVC_TIKTOK_CLIENT_KEY", ""),
		TikTokClientSecret:   Secret(get("FEEDSVC_TIKTOK_CLIENT_SECRET", "")),
		FacebookAPIURL:       get("FEEDSVC_FACEBOOK_API_URL", DefaultFacebookAPIURL),
		FacebookAccessToken:  Secret(get("FEEDSVC_FACEBOOK_ACCESS_TOKEN", "")),
		RSSHubURL:            get("FEEDSVC_RSSHUB_URL", ""),
		RequestsPerMinute:    map[string]int{},
	}
	for key, v := range map[string]string{
		"FEEDSVC_TWITTER_API_URL": s.TwitterAPIURL, "FEEDSVC_INSTAGRAM_API_URL": s.InstagramAPIURL,
		"FEEDSVC_TIKTOK_API_URL": s.TikTokAPIURL, "FEEDSVC_FACEBOOK_API_URL": s.FacebookAPIURL, "FEEDSVC_RSSHUB_URL": s.RSSHubURL,
	} {
		if v == "" {
			continue
		}
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return Settings{}, fmt.Errorf("%s: not an http(s) URL without credentials", key)
		}
	}
	for _, name := range budgetNames {
		key := "FEEDSVC_" + strings.ToUpper(name) + "_REQUESTS_PER_MINUTE"
		v := get(key, "")
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Settings{}, fmt.Errorf("%s: %q is not a whole number of at least 1", key, v)
		}
		s.RequestsPerMinute[name] = n
	}
	return s, nil
}

// APIConfigured reports whether the platform's API credentials are set.
func (s Settings) APIConfigured(t domain.SourceType) bool {
	switch t {
	case domain.SourceTwitter:
		return s.TwitterBearerToken.Set()
	case domain.SourceInstagram:
		return s.InstagramAccessToken.Set() && s.InstagramBusinessID != ""
	case domain.SourceTikTok:
		return s.TikTokClientKey != "" && s.TikTokClientSecret.Set()
	case domain.SourceFacebook:
		return s.FacebookAccessToken.Set()
	}
	return false
}

// Needed names the settings that give a platform a provider, for the
// answer to a source of a platform that has none.
func Needed(t domain.SourceType) string {
	api := map[domain.SourceType]string{
		domain.SourceTwitter:   "FEEDSVC_TWITTER_BEARER_TOKEN",
		domain.SourceInstagram: "FEEDSVC_INSTAGRAM_ACCESS_TOKEN and FEEDSVC_INSTAGRAM_BUSINESS_ID",
		domain.SourceTikTok:    "FEEDSVC_TIKTOK_CLIENT_KEY and FEEDSVC_TIKTOK_CLIENT_SECRET",
		domain.SourceFacebook:  "FEEDSVC_FACEBOOK_ACCESS_TOKEN",
	}[t]
	return api + " (or FEEDSVC_RSSHUB_URL)"
}

// Budget is the provider's requests per minute.
func (s Settings) Budget(name string) int {
	if n := s.RequestsPerMinute[name]; n > 0 {
		return n
	}
	return DefaultRequestsPerMinute
}
