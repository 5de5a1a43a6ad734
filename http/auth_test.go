package http_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// Contract tests of authentication and scopes (api.md section 5, D3, D11).

// wantUnauthorized fails unless r is the flat 401 body of api.md section 5.
func wantUnauthorized(t *testing.T, r servicetest.Response) {
	t.Helper()
	r.MustStatus(t, http.StatusUnauthorized)
	wantKeys(t, "401 body", r.Body, "success", "error", "code")
	if r.Body["success"] != false || r.Body["code"] != "AUTHENTICATION_FAILED" {
		t.Fatalf("401 body %s", r.Raw)
	}
	if msg := wantString(t, "401 error", r.Body["error"]); !strings.Contains(msg, "api-key") {
		t.Fatalf("401 text %q does not name the api-key strategy", msg)
	}
}

// wantForbidden fails unless r is 403 PERMISSION_DENIED.
func wantForbidden(t *testing.T, r servicetest.Response) {
	t.Helper()
	e := wantError(t, r, http.StatusForbidden, "PERMISSION_DENIED")
	wantKeys(t, "error", e, "code", "message")
}

func TestRequestsWithoutAValidKeyAnswer401WithAFlatBody(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	ctx := context.Background()
	revoked, revokedKey, err := h.Service.Keys.CreateKey(ctx, "acme", auth.AllScopes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Used once before revoking, so a cached authentication cannot outlive it.
	wantDataList(t, send(t, h, "GET", "/feeds/news", nil, map[string]string{"Authorization": "Bearer " + revoked}))
	if err := h.Service.Keys.RevokeKey(ctx, revokedKey.ID); err != nil {
		t.Fatal(err)
	}
	expiry := time.Now().Add(150 * time.Millisecond)
	expiring, _, err := h.Service.Keys.CreateKey(ctx, "acme", auth.AllScopes(), &expiry)
	if err != nil {
		t.Fatal(err)
	}
	wantDataList(t, send(t, h, "GET", "/feeds/news", nil, map[string]string{"Authorization": "Bearer " + expiring}))
	time.Sleep(time.Until(expiry) + 20*time.Millisecond)

	// A well-formed key that was never issued: the real key with one
	// secret character changed.
	last := h.Key[len(h.Key)-1]
	forged := h.Key[:len(h.Key)-1] + map[bool]string{true: "1", false: "0"}[last == '0']

	cases := []struct {
		name   string
		header string
	}{
		{"no Authorization header", ""},
		{"a Basic header", "Basic x"},
		{"Basic credentials", "Basic dXNlcjpwYXNz"},
		{"a bare key without a scheme", h.Key},
		{"Bearer without a key", "Bearer"},
		{"Bearer with blanks", "Bearer    "},
		{"a garbage bearer token", "Bearer garbage"},
		{"an uppercased key", "Bearer " + strings.ToUpper(h.Key)},
		{"a forged key", "Bearer " + forged},
		{"a revoked key", "Bearer " + revoked},
		{"an expired key", "Bearer " + expiring},
		{"two keys", "Bearer " + h.Key + " " + h.Key},
	}
	requests := []struct {
		method, path string
		body         any
	}{
		{"GET", "/feeds/news", nil},
		{"POST", "/feeds/news", map[string]any{"name": "n", "description": "d"}},
		{"GET", "/feeds/news/" + randomID(), nil},
		{"DELETE", "/feeds/news/not-a-uuid", nil},
		{"POST", "/sources", site("auth.example")},
		{"GET", "/sources", nil},
		{"GET", "/no/such/route", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, rq := range requests {
				headers := map[string]string{}
				if tc.header != "" {
					headers["Authorization"] = tc.header
				}
				r := send(t, h, rq.method, rq.path, rq.body, headers)
				wantUnauthorized(t, r)
				if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
					t.Fatalf("%s %s: 401 without a Bearer challenge", rq.method, rq.path)
				}
			}
		})
	}
	t.Run("the scheme is case-insensitive", func(t *testing.T) {
		wantDataList(t, send(t, h, "GET", "/feeds/news", nil, map[string]string{"Authorization": "bearer " + h.Key}))
	})
	t.Run("no refused request created anything", func(t *testing.T) {
		c := as(h, h.Key)
		if feeds := wantDataList(t, c.do(t, "GET", "/feeds/news", nil)); len(feeds) != 0 {
			t.Fatalf("feeds %s", jsonOf(feeds))
		}
		if recs := wantDataList(t, c.do(t, "GET", "/sources", nil)); len(recs) != 0 {
			t.Fatalf("records %s", jsonOf(recs))
		}
	})
}

