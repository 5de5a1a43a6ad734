// Package instagram reads Instagram professional accounts through the
// Graph API's business discovery: the caller's own Instagram professional
// account, connected to a Facebook Page (its id, and a user access token
// of Facebook Login with instagram_basic and pages_read_engagement), asks
// for another account's profile and media by username. Only business and
// creator accounts can be discovered; personal and private accounts
// answer as not found.
package instagram

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/platform"
	"github.com/feedsvc/feedsvc/ingest/platform/graph"
)

// API is business discovery through the caller's business account.
type API struct {
	graph      *graph.API
	businessID string
}

// New returns the API of the caller's business account businessID.
func New(g *graph.API, businessID string) *API {
	return &API{graph: g, businessID: businessID}
}

// usernames are what Instagram accepts.
var usernames = regexp.MustCompile(`^[A-Za-z0-9._]{1,30}$`)

// pageSize is how many media one request asks for.
const pageSize = 50

const mediaFields = "id,caption,media_type,media_product_type,media_url,thumbnail_url,permalink,timestamp,shortcode"

type profile struct {
	ID                string `json:"id"`
	Username          string `json:"username"`
	Name              string `json:"name"`
	ProfilePictureURL string `json:"profile_picture_url"`
	Media             struct {
		Data   []media      `json:"data"`
		Paging graph.Paging `json:"paging"`
	} `json:"media"`
}

type media struct {
	ID               string `json:"id"`
	Caption          string `json:"caption"`
	MediaType        string `json:"media_type"`
	MediaProductType string `json:"media_product_type"`
	MediaURL         string `json:"media_url"`
	ThumbnailURL     string `json:"thumbnail_url"`
	Permalink        string `json:"permalink"`
	Timestamp        string `json:"timestamp"`
	Shortcode        string `json:"shortcode"`
}

// Lookup implements platform.Platform: the profile fields of business
// discovery.
func (a *API) Lookup(ctx context.Context, ref platform.Ref) (platform.Account, error) {
	if !usernames.MatchString(ref.Handle) {
		return platform.Account{}, &platform.NotFound{Reason: "no Instagram account can have this username"}
	}
	p, err := a.discover(ctx, ref.Handle, "id,username,name,profile_picture_url")
	if err != nil {
		return platform.Account{}, err
	}
	return account(p), nil
}

func account(p profile) platform.Account {
	name := strings.TrimSpace(p.Name)
	if strings.EqualFold(name, p.Username) {
		name = ""
	}
	return platform.Account{ID: p.ID, Username: p.Username, Name: name, AvatarURL: p.ProfilePictureURL}
}

// Posts implements platform.Platform: the account's media, newest first,
// paged by the after cursor of the media edge. Business discovery has no
// date filter, so paging stops at the first page reaching before since.
func (a *API) Posts(ctx context.Context, acct platform.Account, since time.Time, cursor string) (platform.Page, error) {
	edge := fmt.Sprintf("media.limit(%d)", pageSize)
	if cursor != "" {
		edge += ".after(" + cursor + ")"
	}
	p, err := a.discover(ctx, acct.Username, "id,username,"+edge+"{"+mediaFields+"}")
	if err != nil {
		return platform.Page{}, err
	}
	var page platform.Page
	reached := false
	for _, m := range p.Media.Data {
		post, err := a.post(m, acct)
		if err != nil {
			return platform.Page{}, err
		}
		reached = reached || post.PublishedAt.Before(since)
		page.Posts = append(page.Posts, post)
	}
	if !reached {
		page.Next = p.Media.Paging.NextCursor()
	}
	return page, nil
}

// discover asks for fields of the username's profile.
func (a *API) discover(ctx context.Context, username, fields string) (profile, error) {
	q := url.Values{"fields": {"business_discovery.username(" + username + "){" + fields + "}"}}
	var out struct {
		BusinessDiscovery *profile `json:"business_discovery"`
	}
	err := a.graph.Get(ctx, "/"+url.PathEscape(a.businessID), q, &out)
	if errors.Is(err, platform.ErrNotFound) {
		return profile{}, &platform.NotFound{Reason: "no public Instagram business or creator account has this username"}
	}
	if err != nil {
		return profile{}, err
	}
	if out.BusinessDiscovery == nil {
		return profile{}, fmt.Errorf("instagram business discovery answered no profile")
	}
	return *out.BusinessDiscovery, nil
}

func (a *API) post(m media, acct platform.Account) (platform.Post, error) {
	published, err := graph.Time(m.Timestamp)
	if err != nil {
		return platform.Post{}, fmt.Errorf("instagram media %s: timestamp %q: %w", m.ID, m.Timestamp, err)
	}
	p := platform.Post{
		Platform: domain.SourceInstagram, ID: m.ID, Code: cmp.Or(m.Shortcode, ShortcodeOf(m.Permalink)),
		Subtype: "post", Text: m.Caption, MediaURL: m.MediaURL, ThumbnailURL: m.ThumbnailURL,
		PublishedAt: published, Account: acct,
	}
	if m.MediaProductType == "REELS" {
		p.Subtype = "reel"
	}
	p.URL = cmp.Or(PermalinkURL(p.Subtype, p.Code), m.Permalink)
	p.ImageURL = m.MediaURL
	if m.MediaType == "VIDEO" {
		p.ImageURL = m.ThumbnailURL
	}
	return p, nil
}

var shortcodes = regexp.MustCompile(`instagram\.com/(?:[A-Za-z0-9._]+/)?(?:p|reel|reels|tv)/([A-Za-z0-9_-]+)`)

// shortcodeOf reads the shortcode of a permalink.
func ShortcodeOf(permalink string) string {
	if m := shortcodes.FindStringSubmatch(permalink); m != nil {
		return m[1]
	}
	return ""
}

// PermalinkURL is a post's canonical address, the same whichever provider
// listed it: /p/ for posts, /reel/ for reels; "" without a shortcode.
func PermalinkURL(subtype, code string) string {
	if code == "" {
		return ""
	}
	if subtype == "reel" {
		return "https://www.instagram.com/reel/" + code + "/"
	}
	return "https://www.instagram.com/p/" + code + "/"
}
