// Package tiktok reads TikTok accounts through the Research API: user info
// by username and the video query by username and creation date, with a
// client access token the package fetches (client credentials grant) and
// fetches again before it expires or when the API refuses it.
package tiktok

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/platform"
)

// API is the Research API of one research client.
type API struct {
	base      string
	clientKey string
	secret    platform.Secret
	client    *platform.Client
	now       func() time.Time

	mu      sync.Mutex
	token   platform.Secret
	expires time.Time
}

// New returns the API at base (https://open.tiktokapis.com) for the
// research client clientKey.
func New(base, clientKey string, secret platform.Secret, client *platform.Client) *API {
	return &API{base: base, clientKey: clientKey, secret: secret, client: client, now: time.Now}
}

// usernames are what TikTok accepts.
var usernames = regexp.MustCompile(`^[A-Za-z0-9._]{2,24}$`)

const (
	userFields  = "display_name,bio_description,avatar_url,is_verified,follower_count,following_count,likes_count,video_count"
	videoFields = "id,video_description,create_time,username"
	// maxCount is the most videos one query returns.
	maxCount = 100
	// maxSpan is the longest date range one video query may ask for.
	maxSpan = 30 * 24 * time.Hour
	// tokenMargin: a token this close to its expiry is fetched again.
	tokenMargin = 5 * time.Minute
)

// apiError is the error block every Research API answer carries; code
// "ok" is success.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	LogID   string `json:"log_id"`
}

// Lookup implements platform.Platform: POST /v2/research/user/info/. A
// username TikTok does not know, or whose account is private or otherwise
// not open to research, answers invalid_params.
func (a *API) Lookup(ctx context.Context, ref platform.Ref) (platform.Account, error) {
	if !usernames.MatchString(ref.Handle) {
		return platform.Account{}, &platform.NotFound{Reason: "no TikTok account can have this username"}
	}
	var out struct {
		Data struct {
			DisplayName string `json:"display_name"`
			AvatarURL   string `json:"avatar_url"`
		} `json:"data"`
	}
	err := a.call(ctx, "/v2/research/user/info/", userFields, map[string]any{"username": ref.Handle}, &out)
	if isInvalidParams(err) {
		return platform.Account{}, &platform.NotFound{Reason: "the TikTok account does not exist or is private"}
	}
	if err != nil {
		return platform.Account{}, err
	}
	name := strings.TrimSpace(out.Data.DisplayName)
	if strings.EqualFold(name, ref.Handle) {
		name = ""
	}
	// The Research API names accounts by username alone; it is their id.
	return platform.Account{ID: ref.Handle, Username: ref.Handle, Name: name, AvatarURL: out.Data.AvatarURL}, nil
}

type video struct {
	ID          json.Number `json:"id"`
	Description string      `json:"video_description"`
	CreateTime  int64       `json:"create_time"`
	Username    string      `json:"username"`
}

// Posts implements platform.Platform: POST /v2/research/video/query/ for
// the account's videos created from since's day to today (UTC days, at
// most 30 of them: the worker never looks further back than 14), paged by
// cursor within the query's search_id.
func (a *API) Posts(ctx context.Context, acct platform.Account, since time.Time, cursor string) (platform.Page, error) {
	today := a.now().UTC()
	start := since.UTC()
	if earliest := today.Add(-maxSpan + 24*time.Hour); start.Before(earliest) {
		start = earliest
	}
	query := map[string]any{
		"query": map[string]any{"and": []any{
			map[string]any{"operation": "EQ", "field_name": "username", "field_values": []string{acct.Username}},
		}},
		"start_date": start.Format("20060102"), "end_date": today.Format("20060102"),
		"max_count": maxCount, "cursor": 0,
	}
	if cursor != "" {
		n, searchID, ok := strings.Cut(cursor, ":")
		pos, err := strconv.Atoi(n)
		if !ok || err != nil {
			return platform.Page{}, fmt.Errorf("tiktok: malformed cursor %q", cursor)
		}
		query["cursor"], query["search_id"] = pos, searchID
	}
	var out struct {
		Data struct {
			Videos   []video `json:"videos"`
			Cursor   int     `json:"cursor"`
			HasMore  bool    `json:"has_more"`
			SearchID string  `json:"search_id"`
		} `json:"data"`
	}
	if err := a.call(ctx, "/v2/research/video/query/", videoFields, query, &out); err != nil {
		return platform.Page{}, err
	}
	var page platform.Page
	for _, v := range out.Data.Videos {
		page.Posts = append(page.Posts, platform.Post{
			Platform: domain.SourceTikTok, ID: v.ID.String(), Subtype: "video",
			URL: PermalinkURL(acct.Username, v.ID.String()), Text: v.Description,
			PublishedAt: time.Unix(v.CreateTime, 0).UTC(), Account: acct,
		})
	}
	if out.Data.HasMore {
		page.Next = strconv.Itoa(out.Data.Cursor) + ":" + out.Data.SearchID
	}
	return page, nil
}

