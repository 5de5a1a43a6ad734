package social_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/platform"
	"github.com/feedsvc/feedsvc/ingest/platform/platformtest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

const twitterToken = "AAAA-test-bearer-token"

// webb is a public account with a display name of its own; its timeline
// has one post of each subtype, pages of two, and one post older than the
// backfill window.
func twitterFake(t *testing.T, now time.Time) (*platformtest.Twitter, platform.Settings) {
	f := platformtest.NewTwitter(t, twitterToken)
	f.PageSize = 2
	f.AddUser(&platformtest.TwitterUser{
		ID: "11348282", Username: "NASAWebb", Name: "NASA Webb Telescope",
		ProfileImageURL: "https://pbs.twimg.com/profile_images/webb_normal.jpg",
		Tweets: []platformtest.Tweet{
			{ID: "1001", Text: "First light from the deep field", CreatedAt: now.Add(-time.Hour),
				Media: []platformtest.TwitterMedia{{Key: "3_1", Type: "photo", URL: "https://pbs.twimg.com/media/deep.jpg"}}},
			{ID: "1002", Text: "RT @ESA: Ariane 6 is go", CreatedAt: now.Add(-2 * time.Hour), Retweeted: "900"},
			{ID: "1003", Text: "Watch this", CreatedAt: now.Add(-3 * time.Hour), Quoted: "901", QuotedDeleted: true,
				Media: []platformtest.TwitterMedia{{Key: "7_1", Type: "video", PreviewImageURL: "https://pbs.twimg.com/ext/preview.jpg",
					Variants: map[int]string{256000: "https://video.twimg.com/low.mp4", 2176000: "https://video.twimg.com/high.mp4"}}}},
			{ID: "1004", Text: "@someone Thanks! The mirror is 6.5 m across and …", CreatedAt: now.Add(-26 * time.Hour), RepliedTo: "902",
				LongText: "@someone Thanks! The mirror is 6.5 m across and made of 18 hexagonal segments of gold-coated beryllium."},
			{ID: "1005", Text: "An old post", CreatedAt: now.Add(-20 * 24 * time.Hour)},
		},
	})
	f.AddUser(&platformtest.TwitterUser{ID: "222", Username: "plainuser", Name: "plainuser",
		Tweets: []platformtest.Tweet{{ID: "2001", Text: "hello", CreatedAt: now.Add(-time.Hour)}}})
	f.AddUser(&platformtest.TwitterUser{ID: "333", Username: "lockedaccount", Name: "Locked", Protected: true})
	f.AddUser(&platformtest.TwitterUser{ID: "444", Username: "banned", Name: "Banned", Suspended: true})
	return f, platform.Settings{TwitterAPIURL: f.URL, TwitterBearerToken: twitterToken}
}

func TestATwitterSourceIsAddedOnlyForAnAccountThatExistsAndIsPublic(t *testing.T) {
	now := time.Now().UTC()
	fake, settings := twitterFake(t, now)
	h := start(t, settings)
	feed := newsFeed(t, h, "X")
	path := "/feeds/news/" + feed + "/sources"

	var sourceID string
	t.Run("an existing account answers 201 with the handle normalized", func(t *testing.T) {
		r := h.Do("POST", path, map[string]any{"sourceType": "twitter", "username": "  @NASAWebb "}).MustStatus(t, http.StatusCreated)
		att := r.Data()
		wantJSON(t, "sourceDetails", att["sourceDetails"], `{"sourceType":"twitter","username":"nasawebb"}`)
		if att["sourceType"] != "twitter" || att["newsFeedId"] != feed {
			t.Errorf("attachment %s", r.Raw)
		}
		sourceID = att["sourceId"].(string)
		if n := len(fake.RequestsTo("/2/users/by/username/nasawebb")); n != 1 {
			t.Errorf("the account was looked up %d times, want once", n)
		}
	})
	t.Run("the same account again answers 409", func(t *testing.T) {
		wantError(t, h.Do("POST", path, map[string]any{"sourceType": "microblog", "username": "nasawebb"}), http.StatusConflict, "CONFLICT")
	})
	t.Run("the neutral word is accepted and answered with the real spelling", func(t *testing.T) {
		other := newsFeed(t, h, "X2")
		r := h.Do("POST", "/feeds/news/"+other+"/sources", map[string]any{"sourceType": "microblog", "username": "NASAWEBB"}).MustStatus(t, http.StatusCreated)
		if r.Data()["sourceType"] != "twitter" || r.Data()["sourceId"] != sourceID {
			t.Errorf("attachment %s, want the shared record %s", r.Raw, sourceID)
		}
	})
	for _, tc := range []struct{ name, username, reason string }{
		{"an account that does not exist", "nobodyhere", "does not exist"},
		{"a suspended account", "banned", "suspended"},
		{"a protected account", "lockedaccount", "protected"},
		{"a username X cannot have", "no-such-name", "can have"},
	} {
		t.Run(tc.name+" answers 404 and stores nothing", func(t *testing.T) {
			r := h.Do("POST", path, map[string]any{"sourceType": "twitter", "username": tc.username})
			wantError(t, r, http.StatusNotFound, `"code":"NOT_FOUND"`, `"resource":"account"`, tc.reason)
			if strings.Contains(r.Raw, tc.username) {
				t.Errorf("the answer quotes the request: %s", r.Raw)
			}
			wantError(t, h.Do("POST", "/sources", map[string]any{"sourceType": "twitter", "username": tc.username}), http.StatusNotFound)
		})
	}
	t.Run("only the existing account was recorded", func(t *testing.T) {
		recs := h.Do("GET", "/sources", nil).MustStatus(t, http.StatusOK).List()
		if len(recs) != 1 || recs[0]["id"] != sourceID {
			t.Fatalf("records %v", recs)
		}
		wantJSON(t, "record", without(recs[0], "id", "createdAt"), `{"sourceType":"twitter","username":"nasawebb"}`)
	})
	t.Run("every request carried the bearer token", func(t *testing.T) {
		for _, r := range fake.Requests() {
			if r.Header.Get("Authorization") != "Bearer "+twitterToken {
				t.Errorf("%s %s had Authorization %q", r.Method, r.Path, r.Header.Get("Authorization"))
			}
		}
	})
}

