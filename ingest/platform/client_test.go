package platform_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/platform"
)

func get(t *testing.T, ctx context.Context, c *platform.Client, url string) (platform.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer top-secret-token")
	return c.Do(req)
}

func TestTheRequestBudgetHoldsRequestsBeyondItsRate(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	c := platform.NewClient("test", platform.ClientOptions{RequestsPerMinute: 2, AllowPrivateNetworks: true})
	for i := range 2 {
		if _, err := get(t, context.Background(), c, srv.URL); err != nil {
			t.Fatalf("request %d within the budget: %v", i+1, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := get(t, ctx, c, srv.URL)
	var rl *platform.RateLimitError
	if !errors.As(err, &rl) {
		t.Fatalf("a third request in the minute answered %v, want a RateLimitError", err)
	}
	if wait := rl.RetryAfter(time.Now()); wait < 25*time.Second || wait > 31*time.Second {
		t.Errorf("the budget asks to wait %s, want about 30s (2 a minute)", wait)
	}
	if hits.Load() != 2 {
		t.Errorf("the server got %d requests, want 2", hits.Load())
	}
}

func TestA429BacksEveryRequestOffUntilTheResetItNames(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"Retry-After in seconds", http.Header{"Retry-After": {"120"}}, 120 * time.Second},
		{"Retry-After as a date", http.Header{"Retry-After": {now.Add(time.Hour).UTC().Format(http.TimeFormat)}}, time.Hour},
		{"x-rate-limit-reset in Unix seconds", http.Header{"X-Rate-Limit-Reset": {fmt.Sprint(now.Add(15 * time.Minute).Unix())}}, 15 * time.Minute},
		{"no header", http.Header{}, time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				for k, v := range tc.header {
					w.Header()[k] = v
				}
				w.WriteHeader(http.StatusTooManyRequests)
			}))
			defer srv.Close()
			c := platform.NewClient("test", platform.ClientOptions{AllowPrivateNetworks: true})
			for range 3 {
				_, err := get(t, context.Background(), c, srv.URL)
				var rl *platform.RateLimitError
				if !errors.As(err, &rl) {
					t.Fatalf("answered %v, want a RateLimitError", err)
				}
				if got := rl.RetryAfter(now); got < tc.want-2*time.Second || got > tc.want+2*time.Second {
					t.Errorf("backs off for %s, want %s", got, tc.want)
				}
			}
			if hits.Load() != 1 {
				t.Errorf("the server got %d requests, want only the first", hits.Load())
			}
		})
	}
}

func TestErrorsNameNoCredentialAndBodiesAreBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 2048)))
	}))
	defer srv.Close()
	c := platform.NewClient("test", platform.ClientOptions{AllowPrivateNetworks: true, MaxBody: 1024})
	_, err := get(t, context.Background(), c, srv.URL+"/path?access_token=top-secret-token")
	if err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("a body over the bound answered %v", err)
	}
	if strings.Contains(err.Error(), "top-secret-token") {
		t.Errorf("the error names the credential: %v", err)
	}
	srv.Close()
	_, err = get(t, context.Background(), c, srv.URL+"/path?access_token=top-secret-token")
	if err == nil || strings.Contains(err.Error(), "top-secret-token") {
		t.Errorf("a connection error names the credential: %v", err)
	}
}

func TestPrivateAddressesAreRefusedUnlessAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	c := platform.NewClient("test", platform.ClientOptions{})
	if _, err := get(t, context.Background(), c, srv.URL); err == nil {
		t.Errorf("a loopback API was reached without AllowPrivateNetworks")
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	s := platform.Settings{TwitterBearerToken: "top-secret-token", FacebookAccessToken: "another-secret"}
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("settings", "settings", s)
	b, _ := json.Marshal(s)
	for _, out := range []string{fmt.Sprintf("%v %+v %#v %s", s, s, s, s.TwitterBearerToken), string(b), logged.String()} {
		if strings.Contains(out, "secret-token") || strings.Contains(out, "another-secret") {
			t.Errorf("a secret was printed: %s", out)
		}
	}
	if s.TwitterBearerToken.Reveal() != "top-secret-token" {
		t.Errorf("Reveal lost the secret")
	}
}

func TestSettingsComeFromTheEnvironment(t *testing.T) {
	env := map[string]string{
		"FEEDSVC_TWITTER_BEARER_TOKEN": "tok", "FEEDSVC_INSTAGRAM_ACCESS_TOKEN": "ig", "FEEDSVC_INSTAGRAM_BUSINESS_ID": "178",
		"FEEDSVC_TIKTOK_CLIENT_KEY": "key", "FEEDSVC_TIKTOK_CLIENT_SECRET": "sec", "FEEDSVC_RSSHUB_URL": "http://rsshub:1200",
		"FEEDSVC_TWITTER_REQUESTS_PER_MINUTE": "15",
	}
	s, err := platform.SettingsFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if s.TwitterAPIURL != "https://api.x.com" || s.InstagramAPIURL != "https://graph.facebook.com/v21.0" ||
		s.TikTokAPIURL != "https://open.tiktokapis.com" || s.FacebookAPIURL != "https://graph.facebook.com/v21.0" {
		t.Errorf("default URLs %+v", s)
	}
	if s.Budget("twitter") != 15 || s.Budget("facebook") != platform.DefaultRequestsPerMinute {
		t.Errorf("budgets %v", s.RequestsPerMinute)
	}
	if s.FacebookAccessToken.Set() || !s.TwitterBearerToken.Set() || s.RSSHubURL != "http://rsshub:1200" {
		t.Errorf("credentials %+v", s)
	}
	for key, bad := range map[string]string{
		"FEEDSVC_TWITTER_API_URL":              "ftp://api.x.com",
		"FEEDSVC_RSSHUB_URL":                   "http://user:pw@rsshub",
		"FEEDSVC_FACEBOOK_REQUESTS_PER_MINUTE": "0",
	} {
		_, err := platform.SettingsFromEnv(func(k string) (string, bool) {
			if k == key {
				return bad, true
			}
			return "", false
		})
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%s answered %v, want an error naming it", key, bad, err)
		}
	}
}
