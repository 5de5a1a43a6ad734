package tiktok

import (
	"context"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/platform"
	"github.com/feedsvc/feedsvc/ingest/platform/platformtest"
)

func TestTheClientTokenIsFetchedOnceAndAgainBeforeItExpires(t *testing.T) {
	fake := platformtest.NewTikTok(t, "key", "secret")
	fake.AddAccount(&platformtest.TikTokAccount{Username: "nasa", DisplayName: "NASA"})
	fake.ExpiresIn = 7200
	api := New(fake.URL, "key", "secret", platform.NewClient("tiktok", platform.ClientOptions{AllowPrivateNetworks: true}))
	clock := time.Now()
	api.now = func() time.Time { return clock }
	lookup := func() {
		t.Helper()
		if _, err := api.Lookup(context.Background(), platform.Ref{Handle: "nasa"}); err != nil {
			t.Fatal(err)
		}
	}
	lookup()
	lookup()
	if fake.Issued() != 1 {
		t.Fatalf("%d tokens fetched for two calls within the token's life, want 1", fake.Issued())
	}
	clock = clock.Add(7200*time.Second - tokenMargin + time.Second)
	lookup()
	if fake.Issued() != 2 {
		t.Fatalf("%d tokens fetched, want a new one once the first was about to expire", fake.Issued())
	}
	fake.RevokeTokens()
	lookup()
	if fake.Issued() != 3 {
		t.Fatalf("%d tokens fetched, want a new one after the API refused the old", fake.Issued())
	}
	for _, r := range fake.Requests() {
		if r.Path == "/v2/oauth/token/" {
			if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
				t.Errorf("token request Content-Type %q", r.Header.Get("Content-Type"))
			}
			continue
		}
		if r.Query.Get("client_secret") != "" || r.Body == "" {
			t.Errorf("%s: query %v body %q", r.Path, r.Query, r.Body)
		}
	}
}

func TestWrongClientCredentialsAreAnAPIError(t *testing.T) {
	fake := platformtest.NewTikTok(t, "key", "secret")
	api := New(fake.URL, "key", "wrong", platform.NewClient("tiktok", platform.ClientOptions{AllowPrivateNetworks: true}))
	_, err := api.Lookup(context.Background(), platform.Ref{Handle: "nasa"})
	if e, ok := err.(*platform.APIError); !ok || e.Code != "invalid_client" || !e.Permanent() {
		t.Fatalf("wrong credentials answered %v", err)
	}
}
