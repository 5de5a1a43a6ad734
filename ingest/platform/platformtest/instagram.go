package platformtest

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Instagram is a fake of the Graph API's Instagram business discovery
// (developers.facebook.com/docs/instagram-platform/instagram-graph-api/
// reference/ig-user/business_discovery): GET /{ig-user-id}?fields=
// business_discovery.username(u){…,media.limit(n).after(c){…}}, answering
// only the fields asked for, with cursor paging, error 110/2207013 for a
// username that is no public professional account, and Graph's rate
// limits.
type Instagram struct {
	*httptest.Server
	graphServer
	// BusinessID is the caller's business account, the path it answers.
	BusinessID string
	// MaxLimit caps a media page below the limit asked for, as Graph may,
	// so tests see paging.
	MaxLimit int

	mu       sync.Mutex
	accounts []*InstagramAccount
}

// InstagramAccount is an account of the fake.
type InstagramAccount struct {
	ID, Username, Name, ProfilePictureURL string
	// Personal accounts (and private ones, which are personal) cannot be
	// discovered.
	Personal bool
	Media    []InstagramMedia
}

// InstagramMedia is a post or reel.
type InstagramMedia struct {
	ID, Caption, MediaType, MediaProductType, MediaURL, ThumbnailURL, Shortcode string
	Timestamp                                                                   time.Time
}

// NewInstagram starts the fake; it stops when the test ends.
func NewInstagram(t interface{ Cleanup(func()) }, token, businessID string) *Instagram {
	f := &Instagram{graphServer: graphServer{token: token}, BusinessID: businessID}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// AddAccount adds an account.
func (f *Instagram) AddAccount(a *InstagramAccount) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accounts = append(f.accounts, a)
}

// Publish adds media to an account.
func (f *Instagram) Publish(username string, m InstagramMedia) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.accounts {
		if a.Username == username {
			a.Media = append(a.Media, m)
		}
	}
}

// Delete removes media from its account, as a deleted post is.
func (f *Instagram) Delete(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.accounts {
		a.Media = slices.DeleteFunc(a.Media, func(m InstagramMedia) bool { return m.ID == id })
	}
}

func (f *Instagram) serve(w http.ResponseWriter, r *http.Request) {
	if !f.admit(w, r, "instagram") {
		return
	}
	if strings.TrimPrefix(r.URL.Path, "/") != f.BusinessID {
		graphError(w, http.StatusBadRequest, 100, 33, "GraphMethodException",
			"Unsupported get request. Object with ID '"+strings.TrimPrefix(r.URL.Path, "/")+"' does not exist, cannot be loaded due to missing permissions, or does not support this operation.", nil)
		return
	}
	var discovery *edge
	for _, fl := range fieldList(r.URL.Query().Get("fields")) {
		if e := parseEdge(fl); e.name == "business_discovery" {
			discovery = &e
		}
	}
	if discovery == nil {
		writeJSON(w, http.StatusOK, map[string]any{"id": f.BusinessID})
		return
	}
	username := discovery.modifiers["username"]
	f.mu.Lock()
	var acct *InstagramAccount
	for _, a := range f.accounts {
		if strings.EqualFold(a.Username, username) {
			acct = a
		}
	}
	var media []InstagramMedia
	if acct != nil {
		media = slices.Clone(acct.Media)
	}
	f.mu.Unlock()
	if acct == nil || acct.Personal {
		graphError(w, http.StatusBadRequest, 110, 2207013, "OAuthException", "Invalid user id", map[string]any{
			"is_transient": false, "error_user_title": "Cannot find User",
			"error_user_msg": "The user with username: " + username + " cannot be found.",
		})
		return
	}
	profile := pick(map[string]any{
		"id": acct.ID, "username": acct.Username, "name": acct.Name, "profile_picture_url": acct.ProfilePictureURL,
	}, discovery.fields)
	for _, fl := range discovery.fields {
		if e := parseEdge(fl); e.name == "media" {
			profile["media"] = f.mediaPage(media, e)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"business_discovery": profile, "id": f.BusinessID})
}

// mediaPage is one page of media, newest first, with Graph's cursors.
func (f *Instagram) mediaPage(media []InstagramMedia, e edge) map[string]any {
	slices.SortFunc(media, func(a, b InstagramMedia) int { return b.Timestamp.Compare(a.Timestamp) })
	limit := 25
	if n, err := strconv.Atoi(e.modifiers["limit"]); err == nil && n > 0 {
		limit = min(n, 100)
	}
	if f.MaxLimit > 0 {
		limit = min(limit, f.MaxLimit)
	}
	from := 0
	if c := e.modifiers["after"]; c != "" {
		b, _ := base64.StdEncoding.DecodeString(c)
		from, _ = strconv.Atoi(strings.TrimPrefix(string(b), "media:"))
	}
	from = min(from, len(media))
	to := min(from+limit, len(media))
	var data []any
	for _, m := range media[from:to] {
		permalink := "https://www.instagram.com/p/" + m.Shortcode + "/"
		if m.MediaProductType == "REELS" {
			permalink = "https://www.instagram.com/reel/" + m.Shortcode + "/"
		}
		data = append(data, pick(map[string]any{
			"id": m.ID, "caption": m.Caption, "media_type": m.MediaType, "media_product_type": m.MediaProductType,
			"media_url": m.MediaURL, "thumbnail_url": m.ThumbnailURL, "permalink": permalink,
			"timestamp": m.Timestamp.UTC().Format("2006-01-02T15:04:05-0700"), "shortcode": m.Shortcode,
		}, e.fields))
	}
	cursor := func(i int) string { return base64.StdEncoding.EncodeToString([]byte("media:" + strconv.Itoa(i))) }
	paging := map[string]any{"cursors": map[string]any{"before": cursor(from), "after": cursor(to)}}
	if to < len(media) {
		// The real next link carries the access token; the client must
		// never follow or log it.
		paging["next"] = f.URL + "/" + f.BusinessID + "?access_token=" + f.token + "&fields=next-page"
	}
	return map[string]any{"data": nonNilSlice(data), "paging": paging}
}

func nonNilSlice(s []any) []any {
	if s == nil {
		return []any{}
	}
	return s
}
