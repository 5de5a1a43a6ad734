// Package graph speaks Meta's Graph API, which both Instagram (business
// discovery) and Facebook (pages) are read through: authenticated GETs,
// its error envelope, its not-found codes, and its rate limits, which it
// answers with error codes and usage headers rather than 429s.
package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/feedsvc/feedsvc/ingest/platform"
)

// API is the Graph API at a base URL (https://graph.facebook.com/v21.0)
// with an access token.
type API struct {
	base   string
	token  platform.Secret
	client *platform.Client
}

// New returns the API at base, sending through client.
func New(base string, token platform.Secret, client *platform.Client) *API {
	return &API{base: base, token: token, client: client}
}

// Error is the Graph API's error envelope.
type Error struct {
	Platform  string `json:"-"`
	Status    int    `json:"-"`
	Message   string `json:"message"`
	Type      string `json:"type"`
	Code      int    `json:"code"`
	Subcode   int    `json:"error_subcode"`
	UserTitle string `json:"error_user_title"`
	UserMsg   string `json:"error_user_msg"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s graph error %d/%d (HTTP %d): %s", e.Platform, e.Code, e.Subcode, e.Status, e.Message)
}

// NotFound reports whether the object asked for does not exist or cannot
// be read with this token: an unknown alias (803), an object that does not
// exist or is not accessible (100 with subcode 33), a business discovery
// username that is not a professional account (110 with subcode 2207013).
func (e *Error) NotFound() bool {
	return e.Code == 803 || e.Code == 100 && e.Subcode == 33 || e.Code == 110 && e.Subcode == 2207013 || e.Status == http.StatusNotFound
}

// Permanent: the request itself is refused; asking again will not help.
func (e *Error) Permanent() bool { return e.Status >= 400 && e.Status < 500 && !rateLimited(e.Code) }

// Is makes a not-found error platform.ErrNotFound.
func (e *Error) Is(target error) bool { return target == platform.ErrNotFound && e.NotFound() }

// rateLimited are the codes of Graph's rate limits: application (4), user
// (17), page (32), custom (613), and business use case (80001-80014).
func rateLimited(code int) bool {
	return code == 4 || code == 17 || code == 32 || code == 613 || code >= 80001 && code <= 80014
}

// Get sends an authenticated GET of path and decodes a 200 into out. A
// Graph error is an *Error; a rate limit backs the client off until the
// usage headers say access is regained and is a RateLimitError.
func (a *API) Get(ctx context.Context, path string, q url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, platform.Endpoint(a.base, path, q), nil)
	if err != nil {
		return fmt.Errorf("%s request %s: %w", a.client.Name(), path, err)
	}
	// The token goes in the header, not in access_token, so that no URL
	// (and no error quoting one) carries it.
	req.Header.Set("Authorization", "Bearer "+a.token.Reveal())
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	if resp.Status == http.StatusOK {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", a.client.Name(), path, err)
		}
		return nil
	}
	var env struct {
		Error Error `json:"error"`
	}
	_ = json.Unmarshal(resp.Body, &env)
	e := env.Error
	e.Platform, e.Status = a.client.Name(), resp.Status
	if rateLimited(e.Code) {
		return a.client.BackOff(regained(resp.Header, time.Now()))
	}
	return &e
}

// regained is when a rate-limited app regains access: the longest
// estimated_time_to_regain_access (minutes) of the business use case
// usage header, else the platform's own reset headers.
func regained(h http.Header, now time.Time) time.Time {
	var usage map[string][]struct {
		Minutes int `json:"estimated_time_to_regain_access"`
	}
	longest := 0
	if err := json.Unmarshal([]byte(h.Get("X-Business-Use-Case-Usage")), &usage); err == nil {
		for _, entries := range usage {
			for _, u := range entries {
				longest = max(longest, u.Minutes)
			}
		}
	}
	if longest > 0 {
		return now.Add(time.Duration(longest) * time.Minute)
	}
	return platform.ResetOf(h, now)
}

// Paging is the paging block of a Graph list.
type Paging struct {
	Cursors struct {
		After string `json:"after"`
	} `json:"cursors"`
	// Next is the URL of the next page, present only when there is one.
	// It holds the access token, so it is never followed or logged: only
	// its presence is read, and the cursor is sent instead.
	Next string `json:"next"`
}

// NextCursor is the cursor of the next page; "" after the last.
func (p Paging) NextCursor() string {
	if p.Next == "" {
		return ""
	}
	return p.Cursors.After
}

// Time reads Graph's timestamps, "2026-11-20T10:00:00+0000".
func Time(s string) (time.Time, error) {
	t, err := time.Parse("2006-01-02T15:04:05-0700", s)
	if err != nil {
		t, err = time.Parse(time.RFC3339, s)
	}
	return t.UTC(), err
}
