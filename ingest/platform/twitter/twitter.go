// Package twitter reads Twitter/X accounts through the X API v2: the user
// lookup by username and the user's posts timeline, with a bearer token
// (app-only authentication).
package twitter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/platform"
)

// API is the X API v2.
type API struct {
	base   string
	token  platform.Secret
	client *platform.Client
}

// New returns the API at base (https://api.x.com) with an app's bearer
// token, sending through client.
func New(base string, token platform.Secret, client *platform.Client) *API {
	return &API{base: base, token: token, client: client}
}

// usernames are what X accepts; anything else cannot name an account.
var usernames = regexp.MustCompile(`^[A-Za-z0-9_]{1,15}$`)

type user struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Username        string `json:"username"`
	ProfileImageURL string `json:"profile_image_url"`
	Protected       bool   `json:"protected"`
}

// problem is an entry of a v2 answer's errors array, or a whole error
// answer (RFC 7807 problem details).
type problem struct {
	Title        string `json:"title"`
	Detail       string `json:"detail"`
	Type         string `json:"type"`
	ResourceType string `json:"resource_type"`
}

// Types of problem that mean the account cannot be read.
const (
	problemNotFound      = "https://api.twitter.com/2/problems/resource-not-found"
	problemNotAuthorized = "https://api.twitter.com/2/problems/not-authorized-for-resource"
)

// Lookup implements platform.Platform: GET /2/users/by/username/:username.
// A username X cannot have, one it does not know (or has suspended), and a
// protected account are not found.
func (a *API) Lookup(ctx context.Context, ref platform.Ref) (platform.Account, error) {
	if !usernames.MatchString(ref.Handle) {
		return platform.Account{}, &platform.NotFound{Reason: "no X account can have this username"}
	}
	q := url.Values{"user.fields": {"name,username,profile_image_url,protected"}}
	var out struct {
		Data   *user     `json:"data"`
		Errors []problem `json:"errors"`
	}
	if err := a.get(ctx, "/2/users/by/username/"+url.PathEscape(ref.Handle), q, &out); err != nil {
		return platform.Account{}, err
	}
	if out.Data == nil {
		if unreadable(out.Errors) {
			return platform.Account{}, &platform.NotFound{Reason: "the X account does not exist or is suspended"}
		}
		return platform.Account{}, fmt.Errorf("twitter user lookup: no user and no known error: %s", titles(out.Errors))
	}
	if out.Data.Protected {
		return platform.Account{}, &platform.NotFound{Reason: "the X account is protected"}
	}
	return account(*out.Data), nil
}

func account(u user) platform.Account {
	name := strings.TrimSpace(u.Name)
	if strings.EqualFold(name, u.Username) {
		name = ""
	}
	return platform.Account{ID: u.ID, Username: u.Username, Name: name, AvatarURL: u.ProfileImageURL}
}

