package social_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/platform"
	"github.com/feedsvc/feedsvc/ingest/platform/platformtest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

const (
	facebookToken = "EAAB-test-page-token"
	nasaPage      = "100044561550831"
)

func ptr(f float64) *float64 { return &f }

func facebookFake(t *testing.T, now time.Time) (*platformtest.Facebook, platform.Settings) {
	f := platformtest.NewFacebook(t, facebookToken)
	f.PageSize = 2
	f.AddPage(&platformtest.FacebookPage{
		ID: nasaPage, Name: "NASA - National Aeronautics and Space Administration", Username: "NASA",
		PictureURL: "https://scontent.xx.fbcdn.net/nasa.png",
		Posts: []platformtest.FacebookPost{
			{ID: nasaPage + "_1001", Message: "A new image of the Pillars of Creation", AttachmentType: "photo",
				PermalinkURL: "https://www.facebook.com/NASA/posts/pfbid0001", FullPicture: "https://scontent.xx.fbcdn.net/pillars.jpg",
				Created: now.Add(-time.Hour)},
			{ID: nasaPage + "_1002", Message: "Watch the launch live", AttachmentType: "video_inline",
				PermalinkURL: "https://www.facebook.com/NASA/videos/1002", FullPicture: "https://scontent.xx.fbcdn.net/launch.jpg",
				Created: now.Add(-3 * time.Hour)},
			{ID: nasaPage + "_1003", Message: "Read the full story", AttachmentType: "share",
				PermalinkURL: "https://www.facebook.com/NASA/posts/pfbid0003", FullPicture: "https://scontent.xx.fbcdn.net/story.jpg",
				Created: now.Add(-50 * time.Hour)},
			{ID: nasaPage + "_1004", Message: "Good morning from the ISS", Created: now.Add(-4 * 24 * time.Hour)},
			{ID: nasaPage + "_1005", Message: "From the archive", Created: now.Add(-40 * 24 * time.Hour)},
		},
		Events: []platformtest.FacebookEvent{{
			ID: "2001", Name: "Artemis Launch Viewing", Description: "Watch the launch with us.",
			Timezone: "America/New_York", Offset: -5 * 3600,
			Start: now.Add(10 * 24 * time.Hour).Truncate(time.Hour), End: now.Add(10*24*time.Hour + 3*time.Hour).Truncate(time.Hour),
			PlaceName: "Kennedy Space Center Visitor Complex", Street: "Space Commerce Way", City: "Merritt Island", Zip: "32953",
			State: "FL", Country: "United States", Latitude: ptr(28.5232), Longitude: ptr(-80.6816),
			TicketURI: "https://www.kennedyspacecenter.com/tickets", CoverURL: "https://scontent.xx.fbcdn.net/artemis.jpg",
			Updated: now.Add(-2 * 24 * time.Hour),
		}},
	})
	return f, platform.Settings{FacebookAPIURL: f.URL, FacebookAccessToken: facebookToken}
}

func TestAFacebookSourceIsAddedOnlyForAPageTheTokenCanRead(t *testing.T) {
	_, settings := facebookFake(t, time.Now().UTC())
	h := start(t, settings)
	feed := newsFeed(t, h, "FB")
	path := "/feeds/news/" + feed + "/sources"

	r := h.Do("POST", path, map[string]any{"sourceType": "socialnet", "socialnetType": "page", "identifier": "@NASA"}).MustStatus(t, http.StatusCreated)
	wantJSON(t, "sourceDetails", r.Data()["sourceDetails"], `{"sourceType":"facebook","facebookType":"page","identifier":"NASA"}`)
	wantError(t, h.Do("POST", path, map[string]any{"sourceType": "facebook", "facebookType": "page", "identifier": "nasa"}), http.StatusConflict)
	other := newsFeed(t, h, "FB by id")
	h.Do("POST", "/feeds/news/"+other+"/sources", map[string]any{"sourceType": "facebook", "facebookType": "page", "identifier": nasaPage}).
		MustStatus(t, http.StatusCreated)
	for _, tc := range []struct{ name, kind, id, reason string }{
		{"a group", "group", "nasafans", "groups cannot be accessed"},
		{"a profile", "profile", "someone", "profiles cannot be accessed"},
		{"an unknown page name", "page", "nosuchpage", "no Facebook page"},
		{"an unknown page id", "page", "123456789", "no Facebook page"},
	} {
		t.Run(tc.name+" answers 404", func(t *testing.T) {
			wantError(t, h.Do("POST", path, map[string]any{"sourceType": "facebook", "facebookType": tc.kind, "identifier": tc.id}),
				http.StatusNotFound, `"resource":"account"`, tc.reason)
		})
	}
	if recs := h.Do("GET", "/sources", nil).List(); len(recs) != 2 {
		t.Errorf("records %v, want the page by name and by id", recs)
	}
}