func TestAKeyWithoutTheNewsScopeIsRefusedWith403OnNewsFeeds(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	full := as(h, h.Key)
	feedID := createFeed(t, full, "Scoped", "scopes")["id"].(string)
	attID := attach(t, full, feedID, site("scoped.example"))["id"].(string)

	requests := []struct {
		method, path string
		body         any
	}{
		{"GET", "/feeds/news", nil},
		{"POST", "/feeds/news", map[string]any{"name": "n", "description": "d"}},
		{"GET", "/feeds/news/" + feedID, nil},
		{"PATCH", "/feeds/news/" + feedID, map[string]any{"name": "x"}},
		{"DELETE", "/feeds/news/" + feedID, nil},
		{"GET", "/feeds/news/" + feedID + "/sources", nil},
		{"POST", "/feeds/news/" + feedID + "/sources", site("other.example")},
		{"PATCH", "/feeds/news/" + feedID + "/sources/" + attID, map[string]any{"enabled": false}},
		{"DELETE", "/feeds/news/" + feedID + "/sources/" + attID, nil},
	}
	for _, scopes := range [][]auth.Scope{{auth.ScopeEvents}, {auth.ScopeItems, auth.ScopeWebhooks, auth.ScopeParse}} {
		key := as(h, h.NewKey("acme", scopes...))
		t.Run("scopes "+auth.FormatScopes(scopes), func(t *testing.T) {
			for _, rq := range requests {
				wantForbidden(t, key.do(t, rq.method, rq.path, rq.body))
			}
		})
	}
	t.Run("a key with only the news scope may use news feeds", func(t *testing.T) {
		news := as(h, h.NewKey("acme", auth.ScopeNews))
		if feeds := wantDataList(t, news.do(t, "GET", "/feeds/news", nil)); len(feeds) != 1 {
			t.Fatalf("feeds %s", jsonOf(feeds))
		}
		createFeed(t, news, "News only", "news scope")
	})
	t.Run("nothing the refused keys asked for happened", func(t *testing.T) {
		got := wantDataObject(t, full.do(t, "GET", "/feeds/news/"+feedID, nil), http.StatusOK)
		if got["name"] != "Scoped" {
			t.Fatalf("feed %s", jsonOf(got))
		}
		srcs := wantDataList(t, full.do(t, "GET", "/feeds/news/"+feedID+"/sources", nil))
		if len(srcs) != 1 || srcs[0]["enabled"] != true {
			t.Fatalf("sources %s", jsonOf(srcs))
		}
	})
}

func TestSourceRecordsNeedTheNewsOrTheEventsScope(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	t.Run("a key with only the events scope may use /sources", func(t *testing.T) {
		events := as(h, h.NewKey("acme", auth.ScopeEvents))
		rec := wantDataObject(t, events.do(t, "POST", "/sources", site("events.example")), http.StatusCreated)
		wantDataObject(t, events.do(t, "GET", "/sources/"+rec["id"].(string), nil), http.StatusOK)
		if recs := wantDataList(t, events.do(t, "GET", "/sources", nil)); len(recs) != 1 {
			t.Fatalf("records %s", jsonOf(recs))
		}
		wantForbidden(t, events.do(t, "GET", "/feeds/news", nil))
	})
	t.Run("a key with only the news scope may use /sources", func(t *testing.T) {
		news := as(h, h.NewKey("acme", auth.ScopeNews))
		wantDataObject(t, news.do(t, "POST", "/sources", site("events.example")), http.StatusOK)
	})
	t.Run("a key with neither is refused with 403", func(t *testing.T) {
		other := as(h, h.NewKey("acme", auth.ScopeItems, auth.ScopeWebhooks, auth.ScopeParse, auth.ScopeFactcheck, auth.ScopeResearch))
		wantForbidden(t, other.do(t, "GET", "/sources", nil))
		wantForbidden(t, other.do(t, "POST", "/sources", site("nope.example")))
		wantForbidden(t, other.do(t, "GET", "/sources/"+randomID(), nil))
	})
}

func TestHealthAndReadinessNeedNoKey(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		t.Run(p, func(t *testing.T) {
			for _, headers := range []map[string]string{{}, {"Authorization": "Bearer garbage"}} {
				r := send(t, h, "GET", p, nil, headers)
				r.MustStatus(t, http.StatusOK)
				if _, ok := r.Body["status"].(string); !ok {
					t.Fatalf("%s body %s", p, r.Raw)
				}
			}
		})
	}
}

func TestAnUnknownRouteWithAValidKeyAnswersAJSON404(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	for _, p := range []string{"/", "/feeds", "/v1/feeds/news", "/feeds/newsx"} {
		t.Run(p, func(t *testing.T) {
			e := wantError(t, c.do(t, "GET", p, nil), http.StatusNotFound, "NOT_FOUND")
			wantKeys(t, "error", e, "code", "message")
		})
	}
}