type tweet struct {
	ID               string    `json:"id"`
	Text             string    `json:"text"`
	CreatedAt        time.Time `json:"created_at"`
	ReferencedTweets []struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"referenced_tweets"`
	Attachments struct {
		MediaKeys []string `json:"media_keys"`
	} `json:"attachments"`
	// NoteTweet holds the whole text of a post longer than 280
	// characters, whose text is cut.
	NoteTweet *struct {
		Text string `json:"text"`
	} `json:"note_tweet"`
}

type media struct {
	MediaKey        string `json:"media_key"`
	Type            string `json:"type"`
	URL             string `json:"url"`
	PreviewImageURL string `json:"preview_image_url"`
	Variants        []struct {
		BitRate     int    `json:"bit_rate"`
		ContentType string `json:"content_type"`
		URL         string `json:"url"`
	} `json:"variants"`
}

// pageSize is the most posts one timeline request returns.
const pageSize = "100"

// Posts implements platform.Platform: GET /2/users/:id/tweets with
// start_time, newest first, paged by next_token. Entries that could not
// be resolved (a quoted post since deleted) come as partial errors beside
// the data and are ignored.
func (a *API) Posts(ctx context.Context, acct platform.Account, since time.Time, cursor string) (platform.Page, error) {
	q := url.Values{
		"max_results":  {pageSize},
		"tweet.fields": {"created_at,referenced_tweets,attachments,note_tweet"},
		"expansions":   {"attachments.media_keys"},
		"media.fields": {"url,preview_image_url,type,variants"},
	}
	if !since.IsZero() {
		q.Set("start_time", since.UTC().Format(time.RFC3339))
	}
	if cursor != "" {
		q.Set("pagination_token", cursor)
	}
	var out struct {
		Data     []tweet `json:"data"`
		Includes struct {
			Media []media `json:"media"`
		} `json:"includes"`
		Meta struct {
			NextToken string `json:"next_token"`
		} `json:"meta"`
		Errors []problem `json:"errors"`
	}
	if err := a.get(ctx, "/2/users/"+url.PathEscape(acct.ID)+"/tweets", q, &out); err != nil {
		return platform.Page{}, err
	}
	if len(out.Data) == 0 && unreadable(out.Errors) {
		return platform.Page{}, &platform.NotFound{Reason: "the X account's posts cannot be read: " + titles(out.Errors)}
	}
	byKey := map[string]media{}
	for _, m := range out.Includes.Media {
		byKey[m.MediaKey] = m
	}
	page := platform.Page{Next: out.Meta.NextToken}
	for _, t := range out.Data {
		page.Posts = append(page.Posts, post(t, acct, byKey))
	}
	return page, nil
}

func post(t tweet, acct platform.Account, byKey map[string]media) platform.Post {
	text := t.Text
	if t.NoteTweet != nil && t.NoteTweet.Text != "" {
		text = t.NoteTweet.Text
	}
	p := platform.Post{
		Platform: domain.SourceTwitter, ID: t.ID, Subtype: subtype(t),
		URL: PermalinkURL(acct.Username, t.ID), Text: text, PublishedAt: t.CreatedAt.UTC(), Account: acct,
	}
	for _, k := range t.Attachments.MediaKeys {
		m, ok := byKey[k]
		if !ok {
			continue
		}
		switch m.Type {
		case "photo":
			p.MediaURL, p.ImageURL = m.URL, m.URL
		default: // video, animated_gif: the best MP4, shown by its preview
			p.MediaURL, p.ImageURL = bestVariant(m), m.PreviewImageURL
		}
		break
	}
	return p
}

// subtype reads what a post is from the posts it references: a repost
// (retweeted), a quote, a reply, else an entry of its own.
func subtype(t tweet) string {
	kinds := map[string]bool{}
	for _, r := range t.ReferencedTweets {
		kinds[r.Type] = true
	}
	switch {
	case kinds["retweeted"]:
		return "reshare"
	case kinds["quoted"]:
		return "quote"
	case kinds["replied_to"]:
		return "reply"
	}
	return "entry"
}

func bestVariant(m media) string {
	best, rate := "", -1
	for _, v := range m.Variants {
		if v.ContentType == "video/mp4" && v.BitRate > rate {
			best, rate = v.URL, v.BitRate
		}
	}
	return best
}

// PermalinkURL is a post's canonical address, the same whichever provider
// listed it: x.com, the lower-cased username, the post id.
func PermalinkURL(username, id string) string {
	return "https://x.com/" + strings.ToLower(username) + "/status/" + id
}

// get sends an authenticated GET and decodes a 200. Any other status is
// an APIError carrying the problem's title and detail.
func (a *API) get(ctx context.Context, path string, q url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, platform.Endpoint(a.base, path, q), nil)
	if err != nil {
		return fmt.Errorf("twitter request %s: %w", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token.Reveal())
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		var p problem
		_ = json.Unmarshal(resp.Body, &p)
		return &platform.APIError{Platform: "twitter", Status: resp.Status, Code: p.Title, Message: p.Detail}
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fmt.Errorf("twitter %s: decode answer: %w", path, err)
	}
	return nil
}

// unreadable reports whether the errors say the account cannot be read:
// the user is not found, suspended, or not to be seen (protected). Errors
// about other resources (a referenced post since deleted) do not count.
func unreadable(errs []problem) bool {
	for _, e := range errs {
		if e.ResourceType == "user" && (e.Type == problemNotFound || e.Type == problemNotAuthorized) {
			return true
		}
	}
	return false
}

func titles(errs []problem) string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Title)
	}
	return strings.Join(out, ", ")
}
