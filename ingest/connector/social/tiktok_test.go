package social_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/platform"
	"github.com/feedsvc/feedsvc/ingest/platform/platformtest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

func tiktokFake(t *testing.T, now time.Time) (*platformtest.TikTok, platform.Settings) {
	f := platformtest.NewTikTok(t, "awtest123", "tiktok-client-secret")
	f.PageSize = 2
	f.AddAccount(&platformtest.TikTokAccount{
		Username: "nasa", DisplayName: "NASA Official", AvatarURL: "https://p16-sign.tiktokcdn.com/nasa.jpeg",
		Videos: []platformtest.TikTokVideo{
			{ID: 7301234567890123451, Description: "Liftoff! #space", Created: now.Add(-time.Hour)},
			{ID: 7301234567890123452, Description: "", Created: now.Add(-30 * time.Hour)},
			{ID: 7301234567890123453, Description: "Astronaut Q&A", Created: now.Add(-6 * 24 * time.Hour)},
			{ID: 7301234567890123454, Description: "Old one", Created: now.Add(-20 * 24 * time.Hour)},
		},
	})
	f.AddAccount(&platformtest.TikTokAccount{Username: "hiddenperson", Private: true})
	return f, platform.Settings{TikTokAPIURL: f.URL, TikTokClientKey: "awtest123", TikTokClientSecret: "tiktok-client-secret"}
}

func TestATikTokSourceIsAddedOnlyForAPublicAccount(t *testing.T) {
	_, settings := tiktokFake(t, time.Now().UTC())
	h := start(t, settings)
	feed := newsFeed(t, h, "TT")
	path := "/feeds/news/" + feed + "/sources"
	r := h.Do("POST", path, map[string]any{"sourceType": "shortvideo", "username": "@NASA"}).MustStatus(t, http.StatusCreated)
	wantJSON(t, "sourceDetails", r.Data()["sourceDetails"], `{"sourceType":"tiktok","username":"nasa"}`)
	wantError(t, h.Do("POST", path, map[string]any{"sourceType": "tiktok", "username": "nasa"}), http.StatusConflict)
	for _, u := range []string{"hiddenperson", "nobodyatall", "x"} {
		wantError(t, h.Do("POST", path, map[string]any{"sourceType": "tiktok", "username": u}), http.StatusNotFound, `"resource":"account"`)
	}
	if recs := h.Do("GET", "/sources", nil).List(); len(recs) != 1 {
		t.Errorf("records %v", recs)
	}
}

