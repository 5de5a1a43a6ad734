package social_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/platform"
	"github.com/feedsvc/feedsvc/ingest/platform/platformtest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

func rsshubFake(t *testing.T, now time.Time) *platformtest.RSSHub {
	f := platformtest.NewRSSHub(t)
	f.Route("/twitter/user/nasawebb", platformtest.RSSFeed{Title: "Twitter @NASA Webb Telescope", Link: "https://x.com/NASAWebb", Items: []platformtest.RSSItem{
		{Title: "First light from the deep field", Text: "First light from the deep field", Image: "https://pbs.twimg.com/media/deep.jpg",
			Link: "https://x.com/NASAWebb/status/1001", Author: "NASA Webb Telescope", Published: now.Add(-time.Hour)},
		{Title: "RT ESA: Ariane 6 is go", Text: "RT ESA: Ariane 6 is go", Link: "https://x.com/NASAWebb/status/1002",
			Author: "NASA Webb Telescope", Published: now.Add(-2 * time.Hour)},
		{Title: "An old post", Text: "An old post", Link: "https://x.com/NASAWebb/status/1005", Published: now.Add(-20 * 24 * time.Hour)},
	}})
	f.Route("/instagram/user/nasa", platformtest.RSSFeed{Title: "nasa's Instagram", Link: "https://www.instagram.com/nasa/", Items: []platformtest.RSSItem{
		{Title: "Saturn's rings", Text: "Saturn's rings, up close", Image: "https://scontent.cdninstagram.com/saturn.jpg",
			Link: "https://www.instagram.com/nasa/p/C0aaaaaaaaa/", Published: now.Add(-time.Hour)},
		{Title: "Launch day!", Text: "Launch day!", Image: "https://scontent.cdninstagram.com/launch.jpg",
			Link: "https://www.instagram.com/reel/R0bbbbbbbbb/", Published: now.Add(-5 * time.Hour)},
	}})
	f.Route("/tiktok/user/@nasa", platformtest.RSSFeed{Title: "NASA (@nasa) TikTok", Link: "https://www.tiktok.com/@nasa", Items: []platformtest.RSSItem{
		{Title: "Liftoff!", Text: "Liftoff! #space", Image: "https://p16-sign.tiktokcdn.com/cover.jpeg",
			Link: "https://www.tiktok.com/@nasa/video/7301234567890123451", Published: now.Add(-time.Hour)},
	}})
	f.Route("/facebook/page/nasa", platformtest.RSSFeed{Title: "NASA", Link: "https://www.facebook.com/nasa", Items: []platformtest.RSSItem{
		{Title: "Pillars", Text: "A new image of the Pillars of Creation", Image: "https://scontent.xx.fbcdn.net/pillars.jpg",
			Link: "https://www.facebook.com/NASA/posts/pfbid0001", Published: now.Add(-time.Hour)},
	}})
	f.Break("/twitter/user/brokenaccount")
	return f
}

