package platformtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// TikTok is a fake of the Research API (developers.tiktok.com/doc/
// research-api-specs-…): the client credentials token (POST
// /v2/oauth/token/), user info and the video query, with the {data,
// error: {code, message, log_id}} envelope, invalid_params for a username
// that is unknown or private, the 30-day limit of a query's dates,
// cursor and search_id paging, access_token_invalid for an unknown or
// revoked token, and rate_limit_exceeded as a 429.
type TikTok struct {
	*httptest.Server
	log
	ClientKey, ClientSecret string
	// ExpiresIn is the lifetime of the tokens it issues, in seconds.
	ExpiresIn int
	// PageSize caps a video page below max_count.
	PageSize int

	mu       sync.Mutex
	tokens   map[string]bool
	issued   int
	accounts []*TikTokAccount
}

// TikTokAccount is an account of the fake.
type TikTokAccount struct {
	Username, DisplayName, AvatarURL string
	Private                          bool
	Videos                           []TikTokVideo
}

// TikTokVideo is a video; its id is a 64-bit number.
type TikTokVideo struct {
	ID          uint64
	Description string
	Created     time.Time
}

// NewTikTok starts the fake; it stops when the test ends.
func NewTikTok(t interface{ Cleanup(func()) }, clientKey, clientSecret string) *TikTok {
	f := &TikTok{ClientKey: clientKey, ClientSecret: clientSecret, ExpiresIn: 7200, PageSize: 100, tokens: map[string]bool{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// AddAccount adds an account.
func (f *TikTok) AddAccount(a *TikTokAccount) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accounts = append(f.accounts, a)
}

// Publish adds a video to an account.
func (f *TikTok) Publish(username string, v TikTokVideo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.accounts {
		if a.Username == username {
			a.Videos = append(a.Videos, v)
		}
	}
}

// RevokeTokens makes every token issued so far invalid.
func (f *TikTok) RevokeTokens() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens = map[string]bool{}
}

// Issued counts the tokens issued.
func (f *TikTok) Issued() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issued
}

func tiktokError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": msg, "log_id": "20261125010203ABCDEF"}})
}

func (f *TikTok) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.record(Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: string(body), At: time.Now()})
	if limited, _ := f.limit(); limited {
		tiktokError(w, http.StatusTooManyRequests, "rate_limit_exceeded", "API rate limit exceeded, please retry later.")
		return
	}
	if r.Method != http.MethodPost {
		tiktokError(w, http.StatusMethodNotAllowed, "invalid_params", "Method not allowed")
		return
	}
	if r.URL.Path == "/v2/oauth/token/" {
		f.token(w, body)
		return
	}
	f.mu.Lock()
	valid := f.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	f.mu.Unlock()
	if !valid {
		tiktokError(w, http.StatusUnauthorized, "access_token_invalid", "The access token is invalid or not found in the request.")
		return
	}
	fields := strings.Split(r.URL.Query().Get("fields"), ",")
	switch r.URL.Path {
	case "/v2/research/user/info/":
		f.userInfo(w, body, fields)
	case "/v2/research/video/query/":
		f.videoQuery(w, body, fields)
	default:
		tiktokError(w, http.StatusNotFound, "invalid_params", "Path not found")
	}
}

func (f *TikTok) token(w http.ResponseWriter, body []byte) {
	form, _ := url.ParseQuery(string(body))
	if form.Get("grant_type") != "client_credentials" || form.Get("client_key") != f.ClientKey || form.Get("client_secret") != f.ClientSecret {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client",
			"error_description": "Client key or secret is incorrect.", "log_id": "20261125010203ABCDEF"})
		return
	}
	f.mu.Lock()
	f.issued++
	tok := fmt.Sprintf("clt.example%dExample", f.issued)
	f.tokens[tok] = true
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "expires_in": f.ExpiresIn, "token_type": "Bearer"})
}

func (f *TikTok) account(username string) *TikTokAccount {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.accounts {
		if strings.EqualFold(a.Username, username) {
			return a
		}
	}
	return nil
}

func (f *TikTok) userInfo(w http.ResponseWriter, body []byte, fields []string) {
	var req struct {
		Username string `json:"username"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Username == "" {
		tiktokError(w, http.StatusBadRequest, "invalid_params", "username is required")
		return
	}
	a := f.account(req.Username)
	if a == nil || a.Private {
		tiktokError(w, http.StatusBadRequest, "invalid_params", "The user does not exist or the account is private.")
		return
	}
	data := pick(map[string]any{
		"display_name": a.DisplayName, "avatar_url": a.AvatarURL, "bio_description": "", "is_verified": false,
		"follower_count": 1000, "following_count": 10, "likes_count": 5000, "video_count": len(a.Videos),
	}, fields)
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "error": map[string]any{"code": "ok", "message": "", "log_id": "20261125010203ABCDEF"}})
}

func (f *TikTok) videoQuery(w http.ResponseWriter, body []byte, fields []string) {
	var req struct {
		Query struct {
			And []struct {
				Operation   string   `json:"operation"`
				FieldName   string   `json:"field_name"`
				FieldValues []string `json:"field_values"`
			} `json:"and"`
		} `json:"query"`
		StartDate string `json:"start_date"`
		EndDate   string `json:"end_date"`
		MaxCount  int    `json:"max_count"`
		Cursor    int    `json:"cursor"`
		SearchID  string `json:"search_id"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		tiktokError(w, http.StatusBadRequest, "invalid_params", "Invalid request body")
		return
	}
	start, err1 := time.Parse("20060102", req.StartDate)
	end, err2 := time.Parse("20060102", req.EndDate)
	switch {
	case err1 != nil || err2 != nil:
		tiktokError(w, http.StatusBadRequest, "invalid_params", "start_date and end_date must be in the format YYYYMMDD")
		return
	case end.Before(start) || end.Sub(start) > 30*24*time.Hour:
		tiktokError(w, http.StatusBadRequest, "invalid_params", "The end_date must be no more than 30 days after the start_date")
		return
	case req.MaxCount < 1 || req.MaxCount > 100:
		tiktokError(w, http.StatusBadRequest, "invalid_params", "max_count must be between 1 and 100")
		return
	case req.Cursor > 0 && req.SearchID == "":
		tiktokError(w, http.StatusBadRequest, "invalid_params", "search_id is required with a cursor")
		return
	}
	var users []string
	for _, c := range req.Query.And {
		if c.FieldName == "username" && (c.Operation == "EQ" || c.Operation == "IN") {
			users = append(users, c.FieldValues...)
		}
	}
	var videos []map[string]any
	for _, u := range users {
		a := f.account(u)
		if a == nil || a.Private {
			continue
		}
		f.mu.Lock()
		vs := slices.Clone(a.Videos)
		f.mu.Unlock()
		for _, v := range vs {
			if v.Created.Before(start) || !v.Created.Before(end.Add(24*time.Hour)) {
				continue
			}
			videos = append(videos, pick(map[string]any{
				"id": json.Number(fmt.Sprint(v.ID)), "video_description": v.Description, "create_time": v.Created.Unix(), "username": a.Username,
			}, fields))
		}
	}
	size := min(req.MaxCount, f.PageSize)
	from := min(req.Cursor, len(videos))
	to := min(from+size, len(videos))
	page := videos[from:to]
	if page == nil {
		page = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"data":  map[string]any{"videos": page, "cursor": to, "has_more": to < len(videos), "search_id": "7201388525814961198"},
		"error": map[string]any{"code": "ok", "message": "", "log_id": "20261125010203ABCDEF"},
	})
}