func TestFacebookPagePostsBecomeNewsItems(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	_, settings := facebookFake(t, now)
	h := start(t, settings)
	feed := newsFeed(t, h, "FB")
	h.Do("POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "facebook", "facebookType": "page", "identifier": "nasa"}).
		MustStatus(t, http.StatusCreated)
	startWorker(t, h, workerConfig(300*time.Millisecond))
	wait.Until(t, 10*time.Second, "four posts and the event", func() bool { return len(items(t, h, feed, "")) == 5 })

	name := "NASA - National Aeronautics and Space Administration"
	publisher := `{"name":"` + name + `","username":"NASA","avatarUrl":"https://scontent.xx.fbcdn.net/nasa.png","type":"page"}`
	source := `{"id":"` + nasaPage + `","name":"` + name + `","username":"NASA"}`
	current := items(t, h, feed, "&include=source")
	legacy := legacyItems(t, h, feed)
	for _, tc := range []struct {
		name, url, id, item, block, data string
		published                        time.Time
	}{
		{
			name: "a photo post", url: "https://www.facebook.com/NASA/posts/pfbid0001", id: nasaPage + "_1001", published: now.Add(-time.Hour),
			item: `{"description":"A new image of the Pillars of Creation","url":"https://www.facebook.com/NASA/posts/pfbid0001","imageUrl":"https://scontent.xx.fbcdn.net/pillars.jpg"}`,
			block: `{"type":"facebook","subtype":"photo","permalinkUrl":"https://www.facebook.com/NASA/posts/pfbid0001",
				"text":"A new image of the Pillars of Creation","mediaUrl":"https://scontent.xx.fbcdn.net/pillars.jpg","publisher":` + publisher + `}`,
			data: `{"type":"photo","permalinkUrl":"https://www.facebook.com/NASA/posts/pfbid0001","text":"A new image of the Pillars of Creation",
				"mediaUrl":"https://scontent.xx.fbcdn.net/pillars.jpg","source":` + source + `}`,
		},
		{
			name: "a video post", url: "https://www.facebook.com/NASA/videos/1002", id: nasaPage + "_1002", published: now.Add(-3 * time.Hour),
			item: `{"description":"Watch the launch live","url":"https://www.facebook.com/NASA/videos/1002","imageUrl":"https://scontent.xx.fbcdn.net/launch.jpg"}`,
			block: `{"type":"facebook","subtype":"video","permalinkUrl":"https://www.facebook.com/NASA/videos/1002",
				"text":"Watch the launch live","mediaUrl":"https://scontent.xx.fbcdn.net/launch.jpg","publisher":` + publisher + `}`,
			data: `{"type":"video","permalinkUrl":"https://www.facebook.com/NASA/videos/1002","text":"Watch the launch live",
				"mediaUrl":"https://scontent.xx.fbcdn.net/launch.jpg","source":` + source + `}`,
		},
		{
			name: "a link post", url: "https://www.facebook.com/NASA/posts/pfbid0003", id: nasaPage + "_1003", published: now.Add(-50 * time.Hour),
			item: `{"description":"Read the full story","url":"https://www.facebook.com/NASA/posts/pfbid0003","imageUrl":"https://scontent.xx.fbcdn.net/story.jpg"}`,
			block: `{"type":"facebook","subtype":"link","permalinkUrl":"https://www.facebook.com/NASA/posts/pfbid0003",
				"text":"Read the full story","mediaUrl":"https://scontent.xx.fbcdn.net/story.jpg","publisher":` + publisher + `}`,
			data: `{"type":"link","permalinkUrl":"https://www.facebook.com/NASA/posts/pfbid0003","text":"Read the full story",
				"mediaUrl":"https://scontent.xx.fbcdn.net/story.jpg","source":` + source + `}`,
		},
		{
			name: "a status without a permalink", url: "https://www.facebook.com/" + nasaPage + "/posts/1004", id: nasaPage + "_1004",
			published: now.Add(-4 * 24 * time.Hour),
			item:      `{"description":"Good morning from the ISS","url":"https://www.facebook.com/` + nasaPage + `/posts/1004"}`,
			block: `{"type":"facebook","subtype":"post","permalinkUrl":"https://www.facebook.com/` + nasaPage + `/posts/1004",
				"text":"Good morning from the ISS","publisher":` + publisher + `}`,
			data: `{"type":"post","permalinkUrl":"https://www.facebook.com/` + nasaPage + `/posts/1004","text":"Good morning from the ISS",
				"mediaUrl":null,"source":` + source + `}`,
		},
		{
			name: "a page event, by its name", url: "https://www.facebook.com/events/2001/", id: "2001", published: now.Add(-2 * 24 * time.Hour),
			item: `{"title":"Artemis Launch Viewing","description":"Watch the launch with us.","url":"https://www.facebook.com/events/2001/",
				"imageUrl":"https://scontent.xx.fbcdn.net/artemis.jpg"}`,
			block: `{"type":"facebook","subtype":"event","permalinkUrl":"https://www.facebook.com/events/2001/",
				"text":"Watch the launch with us.","mediaUrl":"https://scontent.xx.fbcdn.net/artemis.jpg","publisher":` + publisher + `}`,
			data: `{"type":"event","permalinkUrl":"https://www.facebook.com/events/2001/","text":"Watch the launch with us.",
				"mediaUrl":"https://scontent.xx.fbcdn.net/artemis.jpg","source":` + source + `}`,
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
			if old == nil || old["type"] != "facebook" || old["id"] != it["id"] {
				t.Fatalf("v0 item %v", old)
			}
			data := old["data"].(map[string]any)
			if data["facebookContentId"] != it["newsPageId"] || data["facebookId"] != tc.id || data["publishedAt"] != ms(tc.published) {
				t.Errorf("v0 facebookContentId %v facebookId %v publishedAt %v", data["facebookContentId"], data["facebookId"], data["publishedAt"])
			}
			wantJSON(t, "v0 data", without(data, "facebookContentId", "facebookId", "publishedAt"), tc.data)
		})
	}
}