func TestTikTokVideosBecomeNewsItems(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	fake, settings := tiktokFake(t, now)
	h := start(t, settings)
	feed := newsFeed(t, h, "TT")
	h.Do("POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "tiktok", "username": "nasa"}).MustStatus(t, http.StatusCreated)
	startWorker(t, h, workerConfig(300*time.Millisecond))
	wait.Until(t, 10*time.Second, "the three videos of the window", func() bool { return len(items(t, h, feed, "")) == 3 })

	t.Run("the query asked for the account's videos of the window's days and paged by cursor", func(t *testing.T) {
		reqs := fake.RequestsTo("/v2/research/video/query/")
		var first, second struct {
			Query struct {
				And []struct {
					FieldName   string   `json:"field_name"`
					FieldValues []string `json:"field_values"`
				} `json:"and"`
			} `json:"query"`
			StartDate string `json:"start_date"`
			EndDate   string `json:"end_date"`
			Cursor    int    `json:"cursor"`
			SearchID  string `json:"search_id"`
		}
		if len(reqs) < 2 {
			t.Fatalf("%d video queries, want paging", len(reqs))
		}
		_ = json.Unmarshal([]byte(reqs[0].Body), &first)
		_ = json.Unmarshal([]byte(reqs[1].Body), &second)
		if first.StartDate != now.Add(-14*24*time.Hour).Format("20060102") || first.EndDate != now.Format("20060102") {
			t.Errorf("dates %s to %s", first.StartDate, first.EndDate)
		}
		if second.Cursor != 2 || second.SearchID == "" {
			t.Errorf("second page asked with cursor %d search_id %q", second.Cursor, second.SearchID)
		}
		if len(first.Query.And) != 1 || first.Query.And[0].FieldName != "username" || len(first.Query.And[0].FieldValues) != 1 ||
			first.Query.And[0].FieldValues[0] != "nasa" {
			t.Errorf("query %s", reqs[0].Body)
		}
		if got := reqs[0].Query.Get("fields"); got != "id,video_description,create_time,username" {
			t.Errorf("fields %q", got)
		}
	})

	publisher := `{"name":"NASA Official","username":"nasa","avatarUrl":"https://p16-sign.tiktokcdn.com/nasa.jpeg"}`
	account := `{"id":"nasa","username":"nasa","displayName":"NASA Official","profilePicUrl":"https://p16-sign.tiktokcdn.com/nasa.jpeg"}`
	current := items(t, h, feed, "&include=source")
	legacy := legacyItems(t, h, feed)
	for _, tc := range []struct {
		name, id, caption string
		published         time.Time
	}{
		{"a video with a caption", "7301234567890123451", "Liftoff! #space", now.Add(-time.Hour)},
		{"a video without a caption", "7301234567890123452", "", now.Add(-30 * time.Hour)},
		{"a video of last week", "7301234567890123453", "Astronaut Q&A", now.Add(-6 * 24 * time.Hour)},
	} {
		t.Run(tc.name+" has every field of both shapes", func(t *testing.T) {
			url := "https://www.tiktok.com/@nasa/video/" + tc.id
			it := current[url]
			if it == nil {
				t.Fatalf("no item for %s among %v", url, keys(current))
			}
			if it["publishedAt"] != ms(tc.published) {
				t.Errorf("publishedAt %v, want %s", it["publishedAt"], ms(tc.published))
			}
			item, block, caption := map[string]any{"url": url}, `{"type":"tiktok","subtype":"video","permalinkUrl":"`+url+`","publisher":`+publisher+`}`, "null"
			if tc.caption != "" {
				item["description"] = tc.caption
				block = `{"type":"tiktok","subtype":"video","permalinkUrl":"` + url + `","caption":"` + tc.caption + `","publisher":` + publisher + `}`
				caption = `"` + tc.caption + `"`
			}
			b, _ := json.Marshal(item)
			wantJSON(t, "item", without(it, "id", "newsPageId", "publishedAt", "createdAt", "updatedAt", "source"), string(b))
			wantJSON(t, "source block", it["source"], block)
			old := legacy[url]
			if old == nil || old["type"] != "tiktok" || old["id"] != it["id"] {
				t.Fatalf("v0 item %v", old)
			}
			data := old["data"].(map[string]any)
			if data["tiktokContentId"] != it["newsPageId"] || data["publishedAt"] != ms(tc.published) {
				t.Errorf("v0 tiktokContentId %v publishedAt %v", data["tiktokContentId"], data["publishedAt"])
			}
			wantJSON(t, "v0 data", without(data, "tiktokContentId", "publishedAt"),
				`{"tiktokId":"`+tc.id+`","type":"video","permalinkUrl":"`+url+`","caption":`+caption+`,"mediaUrl":null,"thumbnailUrl":null,"account":`+account+`}`)
		})
	}

	t.Run("a revoked token is replaced and the next video still arrives", func(t *testing.T) {
		issued := fake.Issued()
		fake.RevokeTokens()
		fake.Publish("nasa", platformtest.TikTokVideo{ID: 7301234567890123455, Description: "New", Created: time.Now().UTC()})
		wait.Until(t, 15*time.Second, "the new video", func() bool {
			return items(t, h, feed, "")["https://www.tiktok.com/@nasa/video/7301234567890123455"] != nil
		})
		if fake.Issued() != issued+1 {
			t.Errorf("%d tokens issued after the revocation, want one more than %d", fake.Issued(), issued)
		}
	})
	t.Run("the client secret went only to the token endpoint", func(t *testing.T) {
		for _, r := range fake.Requests() {
			if r.Path != "/v2/oauth/token/" && (strings.Contains(r.Body, "tiktok-client-secret") || strings.Contains(r.Header.Get("Authorization"), "tiktok-client-secret")) {
				t.Errorf("%s carried the client secret", r.Path)
			}
		}
	})
}
