// Package rsshub reads platform accounts through a self-hosted RSSHub
// instance (docs.rsshub.app), for operators without API access: each
// account is an RSS feed RSSHub builds from the platform's public pages,
// read with the service's feed parser (extract.Feed). A feed gives a
// post's link, text, first image and date; what it cannot give (display
// names, avatars, thumbnails, most platform ids) is left out. Post
// addresses are written the way the platform's API provider writes them,
// so a post is the same article whichever provider found it.
package rsshub

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/extract"
	"github.com/feedsvc/feedsvc/ingest/platform"
	"github.com/feedsvc/feedsvc/ingest/platform/instagram"
	"github.com/feedsvc/feedsvc/ingest/platform/tiktok"
	"github.com/feedsvc/feedsvc/ingest/platform/twitter"
)

// Feed is one platform read through RSSHub.
type Feed struct {
	base     string
	platform domain.SourceType
	client   *platform.Client
}

// New returns the provider of platform t through the RSSHub at base.
func New(base string, t domain.SourceType, client *platform.Client) *Feed {
	return &Feed{base: base, platform: t, client: client}
}

// handles are what RSSHub routes take as an account.
var handles = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

// route is RSSHub's path of an account's feed: /twitter/user/:id,
// /instagram/user/:key, /tiktok/user/:user (with its @), /facebook/page/:id.
func (f *Feed) route(ref platform.Ref) (string, error) {
	if !handles.MatchString(ref.Handle) {
		return "", &platform.NotFound{Reason: "no account can have this name"}
	}
	h := url.PathEscape(ref.Handle)
	switch f.platform {
	case domain.SourceTwitter:
		return "/twitter/user/" + h, nil
	case domain.SourceInstagram:
		return "/instagram/user/" + h, nil
	case domain.SourceTikTok:
		return "/tiktok/user/@" + h, nil
	case domain.SourceFacebook:
		if ref.Kind != "page" {
			return "", &platform.NotFound{Reason: fmt.Sprintf("Facebook %ss cannot be accessed: RSSHub reads only pages", ref.Kind)}
		}
		return "/facebook/page/" + h, nil
	}
	return "", fmt.Errorf("rsshub: no route for %s", f.platform)
}

// Lookup implements platform.Platform: the account exists when RSSHub
// builds its feed. RSSHub answers 404 for an account it cannot find.
func (f *Feed) Lookup(ctx context.Context, ref platform.Ref) (platform.Account, error) {
	path, err := f.route(ref)
	if err != nil {
		return platform.Account{}, err
	}
	if _, err := f.entries(ctx, path); err != nil {
		return platform.Account{}, err
	}
	a := platform.Account{ID: ref.Handle, Username: ref.Handle}
	if f.platform == domain.SourceFacebook {
		a.Kind = ref.Kind
	}
	return a, nil
}

// Posts implements platform.Platform: the feed's items, all on one page.
func (f *Feed) Posts(ctx context.Context, acct platform.Account, _ time.Time, _ string) (platform.Page, error) {
	path, err := f.route(platform.Ref{Handle: acct.Username, Kind: cmp.Or(acct.Kind, "page")})
	if err != nil {
		return platform.Page{}, err
	}
	entries, err := f.entries(ctx, path)
	if err != nil {
		return platform.Page{}, err
	}
	var page platform.Page
	for _, e := range entries {
		if p, ok := f.post(e, acct); ok {
			page.Posts = append(page.Posts, p)
		}
	}
	return page, nil
}

func (f *Feed) entries(ctx context.Context, path string) ([]extract.FeedEntry, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, platform.Endpoint(f.base, path, nil), nil)
	if err != nil {
		return nil, fmt.Errorf("rsshub request %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/rss+xml, application/atom+xml, application/xml;q=0.9")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.Status == http.StatusNotFound:
		return nil, &platform.NotFound{Reason: "RSSHub finds no such account"}
	case resp.Status != http.StatusOK:
		return nil, &platform.APIError{Platform: "rsshub", Status: resp.Status}
	}
	entries, err := extract.Feed(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("rsshub %s: %w", path, err)
	}
	return entries, nil
}

var (
	statusID    = regexp.MustCompile(`/status(?:es)?/(\d+)`)
	videoID     = regexp.MustCompile(`/video/(\d+)`)
	facebookIDs = regexp.MustCompile(`(?:story_fbid=|/posts/|/videos/|/photos/[^/]+/|fbid=)([A-Za-z0-9]+)`)
)

// post is a feed entry as a post of the account, its address written as
// the API provider writes it; false for an entry that is no post.
func (f *Feed) post(e extract.FeedEntry, acct platform.Account) (platform.Post, bool) {
	p := platform.Post{
		Platform: f.platform, Text: cmp.Or(e.Description, e.Title), MediaURL: e.ImageURL, ImageURL: e.ImageURL,
		PublishedAt: e.PublishedAt, Account: acct,
	}
	switch f.platform {
	case domain.SourceTwitter:
		m := statusID.FindStringSubmatch(e.URL)
		if m == nil {
			return platform.Post{}, false
		}
		p.ID, p.URL, p.Subtype = m[1], twitter.PermalinkURL(acct.Username, m[1]), tweetSubtype(e.Title)
	case domain.SourceInstagram:
		code := instagram.ShortcodeOf(e.URL)
		if code == "" {
			return platform.Post{}, false
		}
		p.Subtype = "post"
		if strings.Contains(e.URL, "/reel") {
			p.Subtype = "reel"
		}
		p.ID, p.Code, p.URL = code, code, instagram.PermalinkURL(p.Subtype, code)
	case domain.SourceTikTok:
		m := videoID.FindStringSubmatch(e.URL)
		if m == nil {
			return platform.Post{}, false
		}
		p.ID, p.URL, p.Subtype = m[1], tiktok.PermalinkURL(acct.Username, m[1]), "video"
		p.MediaURL = ""
		p.ThumbnailURL = e.ImageURL
	case domain.SourceFacebook:
		p.ID, p.URL, p.Subtype = e.URL, e.URL, "post"
		if m := facebookIDs.FindStringSubmatch(e.URL); m != nil {
			p.ID = m[1]
		}
	}
	return p, true
}

// tweetSubtype reads what RSSHub's title says: "RT …" a repost, "Re …" a
// reply; RSSHub does not mark quotes.
func tweetSubtype(title string) string {
	switch {
	case strings.HasPrefix(title, "RT "):
		return "reshare"
	case strings.HasPrefix(title, "Re "):
		return "reply"
	}
	return "entry"
}
