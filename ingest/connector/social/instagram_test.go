package social_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/platform"
	"github.com/feedsvc/feedsvc/ingest/platform/graph"
	"github.com/feedsvc/feedsvc/ingest/platform/instagram"
	"github.com/feedsvc/feedsvc/ingest/platform/platformtest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

const (
	instagramToken    = "IGQVJ-test-access-token"
	instagramBusiness = "17841400000000001"
)

func instagramFake(t *testing.T, now time.Time) (*platformtest.Instagram, platform.Settings) {
	f := platformtest.NewInstagram(t, instagramToken, instagramBusiness)
	f.MaxLimit = 2
	f.AddAccount(&platformtest.InstagramAccount{
		ID: "17841400008460056", Username: "nasa", Name: "NASA Science", ProfilePictureURL: "https://scontent.cdninstagram.com/nasa.jpg",
		Media: []platformtest.InstagramMedia{
			{ID: "1801", Caption: "Saturn's rings, up close", MediaType: "IMAGE", MediaProductType: "FEED",
				MediaURL: "https://scontent.cdninstagram.com/saturn.jpg", Shortcode: "C0aaaaaaaaa", Timestamp: now.Add(-time.Hour)},
			{ID: "1802", Caption: "Launch day!", MediaType: "VIDEO", MediaProductType: "REELS",
				MediaURL: "https://scontent.cdninstagram.com/launch.mp4", ThumbnailURL: "https://scontent.cdninstagram.com/launch.jpg",
				Shortcode: "R0bbbbbbbbb", Timestamp: now.Add(-5 * time.Hour)},
			{ID: "1803", MediaType: "CAROUSEL_ALBUM", MediaProductType: "FEED",
				MediaURL: "https://scontent.cdninstagram.com/album1.jpg", Shortcode: "C0ccccccccc", Timestamp: now.Add(-48 * time.Hour)},
			{ID: "1804", Caption: "Throwback", MediaType: "IMAGE", MediaProductType: "FEED",
				MediaURL: "https://scontent.cdninstagram.com/old.jpg", Shortcode: "C0ddddddddd", Timestamp: now.Add(-20 * 24 * time.Hour)},
			{ID: "1805", Caption: "Older still", MediaType: "IMAGE", MediaProductType: "FEED",
				MediaURL: "https://scontent.cdninstagram.com/older.jpg", Shortcode: "C0eeeeeeeee", Timestamp: now.Add(-30 * 24 * time.Hour)},
		},
	})
	f.AddAccount(&platformtest.InstagramAccount{ID: "17841400000000099", Username: "someperson", Personal: true})
	return f, platform.Settings{InstagramAPIURL: f.URL, InstagramAccessToken: instagramToken, InstagramBusinessID: instagramBusiness}
}

func TestAnInstagramSourceIsAddedOnlyForADiscoverableAccount(t *testing.T) {
	fake, settings := instagramFake(t, time.Now().UTC())
	h := start(t, settings)
	feed := newsFeed(t, h, "IG")
	path := "/feeds/news/" + feed + "/sources"

	r := h.Do("POST", path, map[string]any{"sourceType": "photoshare", "username": "@NASA"}).MustStatus(t, http.StatusCreated)
	wantJSON(t, "sourceDetails", r.Data()["sourceDetails"], `{"sourceType":"instagram","username":"nasa"}`)
	if r.Data()["sourceType"] != "instagram" {
		t.Errorf("attachment %s", r.Raw)
	}
	wantError(t, h.Do("POST", path, map[string]any{"sourceType": "instagram", "username": "nasa"}), http.StatusConflict)
	for _, tc := range []struct{ name, username string }{
		{"an account that does not exist", "nobodyatall"},
		{"a personal or private account", "someperson"},
		{"a username Instagram cannot have", "no-such-name"},
	} {
		t.Run(tc.name+" answers 404", func(t *testing.T) {
			wantError(t, h.Do("POST", path, map[string]any{"sourceType": "instagram", "username": tc.username}),
				http.StatusNotFound, `"resource":"account"`)
		})
	}
	if recs := h.Do("GET", "/sources", nil).List(); len(recs) != 1 {
		t.Errorf("records %v, want the one account", recs)
	}
	t.Run("the lookup asked business discovery through the business account, with the token in the header", func(t *testing.T) {
		req := fake.RequestsTo("/" + instagramBusiness)[0]
		if req.Query.Get("fields") != "business_discovery.username(nasa){id,username,name,profile_picture_url}" {
			t.Errorf("fields %q", req.Query.Get("fields"))
		}
		if req.Header.Get("Authorization") != "Bearer "+instagramToken || req.Query.Get("access_token") != "" {
			t.Errorf("token sent as %q / %q", req.Header.Get("Authorization"), req.Query.Get("access_token"))
		}
	})
}

