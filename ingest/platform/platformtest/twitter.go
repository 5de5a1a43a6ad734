package platformtest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Twitter is a fake of the X API v2 (docs.x.com): GET
// /2/users/by/username/:username and GET /2/users/:id/tweets, with bearer
// authentication, problem-details errors, partial errors beside data,
// next_token paging and the x-rate-limit-* headers on every answer.
type Twitter struct {
	*httptest.Server
	log
	// Token is the bearer token it accepts.
	Token string
	// PageSize caps a timeline page below max_results, so tests see paging.
	PageSize int

	mu    sync.Mutex
	users []*TwitterUser
}

// TwitterUser is an account of the fake.
type TwitterUser struct {
	ID, Username, Name, ProfileImageURL string
	Protected, Suspended                bool
	Tweets                              []Tweet
}

// Tweet is a post of a TwitterUser.
type Tweet struct {
	ID        string
	Text      string
	CreatedAt time.Time
	// LongText is the whole text of a post over 280 characters
	// (note_tweet); Text is then cut.
	LongText string
	// Retweeted, Quoted, RepliedTo name referenced posts.
	Retweeted, Quoted, RepliedTo string
	// QuotedDeleted: the quoted post was deleted, so the answer carries a
	// partial error about it.
	QuotedDeleted bool
	Media         []TwitterMedia
}

// TwitterMedia is an attachment of a Tweet.
type TwitterMedia struct {
	Key, Type, URL, PreviewImageURL string
	// MP4 variants by bit rate.
	Variants map[int]string
}

// NewTwitter starts the fake; it stops when the test ends.
func NewTwitter(t interface{ Cleanup(func()) }, token string) *Twitter {
	f := &Twitter{Token: token, PageSize: 100}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// AddUser adds an account.
func (f *Twitter) AddUser(u *TwitterUser) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users = append(f.users, u)
}

// Post adds a post to an account's timeline.
func (f *Twitter) Post(userID string, t Tweet) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, u := range f.users {
		if u.ID == userID {
			u.Tweets = append(u.Tweets, t)
		}
	}
}

var (
	byUsernamePath = regexp.MustCompile(`^/2/users/by/username/([^/]+)$`)
	tweetsPath     = regexp.MustCompile(`^/2/users/([^/]+)/tweets$`)
	validUsername  = regexp.MustCompile(`^[A-Za-z0-9_]{1,15}$`)
)

const (
	twitterRateLimit = 900
	problemBase      = "https://api.twitter.com/2/problems/"
)

func (f *Twitter) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.record(Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: string(body), At: time.Now()})
	reset := time.Now().Add(15 * time.Minute)
	if limited, at := f.limit(); limited {
		f.rateHeaders(w, 0, at)
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"title": "Too Many Requests", "detail": "Too Many Requests", "type": "about:blank", "status": 429})
		return
	}
	f.rateHeaders(w, twitterRateLimit-1, reset)
	if r.Header.Get("Authorization") != "Bearer "+f.Token {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"title": "Unauthorized", "type": "about:blank", "status": 401, "detail": "Unauthorized"})
		return
	}
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"title": "Method Not Allowed", "type": "about:blank", "status": 405})
		return
	}
	if m := byUsernamePath.FindStringSubmatch(r.URL.Path); m != nil {
		f.lookup(w, m[1])
		return
	}
	if m := tweetsPath.FindStringSubmatch(r.URL.Path); m != nil {
		f.timeline(w, r, m[1])
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"title": "Not Found", "type": "about:blank", "status": 404, "detail": "Not Found"})
}

func (f *Twitter) rateHeaders(w http.ResponseWriter, remaining int, reset time.Time) {
	w.Header().Set("x-rate-limit-limit", strconv.Itoa(twitterRateLimit))
	w.Header().Set("x-rate-limit-remaining", strconv.Itoa(remaining))
	w.Header().Set("x-rate-limit-reset", strconv.FormatInt(reset.Unix(), 10))
}

func (f *Twitter) lookup(w http.ResponseWriter, username string) {
	if !validUsername.MatchString(username) {
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"errors": []any{map[string]any{
				"parameters": map[string]any{"username": []string{username}},
				"message":    "The `username` query parameter value [" + username + "] does not match ^[A-Za-z0-9_]{1,15}$",
			}},
			"title": "Invalid Request", "detail": "One or more parameters to your request was invalid.",
			"type": problemBase + "invalid-request",
		})
		return
	}
	f.mu.Lock()
	u := f.userBy(func(u *TwitterUser) bool { return strings.EqualFold(u.Username, username) })
	f.mu.Unlock()
	switch {
	case u == nil:
		writeJSON(w, http.StatusOK, map[string]any{"errors": []any{map[string]any{
			"value": username, "detail": "Could not find user with username: [" + username + "].", "title": "Not Found Error",
			"resource_type": "user", "parameter": "username", "resource_id": username, "type": problemBase + "resource-not-found",
		}}})
	case u.Suspended:
		writeJSON(w, http.StatusOK, map[string]any{"errors": []any{map[string]any{
			"value": username, "detail": "User has been suspended: [" + username + "].", "title": "Forbidden",
			"resource_type": "user", "parameter": "username", "resource_id": username, "type": problemBase + "resource-not-found",
		}}})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{
			"id": u.ID, "name": u.Name, "username": u.Username, "profile_image_url": u.ProfileImageURL, "protected": u.Protected,
		}})
	}
}

func (f *Twitter) userBy(match func(*TwitterUser) bool) *TwitterUser {
	for _, u := range f.users {
		if match(u) {
			return u
		}
	}
	return nil
}