// PermalinkURL is a video's canonical address, the same whichever provider
// listed it.
func PermalinkURL(username, id string) string {
	return "https://www.tiktok.com/@" + strings.ToLower(username) + "/video/" + id
}

// failure is a Research API answer whose error code is not "ok".
type failure struct {
	status int
	apiError
}

func (f *failure) Error() string {
	return fmt.Sprintf("tiktok answered %d %s: %s (log id %s)", f.status, f.Code, f.Message, f.LogID)
}

// Permanent: the request itself was refused.
func (f *failure) Permanent() bool { return f.status >= 400 && f.status < 500 }

func isInvalidParams(err error) bool {
	f, ok := err.(*failure)
	return ok && f.Code == "invalid_params"
}

// call POSTs body as JSON to path with the fields to return, with the
// client token; a token the API refuses is fetched again once.
func (a *API) call(ctx context.Context, path, fields string, body any, out any) error {
	err := a.post(ctx, path, fields, body, out)
	if f, ok := err.(*failure); ok && f.Code == "access_token_invalid" {
		a.forgetToken()
		err = a.post(ctx, path, fields, body, out)
	}
	return err
}

func (a *API) post(ctx context.Context, path, fields string, body any, out any) error {
	token, err := a.accessToken(ctx)
	if err != nil {
		return err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("tiktok %s: encode request: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, platform.Endpoint(a.base, path, url.Values{"fields": {fields}}), bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("tiktok request %s: %w", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+token.Reveal())
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	var env struct {
		Error apiError `json:"error"`
	}
	_ = json.Unmarshal(resp.Body, &env)
	if resp.Status != http.StatusOK || env.Error.Code != "ok" {
		return &failure{status: resp.Status, apiError: env.Error}
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fmt.Errorf("tiktok %s: decode answer: %w", path, err)
	}
	return nil
}

// accessToken is the client token, fetched (POST /v2/oauth/token/, client
// credentials) when there is none or it is about to expire.
func (a *API) accessToken(ctx context.Context) (platform.Secret, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token.Set() && a.now().Before(a.expires.Add(-tokenMargin)) {
		return a.token, nil
	}
	form := url.Values{"client_key": {a.clientKey}, "client_secret": {a.secret.Reveal()}, "grant_type": {"client_credentials"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, platform.Endpoint(a.base, "/v2/oauth/token/", nil), strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("tiktok token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := a.client.Do(req)
	if err != nil {
		return "", err
	}
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(resp.Body, &out)
	if resp.Status != http.StatusOK || out.AccessToken == "" {
		return "", &platform.APIError{Platform: "tiktok", Status: resp.Status, Code: out.Error, Message: out.Description}
	}
	a.token, a.expires = platform.Secret(out.AccessToken), a.now().Add(time.Duration(out.ExpiresIn)*time.Second)
	return a.token, nil
}

func (a *API) forgetToken() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.token = ""
}