func TestInstagramPostsAndReelsBecomeNewsItems(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	fake, settings := instagramFake(t, now)
	h := start(t, settings)
	feed := newsFeed(t, h, "IG")
	h.Do("POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "instagram", "username": "nasa"}).MustStatus(t, http.StatusCreated)
	startWorker(t, h, workerConfig(300*time.Millisecond))
	wait.Until(t, 10*time.Second, "the three media of the window", func() bool { return len(items(t, h, feed, "")) == 3 })

	t.Run("paging stopped at the first page reaching before the window", func(t *testing.T) {
		var cursors []string
		for _, r := range fake.RequestsTo("/" + instagramBusiness) {
			if f := r.Query.Get("fields"); strings.Contains(f, "media.limit(50)") {
				cursors = append(cursors, f)
			}
		}
		if len(cursors) < 2 || !strings.Contains(cursors[1], ".after(") {
			t.Fatalf("media requests %v, want a second page by cursor", cursors)
		}
		for _, f := range cursors {
			if strings.Contains(f, "bWVkaWE6NA") { // the cursor after the fourth media
				t.Errorf("a page beyond the window was asked for: %s", f)
			}
		}
	})

	publisher := `{"name":"NASA Science","username":"nasa","avatarUrl":"https://scontent.cdninstagram.com/nasa.jpg"}`
	account := `{"id":"17841400008460056","username":"nasa","fullName":"NASA Science","profilePicUrl":"https://scontent.cdninstagram.com/nasa.jpg"}`
	current := items(t, h, feed, "&include=source")
	legacy := legacyItems(t, h, feed)
	for _, tc := range []struct {
		name, url, item, block, data string
		published                    time.Time
	}{
		{
			name: "an image post", url: "https://www.instagram.com/p/C0aaaaaaaaa/", published: now.Add(-time.Hour),
			item: `{"description":"Saturn's rings, up close","url":"https://www.instagram.com/p/C0aaaaaaaaa/","imageUrl":"https://scontent.cdninstagram.com/saturn.jpg"}`,
			block: `{"type":"instagram","subtype":"post","permalinkUrl":"https://www.instagram.com/p/C0aaaaaaaaa/","caption":"Saturn's rings, up close",
				"mediaUrl":"https://scontent.cdninstagram.com/saturn.jpg","publisher":` + publisher + `}`,
			data: `{"code":"C0aaaaaaaaa","type":"post","permalinkUrl":"https://www.instagram.com/p/C0aaaaaaaaa/","caption":"Saturn's rings, up close",
				"mediaUrl":"https://scontent.cdninstagram.com/saturn.jpg","thumbnailUrl":null,"account":` + account + `}`,
		},
		{
			name: "a reel", url: "https://www.instagram.com/reel/R0bbbbbbbbb/", published: now.Add(-5 * time.Hour),
			item: `{"description":"Launch day!","url":"https://www.instagram.com/reel/R0bbbbbbbbb/","imageUrl":"https://scontent.cdninstagram.com/launch.jpg"}`,
			block: `{"type":"instagram","subtype":"reel","permalinkUrl":"https://www.instagram.com/reel/R0bbbbbbbbb/","caption":"Launch day!",
				"mediaUrl":"https://scontent.cdninstagram.com/launch.mp4","thumbnailUrl":"https://scontent.cdninstagram.com/launch.jpg","publisher":` + publisher + `}`,
			data: `{"code":"R0bbbbbbbbb","type":"reel","permalinkUrl":"https://www.instagram.com/reel/R0bbbbbbbbb/","caption":"Launch day!",
				"mediaUrl":"https://scontent.cdninstagram.com/launch.mp4","thumbnailUrl":"https://scontent.cdninstagram.com/launch.jpg","account":` + account + `}`,
		},
		{
			name: "an album without a caption", url: "https://www.instagram.com/p/C0ccccccccc/", published: now.Add(-48 * time.Hour),
			item: `{"url":"https://www.instagram.com/p/C0ccccccccc/","imageUrl":"https://scontent.cdninstagram.com/album1.jpg"}`,
			block: `{"type":"instagram","subtype":"post","permalinkUrl":"https://www.instagram.com/p/C0ccccccccc/",
				"mediaUrl":"https://scontent.cdninstagram.com/album1.jpg","publisher":` + publisher + `}`,
			data: `{"code":"C0ccccccccc","type":"post","permalinkUrl":"https://www.instagram.com/p/C0ccccccccc/","caption":null,
				"mediaUrl":"https://scontent.cdninstagram.com/album1.jpg","thumbnailUrl":null,"account":` + account + `}`,
		},
	} {
		t.Run(tc.name+" has every field of both shapes", func(t *testing.T) {
			it := current[tc.url]
			if it == nil {
				t.Fatalf("no item for %s among %v", tc.url, keys(current))
			}
			if it["publishedAt"] != ms(tc.published) {
				t.Errorf("publishedAt %v, want %s", it["publishedAt"], ms(tc.published))
			}
			wantJSON(t, "item", without(it, "id", "newsPageId", "publishedAt", "createdAt", "updatedAt", "source"), tc.item)
			wantJSON(t, "source block", it["source"], tc.block)
			old := legacy[tc.url]
			if old == nil || old["type"] != "instagram" || old["id"] != it["id"] {
				t.Fatalf("v0 item %v", old)
			}
			data := old["data"].(map[string]any)
			if data["instagramContentId"] != it["newsPageId"] || data["publishedAt"] != ms(tc.published) {
				t.Errorf("v0 instagramContentId %v publishedAt %v", data["instagramContentId"], data["publishedAt"])
			}
			wantJSON(t, "v0 data", without(data, "instagramContentId", "publishedAt"), tc.data)
		})
	}

	t.Run("a deleted post stays in the feed and new ones keep coming", func(t *testing.T) {
		fake.Delete("1801")
		fake.Publish("nasa", platformtest.InstagramMedia{ID: "1806", Caption: "New", MediaType: "IMAGE", MediaProductType: "FEED",
			MediaURL: "https://scontent.cdninstagram.com/new.jpg", Shortcode: "C0fffffffff", Timestamp: time.Now().UTC()})
		wait.Until(t, 15*time.Second, "the new post", func() bool { return items(t, h, feed, "")["https://www.instagram.com/p/C0fffffffff/"] != nil })
		if items(t, h, feed, "")["https://www.instagram.com/p/C0aaaaaaaaa/"] == nil {
			t.Errorf("the deleted post's item is gone")
		}
	})
}

func TestGraphRateLimitsBackTheProviderOffForTheTimeTheyName(t *testing.T) {
	fake, settings := instagramFake(t, time.Now().UTC())
	api := instagram.New(graph.New(settings.InstagramAPIURL, settings.InstagramAccessToken,
		platform.NewClient("instagram", platform.ClientOptions{AllowPrivateNetworks: true})), instagramBusiness)
	fake.RateLimit(1, time.Now().Add(10*time.Minute))
	_, err := api.Lookup(context.Background(), platform.Ref{Handle: "nasa"})
	var rl *platform.RateLimitError
	if !errors.As(err, &rl) {
		t.Fatalf("a code 4 answer gave %v, want a RateLimitError", err)
	}
	if wait := rl.RetryAfter(time.Now()); wait < 9*time.Minute || wait > 11*time.Minute {
		t.Errorf("backs off %s, want the 10 minutes estimated_time_to_regain_access names", wait)
	}
	if _, err := api.Lookup(context.Background(), platform.Ref{Handle: "nasa"}); !errors.As(err, &rl) {
		t.Errorf("a lookup during the back-off gave %v", err)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("the platform got %d requests, want only the limited one", n)
	}
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
