package shape_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

var (
	itemID  = uuid.MustParse("00000000-0000-0000-0000-000000000001")
	pageID  = uuid.MustParse("00000000-0000-0000-0000-000000000002")
	version = uuid.MustParse("00000000-0000-0000-0000-000000000003")
)

func news(block domain.SourceBlock, platform *domain.PlatformIDs) shape.News {
	published := time.Date(2026, 3, 1, 9, 30, 0, 123_456_789, time.FixedZone("CET", 3600))
	return shape.News{
		ID: itemID, NewsPageID: pageID, VersionID: version,
		URL: " https://example.com/a ", Title: " A title ", Description: "  ", ImageURL: "",
		PublishedAt: &published, CreatedAt: t0, UpdatedAt: t0.Add(time.Second),
		Block: block, Platform: platform,
	}
}

func encoded(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNewsItemsRenderInTheirShapes(t *testing.T) {
	site := domain.SiteBlock("https://example.com/a")
	post := domain.SourceBlock{
		Type: string(domain.SourceInstagram), Subtype: "image", PermalinkURL: "https://instagram.com/p/abc",
		Caption: "A caption", Publisher: &domain.Publisher{Name: "Shop", Username: "shop"},
	}
	ids := &domain.PlatformIDs{PostID: "17", Code: "abc", AccountID: "42"}
	cases := []struct {
		name string
		got  any
		want string
	}{
		{"the current shape trims, omits what is empty and writes times in UTC to the millisecond",
			shape.CurrentNews(news(site, nil), false),
			`{"id":"00000000-0000-0000-0000-000000000001","newsPageId":"00000000-0000-0000-0000-000000000002","title":"A title","url":"https://example.com/a","publishedAt":"2026-03-01T08:30:00.123Z","createdAt":"2026-12-01T18:00:00.000Z","updatedAt":"2026-12-01T18:00:01.000Z"}`},
		{"the current shape shows the source block when asked",
			shape.CurrentNews(news(site, nil), true),
			`{"id":"00000000-0000-0000-0000-000000000001","newsPageId":"00000000-0000-0000-0000-000000000002","title":"A title","url":"https://example.com/a","publishedAt":"2026-03-01T08:30:00.123Z","createdAt":"2026-12-01T18:00:00.000Z","updatedAt":"2026-12-01T18:00:01.000Z","source":{"type":"site","url":"https://example.com/a"}}`},
		{"the legacy shape shows a page as a site page with nulls",
			shape.LegacyNews(news(site, nil)),
			`{"id":"00000000-0000-0000-0000-000000000001","newsPageId":"00000000-0000-0000-0000-000000000002","type":"site","data":{"sitePageId":"00000000-0000-0000-0000-000000000002","sitePageVersionId":"00000000-0000-0000-0000-000000000003","url":" https://example.com/a ","title":"A title","description":null},"createdAt":"2026-12-01T18:00:00.000Z","updatedAt":"2026-12-01T18:00:01.000Z"}`},
		{"the legacy shape shows a post as its platform's data",
			shape.LegacyNews(news(post, ids)),
			`{"id":"00000000-0000-0000-0000-000000000001","newsPageId":"00000000-0000-0000-0000-000000000002","type":"instagram","data":{"instagramContentId":"00000000-0000-0000-0000-000000000002","code":"abc","type":"image","permalinkUrl":"https://instagram.com/p/abc","caption":"A caption","mediaUrl":null,"thumbnailUrl":null,"publishedAt":"2026-03-01T08:30:00.123Z","account":{"id":"42","username":"shop","fullName":null,"profilePicUrl":null}},"createdAt":"2026-12-01T18:00:00.000Z","updatedAt":"2026-12-01T18:00:01.000Z"}`},
		{"a post stored without its platform's ids stays a site page",
			shape.LegacyNews(news(post, nil)),
			`{"id":"00000000-0000-0000-0000-000000000001","newsPageId":"00000000-0000-0000-0000-000000000002","type":"site","data":{"sitePageId":"00000000-0000-0000-0000-000000000002","sitePageVersionId":"00000000-0000-0000-0000-000000000003","url":" https://example.com/a ","title":"A title","description":null},"createdAt":"2026-12-01T18:00:00.000Z","updatedAt":"2026-12-01T18:00:01.000Z"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := encoded(t, tc.got); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestADeliveryBodyCarriesTheEventItsTimeAndItsData(t *testing.T) {
	b, err := shape.DeliveryBody(domain.WebhookItemAdded, t0.In(time.FixedZone("X", -5*3600)), json.RawMessage(`{"id":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"event":"event.item_added","timestamp":"2026-12-01T18:00:00.000Z","data":{"id":"x"}}`; string(b) != want {
		t.Fatalf("body %s, want %s", b, want)
	}
}