func TestTwitterPostsBecomeNewsItemsThroughBackfillAndMonitoring(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	fake, settings := twitterFake(t, now)
	h := start(t, settings)
	feed := newsFeed(t, h, "X")
	h.Do("POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "twitter", "username": "nasawebb"}).MustStatus(t, http.StatusCreated)
	startWorker(t, h, workerConfig(300*time.Millisecond))

	base := "https://x.com/nasawebb/status/"
	wait.Until(t, 10*time.Second, "the four posts of the window", func() bool { return len(items(t, h, feed, "")) == 4 })

	t.Run("the backfill asked for the window and paged through the timeline", func(t *testing.T) {
		reqs := fake.RequestsTo("/2/users/11348282/tweets")
		if len(reqs) < 2 || reqs[1].Query.Get("pagination_token") == "" {
			t.Fatalf("timeline requests %v, want the second with a pagination_token", reqs)
		}
		start, err := time.Parse(time.RFC3339, reqs[0].Query.Get("start_time"))
		if err != nil || start.Before(now.Add(-14*24*time.Hour-time.Minute)) || start.After(now.Add(-14*24*time.Hour+time.Minute)) {
			t.Errorf("start_time %q, want 14 days ago", reqs[0].Query.Get("start_time"))
		}
		if _, old := items(t, h, feed, "")[base+"1005"]; old {
			t.Errorf("a post older than the window became an item")
		}
	})

	current := items(t, h, feed, "&include=source")
	legacy := legacyItems(t, h, feed)
	for _, tc := range []struct {
		name, id, item, block, data string
		published                   time.Time
	}{
		{
			name: "an entry with a photo", id: "1001", published: now.Add(-time.Hour),
			item: `{"description":"First light from the deep field","url":"https://x.com/nasawebb/status/1001",
				"imageUrl":"https://pbs.twimg.com/media/deep.jpg"}`,
			block: `{"type":"twitter","subtype":"entry","permalinkUrl":"https://x.com/nasawebb/status/1001",
				"text":"First light from the deep field","mediaUrl":"https://pbs.twimg.com/media/deep.jpg",
				"publisher":{"name":"NASA Webb Telescope","username":"NASAWebb","avatarUrl":"https://pbs.twimg.com/profile_images/webb_normal.jpg"}}`,
			data: `{"twitterItemId":"1001","type":"entry","permalinkUrl":"https://x.com/nasawebb/status/1001",
				"text":"First light from the deep field","mediaUrl":"https://pbs.twimg.com/media/deep.jpg",
				"account":{"id":"11348282","username":"NASAWebb","displayName":"NASA Webb Telescope","profileImageUrl":"https://pbs.twimg.com/profile_images/webb_normal.jpg"}}`,
		},
		{
			name: "a repost without media", id: "1002", published: now.Add(-2 * time.Hour),
			item: `{"description":"RT @ESA: Ariane 6 is go","url":"https://x.com/nasawebb/status/1002"}`,
			block: `{"type":"twitter","subtype":"reshare","permalinkUrl":"https://x.com/nasawebb/status/1002","text":"RT @ESA: Ariane 6 is go",
				"publisher":{"name":"NASA Webb Telescope","username":"NASAWebb","avatarUrl":"https://pbs.twimg.com/profile_images/webb_normal.jpg"}}`,
			data: `{"twitterItemId":"1002","type":"reshare","permalinkUrl":"https://x.com/nasawebb/status/1002",
				"text":"RT @ESA: Ariane 6 is go","mediaUrl":null,
				"account":{"id":"11348282","username":"NASAWebb","displayName":"NASA Webb Telescope","profileImageUrl":"https://pbs.twimg.com/profile_images/webb_normal.jpg"}}`,
		},
		{
			name: "a quote of a deleted post, with a video", id: "1003", published: now.Add(-3 * time.Hour),
			item: `{"description":"Watch this","url":"https://x.com/nasawebb/status/1003","imageUrl":"https://pbs.twimg.com/ext/preview.jpg"}`,
			block: `{"type":"twitter","subtype":"quote","permalinkUrl":"https://x.com/nasawebb/status/1003","text":"Watch this",
				"mediaUrl":"https://video.twimg.com/high.mp4",
				"publisher":{"name":"NASA Webb Telescope","username":"NASAWebb","avatarUrl":"https://pbs.twimg.com/profile_images/webb_normal.jpg"}}`,
			data: `{"twitterItemId":"1003","type":"quote","permalinkUrl":"https://x.com/nasawebb/status/1003",
				"text":"Watch this","mediaUrl":"https://video.twimg.com/high.mp4",
				"account":{"id":"11348282","username":"NASAWebb","displayName":"NASA Webb Telescope","profileImageUrl":"https://pbs.twimg.com/profile_images/webb_normal.jpg"}}`,
		},
		{
			name: "a long reply, by its whole text", id: "1004", published: now.Add(-26 * time.Hour),
			item: `{"description":"@someone Thanks! The mirror is 6.5 m across and made of 18 hexagonal segments of gold-coated beryllium.",
				"url":"https://x.com/nasawebb/status/1004"}`,
			block: `{"type":"twitter","subtype":"reply","permalinkUrl":"https://x.com/nasawebb/status/1004",
				"text":"@someone Thanks! The mirror is 6.5 m across and made of 18 hexagonal segments of gold-coated beryllium.",
				"publisher":{"name":"NASA Webb Telescope","username":"NASAWebb","avatarUrl":"https://pbs.twimg.com/profile_images/webb_normal.jpg"}}`,
			data: `{"twitterItemId":"1004","type":"reply","permalinkUrl":"https://x.com/nasawebb/status/1004",
				"text":"@someone Thanks! The mirror is 6.5 m across and made of 18 hexagonal segments of gold-coated beryllium.","mediaUrl":null,
				"account":{"id":"11348282","username":"NASAWebb","displayName":"NASA Webb Telescope","profileImageUrl":"https://pbs.twimg.com/profile_images/webb_normal.jpg"}}`,
		},
	} {
		t.Run(tc.name+" has every field of both shapes", func(t *testing.T) {
			it := current[base+tc.id]
			if it == nil {
				t.Fatalf("no item for post %s", tc.id)
			}
			if it["publishedAt"] != ms(tc.published) {
				t.Errorf("publishedAt %v, want %s", it["publishedAt"], ms(tc.published))
			}
			wantJSON(t, "item", without(it, "id", "newsPageId", "publishedAt", "createdAt", "updatedAt", "source"), tc.item)
			wantJSON(t, "source block", it["source"], tc.block)

			old := legacy[base+tc.id]
			if old == nil {
				t.Fatalf("no v0 item for post %s", tc.id)
			}
			if old["id"] != it["id"] || old["newsPageId"] != it["newsPageId"] || old["type"] != "twitter" {
				t.Errorf("v0 item %v does not match the current one %v", old, it)
			}
			data := old["data"].(map[string]any)
			if data["twitterContentId"] != it["newsPageId"] || data["publishedAt"] != ms(tc.published) {
				t.Errorf("v0 twitterContentId %v publishedAt %v", data["twitterContentId"], data["publishedAt"])
			}
			wantJSON(t, "v0 data", without(data, "twitterContentId", "publishedAt"), tc.data)
		})
	}

	t.Run("a new post appears at the next poll", func(t *testing.T) {
		fake.Post("11348282", platformtest.Tweet{ID: "1006", Text: "Brand new", CreatedAt: time.Now().UTC()})
		wait.Until(t, 15*time.Second, "the new post", func() bool { return items(t, h, feed, "")[base+"1006"] != nil })
		if n := len(items(t, h, feed, "")); n != 5 {
			t.Errorf("%d items, want 5", n)
		}
	})

	t.Run("a second feed of the account gets the same posts by backfill", func(t *testing.T) {
		second := newsFeed(t, h, "X again")
		h.Do("POST", "/feeds/news/"+second+"/sources", map[string]any{"sourceType": "twitter", "username": "nasawebb"}).MustStatus(t, http.StatusCreated)
		wait.Until(t, 15*time.Second, "the second feed's backfill", func() bool { return len(items(t, h, second, "")) == 5 })
		first := items(t, h, feed, "")
		for url, it := range items(t, h, second, "") {
			if first[url]["newsPageId"] != it["newsPageId"] || first[url]["id"] == it["id"] {
				t.Errorf("%s: newsPageId %v / %v, item ids %v / %v", url, first[url]["newsPageId"], it["newsPageId"], first[url]["id"], it["id"])
			}
		}
	})
}

func TestAnAccountWithoutADisplayNameIsPublishedUnderItsUsername(t *testing.T) {
	fake, settings := twitterFake(t, time.Now().UTC())
	_ = fake
	h := start(t, settings)
	feed := newsFeed(t, h, "X")
	h.Do("POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "twitter", "username": "plainuser"}).MustStatus(t, http.StatusCreated)
	startWorker(t, h, workerConfig(time.Hour))
	url := "https://x.com/plainuser/status/2001"
	wait.Until(t, 10*time.Second, "the post", func() bool { return items(t, h, feed, "")[url] != nil })
	wantJSON(t, "publisher", items(t, h, feed, "&include=source")[url]["source"].(map[string]any)["publisher"],
		`{"name":"plainuser","username":"plainuser"}`)
	data := legacyItems(t, h, feed)[url]["data"].(map[string]any)
	wantJSON(t, "v0 account", data["account"], `{"id":"222","username":"plainuser","displayName":null,"profileImageUrl":null}`)
}

func TestARateLimitedPlatformIsLeftAloneUntilItsReset(t *testing.T) {
	now := time.Now().UTC()
	fake, settings := twitterFake(t, now)
	h := start(t, settings)
	feed := newsFeed(t, h, "X")
	h.Do("POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "twitter", "username": "nasawebb"}).MustStatus(t, http.StatusCreated)

	reset := time.Unix(time.Now().Add(3*time.Second).Unix(), 0)
	fake.RateLimit(1, reset)
	startWorker(t, h, workerConfig(200*time.Millisecond))
	wait.Until(t, 15*time.Second, "the crawl to meet the rate limit", func() bool { return len(fake.Requests()) >= 2 })
	limitedAt := fake.Requests()[1].At

	t.Run("a source add meanwhile answers 503 and stores nothing", func(t *testing.T) {
		if time.Now().After(reset) {
			t.Skip("the reset passed before the check")
		}
		wantError(t, h.Do("POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "twitter", "username": "plainuser"}),
			http.StatusServiceUnavailable, "retry")
		if recs := h.Do("GET", "/sources", nil).List(); len(recs) != 1 {
			t.Errorf("records %v", recs)
		}
	})

	wait.Until(t, 15*time.Second, "the posts after the reset", func() bool { return len(items(t, h, feed, "")) == 4 })
	t.Run("no request reached the platform between the 429 and its reset", func(t *testing.T) {
		for _, r := range fake.Requests()[2:] {
			if r.At.Before(reset) {
				t.Errorf("%s at %s, %s after the 429, before the reset at %s", r.Path, r.At.Format(time.RFC3339Nano),
					r.At.Sub(limitedAt), reset.Format(time.RFC3339Nano))
			}
		}
	})
}

func TestPlatformSourcesWithoutAProviderAnswer400NamingTheSetting(t *testing.T) {
	h := start(t, platform.Settings{})
	feed := newsFeed(t, h, "Nothing configured")
	for _, tc := range []struct {
		name    string
		body    map[string]any
		setting string
	}{
		{"twitter", map[string]any{"sourceType": "twitter", "username": "nasa"}, "FEEDSVC_TWITTER_BEARER_TOKEN"},
		{"instagram", map[string]any{"sourceType": "instagram", "username": "nasa"}, "FEEDSVC_INSTAGRAM_ACCESS_TOKEN"},
		{"tiktok", map[string]any{"sourceType": "tiktok", "username": "nasa"}, "FEEDSVC_TIKTOK_CLIENT_KEY"},
		{"facebook", map[string]any{"sourceType": "facebook", "facebookType": "page", "identifier": "nasa"}, "FEEDSVC_FACEBOOK_ACCESS_TOKEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/feeds/news/" + feed + "/sources", "/sources"} {
				wantError(t, h.Do("POST", path, tc.body), http.StatusBadRequest,
					`"code":"VALIDATION_ERROR"`, `"field":"sourceType"`, tc.setting, "FEEDSVC_RSSHUB_URL")
			}
		})
	}
	t.Run("nothing was stored", func(t *testing.T) {
		if recs := h.Do("GET", "/sources", nil).List(); len(recs) != 0 {
			t.Errorf("records %v", recs)
		}
		if atts := h.Do("GET", "/feeds/news/"+feed+"/sources", nil).List(); len(atts) != 0 {
			t.Errorf("attachments %v", atts)
		}
	})
}