func TestRSSHubIsTheProviderOfPlatformsWithoutAPICredentials(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	hub := rsshubFake(t, now)
	h := start(t, platform.Settings{RSSHubURL: hub.URL})
	feed := newsFeed(t, h, "Through RSSHub")
	path := "/feeds/news/" + feed + "/sources"

	t.Run("sources are looked up through their RSSHub route", func(t *testing.T) {
		for _, body := range []map[string]any{
			{"sourceType": "twitter", "username": "@NASAWebb"},
			{"sourceType": "instagram", "username": "nasa"},
			{"sourceType": "tiktok", "username": "nasa"},
			{"sourceType": "facebook", "facebookType": "page", "identifier": "nasa"},
		} {
			h.Do("POST", path, body).MustStatus(t, http.StatusCreated)
		}
		for _, route := range []string{"/twitter/user/nasawebb", "/instagram/user/nasa", "/tiktok/user/@nasa", "/facebook/page/nasa"} {
			if len(hub.RequestsTo(route)) != 1 {
				t.Errorf("%s was asked %d times, want once", route, len(hub.RequestsTo(route)))
			}
		}
	})
	t.Run("an account RSSHub cannot find answers 404, a failing route 503, a group 404", func(t *testing.T) {
		wantError(t, h.Do("POST", path, map[string]any{"sourceType": "twitter", "username": "nobodyhere"}), http.StatusNotFound, "RSSHub")
		wantError(t, h.Do("POST", path, map[string]any{"sourceType": "twitter", "username": "brokenaccount"}), http.StatusServiceUnavailable)
		wantError(t, h.Do("POST", path, map[string]any{"sourceType": "facebook", "facebookType": "group", "identifier": "fans"}),
			http.StatusNotFound, "groups cannot be accessed")
		if recs := h.Do("GET", "/sources", nil).List(); len(recs) != 4 {
			t.Errorf("%d records, want the four accounts", len(recs))
		}
	})

	startWorker(t, h, workerConfig(time.Hour))
	wait.Until(t, 10*time.Second, "the posts of the window", func() bool { return len(items(t, h, feed, "")) == 6 })
	current := items(t, h, feed, "&include=source")
	legacy := legacyItems(t, h, feed)
	for _, tc := range []struct{ name, url, item, block, legacyType, data string }{
		{
			name: "a tweet, at the address the API gives it", url: "https://x.com/nasawebb/status/1001",
			item: `{"description":"First light from the deep field","url":"https://x.com/nasawebb/status/1001","imageUrl":"https://pbs.twimg.com/media/deep.jpg"}`,
			block: `{"type":"twitter","subtype":"entry","permalinkUrl":"https://x.com/nasawebb/status/1001","text":"First light from the deep field",
				"mediaUrl":"https://pbs.twimg.com/media/deep.jpg","publisher":{"name":"nasawebb","username":"nasawebb"}}`,
			legacyType: "twitter",
			data: `{"twitterItemId":"1001","type":"entry","permalinkUrl":"https://x.com/nasawebb/status/1001","text":"First light from the deep field",
				"mediaUrl":"https://pbs.twimg.com/media/deep.jpg","account":{"id":"nasawebb","username":"nasawebb","displayName":null,"profileImageUrl":null}}`,
		},
		{
			name: "a repost", url: "https://x.com/nasawebb/status/1002",
			item:       `{"description":"RT ESA: Ariane 6 is go","url":"https://x.com/nasawebb/status/1002"}`,
			block:      `{"type":"twitter","subtype":"reshare","permalinkUrl":"https://x.com/nasawebb/status/1002","text":"RT ESA: Ariane 6 is go","publisher":{"name":"nasawebb","username":"nasawebb"}}`,
			legacyType: "twitter",
			data: `{"twitterItemId":"1002","type":"reshare","permalinkUrl":"https://x.com/nasawebb/status/1002","text":"RT ESA: Ariane 6 is go",
				"mediaUrl":null,"account":{"id":"nasawebb","username":"nasawebb","displayName":null,"profileImageUrl":null}}`,
		},
		{
			name: "an Instagram post, by its shortcode", url: "https://www.instagram.com/p/C0aaaaaaaaa/",
			item: `{"description":"Saturn's rings, up close","url":"https://www.instagram.com/p/C0aaaaaaaaa/","imageUrl":"https://scontent.cdninstagram.com/saturn.jpg"}`,
			block: `{"type":"instagram","subtype":"post","permalinkUrl":"https://www.instagram.com/p/C0aaaaaaaaa/","caption":"Saturn's rings, up close",
				"mediaUrl":"https://scontent.cdninstagram.com/saturn.jpg","publisher":{"name":"nasa","username":"nasa"}}`,
			legacyType: "instagram",
			data: `{"code":"C0aaaaaaaaa","type":"post","permalinkUrl":"https://www.instagram.com/p/C0aaaaaaaaa/","caption":"Saturn's rings, up close",
				"mediaUrl":"https://scontent.cdninstagram.com/saturn.jpg","thumbnailUrl":null,"account":{"id":"nasa","username":"nasa","fullName":null,"profilePicUrl":null}}`,
		},
		{
			name: "an Instagram reel", url: "https://www.instagram.com/reel/R0bbbbbbbbb/",
			item: `{"description":"Launch day!","url":"https://www.instagram.com/reel/R0bbbbbbbbb/","imageUrl":"https://scontent.cdninstagram.com/launch.jpg"}`,
			block: `{"type":"instagram","subtype":"reel","permalinkUrl":"https://www.instagram.com/reel/R0bbbbbbbbb/","caption":"Launch day!",
				"mediaUrl":"https://scontent.cdninstagram.com/launch.jpg","publisher":{"name":"nasa","username":"nasa"}}`,
			legacyType: "instagram",
			data: `{"code":"R0bbbbbbbbb","type":"reel","permalinkUrl":"https://www.instagram.com/reel/R0bbbbbbbbb/","caption":"Launch day!",
				"mediaUrl":"https://scontent.cdninstagram.com/launch.jpg","thumbnailUrl":null,"account":{"id":"nasa","username":"nasa","fullName":null,"profilePicUrl":null}}`,
		},
		{
			name: "a TikTok video, with its cover as thumbnail", url: "https://www.tiktok.com/@nasa/video/7301234567890123451",
			item: `{"description":"Liftoff! #space","url":"https://www.tiktok.com/@nasa/video/7301234567890123451","imageUrl":"https://p16-sign.tiktokcdn.com/cover.jpeg"}`,
			block: `{"type":"tiktok","subtype":"video","permalinkUrl":"https://www.tiktok.com/@nasa/video/7301234567890123451","caption":"Liftoff! #space",
				"thumbnailUrl":"https://p16-sign.tiktokcdn.com/cover.jpeg","publisher":{"name":"nasa","username":"nasa"}}`,
			legacyType: "tiktok",
			data: `{"tiktokId":"7301234567890123451","type":"video","permalinkUrl":"https://www.tiktok.com/@nasa/video/7301234567890123451","caption":"Liftoff! #space",
				"mediaUrl":null,"thumbnailUrl":"https://p16-sign.tiktokcdn.com/cover.jpeg","account":{"id":"nasa","username":"nasa","displayName":null,"profilePicUrl":null}}`,
		},
		{
			name: "a Facebook page post", url: "https://www.facebook.com/NASA/posts/pfbid0001",
			item: `{"description":"A new image of the Pillars of Creation","url":"https://www.facebook.com/NASA/posts/pfbid0001","imageUrl":"https://scontent.xx.fbcdn.net/pillars.jpg"}`,
			block: `{"type":"facebook","subtype":"post","permalinkUrl":"https://www.facebook.com/NASA/posts/pfbid0001","text":"A new image of the Pillars of Creation",
				"mediaUrl":"https://scontent.xx.fbcdn.net/pillars.jpg","publisher":{"name":"nasa","username":"nasa","type":"page"}}`,
			legacyType: "facebook",
			data: `{"facebookId":"pfbid0001","type":"post","permalinkUrl":"https://www.facebook.com/NASA/posts/pfbid0001","text":"A new image of the Pillars of Creation",
				"mediaUrl":"https://scontent.xx.fbcdn.net/pillars.jpg","source":{"id":"nasa","name":"nasa","username":"nasa"}}`,
		},
	} {
		t.Run(tc.name+" has the fields RSSHub can give", func(t *testing.T) {
			it := current[tc.url]
			if it == nil {
				t.Fatalf("no item for %s among %v", tc.url, keys(current))
			}
			wantJSON(t, "item", without(it, "id", "newsPageId", "publishedAt", "createdAt", "updatedAt", "source"), tc.item)
			wantJSON(t, "source block", it["source"], tc.block)
			old := legacy[tc.url]
			if old == nil || old["type"] != tc.legacyType {
				t.Fatalf("v0 item %v", old)
			}
			data := without(old["data"].(map[string]any), "publishedAt", tc.legacyType+"ContentId")
			wantJSON(t, "v0 data", data, tc.data)
		})
	}
}

func TestAPlatformsAPIIsPreferredToRSSHub(t *testing.T) {
	now := time.Now().UTC()
	hub := rsshubFake(t, now)
	tw, settings := twitterFake(t, now)
	settings.RSSHubURL = hub.URL
	h := start(t, settings)
	feed := newsFeed(t, h, "Both")
	h.Do("POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "twitter", "username": "nasawebb"}).MustStatus(t, http.StatusCreated)
	h.Do("POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "instagram", "username": "nasa"}).MustStatus(t, http.StatusCreated)
	if len(tw.RequestsTo("/2/users/by/username/nasawebb")) != 1 || len(hub.RequestsTo("/twitter/user/nasawebb")) != 0 {
		t.Errorf("twitter was not looked up through its API")
	}
	if len(hub.RequestsTo("/instagram/user/nasa")) != 1 {
		t.Errorf("instagram, without credentials, was not looked up through RSSHub")
	}
}