func (f *Twitter) timeline(w http.ResponseWriter, r *http.Request, id string) {
	q := r.URL.Query()
	f.mu.Lock()
	u := f.userBy(func(u *TwitterUser) bool { return u.ID == id })
	var tweets []Tweet
	if u != nil {
		tweets = slices.Clone(u.Tweets)
	}
	f.mu.Unlock()
	switch {
	case u == nil:
		writeJSON(w, http.StatusOK, map[string]any{"errors": []any{map[string]any{
			"value": id, "detail": "Could not find user with id: [" + id + "].", "title": "Not Found Error",
			"resource_type": "user", "parameter": "id", "resource_id": id, "type": problemBase + "resource-not-found",
		}}})
		return
	case u.Protected:
		writeJSON(w, http.StatusOK, map[string]any{"errors": []any{map[string]any{
			"value": id, "detail": "Sorry, you are not authorized to see the user with id: [" + id + "].", "title": "Authorization Error",
			"resource_type": "user", "parameter": "id", "resource_id": id, "type": problemBase + "not-authorized-for-resource",
		}}})
		return
	}
	maxResults := 10
	if v := q.Get("max_results"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 5 || n > 100 {
			writeJSON(w, http.StatusBadRequest, map[string]any{"title": "Invalid Request", "type": problemBase + "invalid-request",
				"detail": "One or more parameters to your request was invalid.",
				"errors": []any{map[string]any{"message": "The `max_results` query parameter value [" + v + "] is not between 5 and 100"}}})
			return
		}
		maxResults = n
	}
	if start := q.Get("start_time"); start != "" {
		since, err := time.Parse(time.RFC3339, start)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"title": "Invalid Request", "type": problemBase + "invalid-request",
				"detail": "One or more parameters to your request was invalid."})
			return
		}
		tweets = slices.DeleteFunc(tweets, func(t Tweet) bool { return t.CreatedAt.Before(since) })
	}
	slices.SortFunc(tweets, func(a, b Tweet) int { return b.CreatedAt.Compare(a.CreatedAt) })
	from := 0
	if tok := q.Get("pagination_token"); tok != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(tok, "7140dibdnow9c7btw"))
		if err != nil || n <= 0 || n > len(tweets) {
			writeJSON(w, http.StatusBadRequest, map[string]any{"title": "Invalid Request", "type": problemBase + "invalid-request",
				"detail": "One or more parameters to your request was invalid."})
			return
		}
		from = n
	}
	to := min(from+min(maxResults, f.PageSize), len(tweets))
	page := tweets[from:to]
	if len(page) == 0 {
		writeJSON(w, http.StatusOK, map[string]any{"meta": map[string]any{"result_count": 0}})
		return
	}
	fields := strings.Split(q.Get("tweet.fields"), ",")
	var data, media, errs []any
	for _, t := range page {
		d := map[string]any{"id": t.ID, "text": t.Text, "edit_history_tweet_ids": []string{t.ID}}
		if slices.Contains(fields, "created_at") {
			d["created_at"] = t.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		var refs []any
		for typ, ref := range map[string]string{"retweeted": t.Retweeted, "quoted": t.Quoted, "replied_to": t.RepliedTo} {
			if ref != "" {
				refs = append(refs, map[string]any{"type": typ, "id": ref})
			}
		}
		if len(refs) > 0 && slices.Contains(fields, "referenced_tweets") {
			d["referenced_tweets"] = refs
		}
		if t.LongText != "" && slices.Contains(fields, "note_tweet") {
			d["note_tweet"] = map[string]any{"text": t.LongText}
		}
		if len(t.Media) > 0 && slices.Contains(fields, "attachments") {
			var keys []string
			for _, m := range t.Media {
				keys = append(keys, m.Key)
				media = append(media, twitterMedia(m))
			}
			d["attachments"] = map[string]any{"media_keys": keys}
		}
		if t.QuotedDeleted {
			errs = append(errs, map[string]any{
				"value": t.Quoted, "detail": "Could not find tweet with referenced_tweets.id: [" + t.Quoted + "].",
				"title": "Not Found Error", "resource_type": "tweet", "parameter": "referenced_tweets.id",
				"resource_id": t.Quoted, "type": problemBase + "resource-not-found",
			})
		}
		data = append(data, d)
	}
	meta := map[string]any{"result_count": len(page), "newest_id": page[0].ID, "oldest_id": page[len(page)-1].ID}
	if to < len(tweets) {
		meta["next_token"] = fmt.Sprintf("7140dibdnow9c7btw%d", to)
	}
	out := map[string]any{"data": data, "meta": meta}
	if len(media) > 0 && q.Get("expansions") == "attachments.media_keys" {
		out["includes"] = map[string]any{"media": media}
	}
	if len(errs) > 0 {
		out["errors"] = errs
	}
	writeJSON(w, http.StatusOK, out)
}

func twitterMedia(m TwitterMedia) map[string]any {
	out := map[string]any{"media_key": m.Key, "type": m.Type}
	if m.URL != "" {
		out["url"] = m.URL
	}
	if m.PreviewImageURL != "" {
		out["preview_image_url"] = m.PreviewImageURL
	}
	if len(m.Variants) > 0 {
		var vs []any
		for rate, u := range m.Variants {
			vs = append(vs, map[string]any{"bit_rate": rate, "content_type": "video/mp4", "url": u})
		}
		vs = append(vs, map[string]any{"content_type": "application/x-mpegURL", "url": "https://video.twimg.com/playlist.m3u8"})
		out["variants"] = vs
	}
	return out
}
