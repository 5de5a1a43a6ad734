package http_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/feedback"
	"github.com/feedsvc/feedsvc/readmodel/feeds"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// itemFixture is a feed of acme with items put in through the real
// commands (as the crawler would) and projected by the real projectors.
type itemFixture struct {
	h      *servicetest.Harness
	feedID string
	items  []string // item ids, oldest first
}

func newItemFixture(t testing.TB, contents ...domain.ArticleContent) *itemFixture {
	t.Helper()
	h := servicetest.Start(t)
	feed := h.Do("POST", "/feeds/news", map[string]string{"name": "items", "description": "d"}).MustStatus(t, 201).Data()
	att := h.Do("POST", "/feeds/news/"+feed["id"].(string)+"/sources", map[string]string{"sourceType": "site", "domain": "news.example"}).MustStatus(t, 201).Data()
	f := &itemFixture{h: h, feedID: feed["id"].(string)}
	for _, c := range contents {
		f.items = append(f.items, f.add(t, att, c))
	}
	return f
}

func (f *itemFixture) add(t testing.TB, att map[string]any, c domain.ArticleContent) string {
	t.Helper()
	ctx := context.Background()
	svc := f.h.Service
	sourceID := uuid.MustParse(att["sourceId"].(string))
	d, _, err := svc.Commands.DiscoverArticle(ctx, commands.DiscoverArticle{SourceID: sourceID, Content: c})
	if err != nil {
		t.Fatal(err)
	}
	feedID := uuid.MustParse(f.feedID)
	org, err := feeds.NewQueries(svc.DB.Bun).FeedSource(ctx, domain.FeedNews, f.orgOf(t), feedID, uuid.MustParse(att["id"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	added, res, err := svc.Commands.AddNewsItem(ctx, commands.AddNewsItem{
		ItemTarget: domain.ItemTarget{FeedID: feedID, OrganizationID: org.OrganizationID, AttachmentID: org.ID, SourceID: sourceID,
			SourceType: domain.SourceSite}, Article: d.ArticleDiscovered,
	})
	if err != nil || !added {
		t.Fatalf("add item: added %v err %v", added, err)
	}
	if err := svc.Waiter.Wait(ctx, res.Position, res.EventTypes); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // distinct createdAt milliseconds
	var it newsitems.NewsItem
	if err := svc.DB.Bun.NewSelect().Model(&it).Where("feed_id = ? AND news_page_id = ?", feedID, d.NewsPageID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	return it.ID.String()
}

func (f *itemFixture) orgOf(t testing.TB) uuid.UUID {
	t.Helper()
	var org uuid.UUID
	if err := f.h.Service.DB.Bun.NewRaw("SELECT organization_id FROM feeds WHERE id = ?", f.feedID).Scan(context.Background(), &org); err != nil {
		t.Fatal(err)
	}
	return org
}

func full(i int) domain.ArticleContent {
	pub := time.Date(2026, 11, 20, 8, 30, 0, 123_000_000, time.UTC)
	return domain.ArticleContent{
		URL: fmt.Sprintf("https://news.example/a/%d", i), Title: fmt.Sprintf("Title %d", i),
		Description: "Body", ImageURL: "https://news.example/i.jpg", PublishedAt: &pub,
	}
}

func itemKeys(m map[string]any) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

// assertNoNull fails when a JSON null appears anywhere in v.
func assertNoNull(t *testing.T, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case nil:
		t.Fatalf("%s is null; the current shape never holds a JSON null", path)
	case map[string]any:
		for k, e := range x {
			assertNoNull(t, path+"."+k, e)
		}
	case []any:
		for i, e := range x {
			assertNoNull(t, fmt.Sprintf("%s[%d]", path, i), e)
		}
	}
}

func TestTheCurrentItemShapeHoldsEveryFieldAndNeverANull(t *testing.T) {
	t.Parallel()
	f := newItemFixture(t, full(1), domain.ArticleContent{URL: "https://news.example/bare", Title: "   "})
	r := f.h.Do("GET", "/feeds/news/"+f.feedID+"/items", nil).MustStatus(t, 200)
	assertNoNull(t, "body", r.Body)
	data := r.Data()
	if got := itemKeys(data); got != "items,pagination,total" {
		t.Fatalf("data keys %s", got)
	}
	items := data["items"].([]any)
	if len(items) != 2 {
		t.Fatalf("%d items, want 2", len(items))
	}
	bare, rich := items[0].(map[string]any), items[1].(map[string]any)
	if got := itemKeys(rich); got != "createdAt,description,id,imageUrl,newsPageId,publishedAt,title,updatedAt,url" {
		t.Fatalf("full item keys %s", got)
	}
	if got := itemKeys(bare); got != "createdAt,id,newsPageId,updatedAt,url" {
		t.Fatalf("an item with empty optional fields must omit them; keys %s", got)
	}
	want := map[string]any{
		"id": f.items[0], "title": "Title 1", "description": "Body", "url": "https://news.example/a/1",
		"imageUrl": "https://news.example/i.jpg", "publishedAt": "2026-11-20T08:30:00.123Z",
	}
	for k, v := range want {
		if rich[k] != v {
			t.Errorf("%s = %v, want %v", k, rich[k], v)
		}
	}
	for _, k := range []string{"createdAt", "updatedAt"} {
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", rich[k].(string)); err != nil {
			t.Errorf("%s %q is not UTC with milliseconds", k, rich[k])
		}
	}
	if _, err := uuid.Parse(rich["newsPageId"].(string)); err != nil {
		t.Errorf("newsPageId %v is not a UUID", rich["newsPageId"])
	}
	pg := data["pagination"].(map[string]any)
	if pg["limit"] != float64(50) || pg["offset"] != float64(0) || pg["hasMore"] != false || data["total"] != float64(2) {
		t.Fatalf("pagination %v total %v", pg, data["total"])
	}
}

func TestIncludeSourceAddsTheSiteSourceBlock(t *testing.T) {
	t.Parallel()
	f := newItemFixture(t, full(1))
	r := f.h.Do("GET", "/feeds/news/"+f.feedID+"/items?include=source", nil).MustStatus(t, 200)
	it := r.Data()["items"].([]any)[0].(map[string]any)
	src, ok := it["source"].(map[string]any)
	if !ok || itemKeys(src) != "type,url" || src["type"] != "site" || src["url"] != "https://news.example/a/1" {
		t.Fatalf("source block %v", it["source"])
	}
	one := f.h.Do("GET", "/feeds/news/"+f.feedID+"/items/"+f.items[0]+"?include=source", nil).MustStatus(t, 200).Data()
	if _, ok := one["source"]; !ok {
		t.Fatal("the single item ignores include=source")
	}
	if _, ok := f.h.Do("GET", "/feeds/news/"+f.feedID+"/items/"+f.items[0], nil).Data()["source"]; ok {
		t.Fatal("source block present without include")
	}
}

func TestTheLegacyShapeKeepsTheTypeEnvelopeAndItsNulls(t *testing.T) {
	t.Parallel()
	f := newItemFixture(t, full(1), domain.ArticleContent{URL: "https://news.example/bare"})
	r := f.h.Do("GET", "/v0/feeds/news/"+f.feedID+"/items", nil).MustStatus(t, 200)
	items := r.Data()["items"].([]any)
	bare, rich := items[0].(map[string]any), items[1].(map[string]any)
	if got := itemKeys(rich); got != "createdAt,data,id,newsPageId,type,updatedAt" {
		t.Fatalf("v0 item keys %s", got)
	}
	if rich["type"] != "site" {
		t.Fatalf("type %v", rich["type"])
	}
	data := rich["data"].(map[string]any)
	if got := itemKeys(data); got != "description,sitePageId,sitePageVersionId,title,url" {
		t.Fatalf("v0 data keys %s", got)
	}
	if data["title"] != "Title 1" || data["url"] != "https://news.example/a/1" || data["sitePageId"] != rich["newsPageId"] {
		t.Fatalf("v0 data %v", data)
	}
	bareData := bare["data"].(map[string]any)
	for _, k := range []string{"title", "description"} {
		v, present := bareData[k]
		if !present || v != nil {
			t.Fatalf("v0 %s must be present and null, got present=%v value=%v", k, present, v)
		}
	}
	if r.Data()["pagination"] == nil || r.Data()["total"] != float64(2) {
		t.Fatalf("v0 envelope %v", r.Data())
	}
}

func TestItemListQueriesAreValidated(t *testing.T) {
	t.Parallel()
	f := newItemFixture(t, full(1))
	base := "/feeds/news/" + f.feedID + "/items"
	cases := []struct {
		name, query, field string
	}{
		{"a zero limit", "?limit=0", "limit"},
		{"a limit over 100", "?limit=101", "limit"},
		{"a non-numeric limit", "?limit=ten", "limit"},
		{"a negative offset", "?offset=-1", "offset"},
		{"an unknown include token", "?include=author", "include"},
		{"an unknown token beside source", "?include=source,author", "include"},
		{"a malformed since", "?since=yesterday", "since"},
		{"a malformed until", "?until=2026-13-01", "until"},
		{"since after until", "?since=2026-11-22&until=2026-11-21", "until"},
		{"a since in year 0", "?since=0000-01-01", "since"},
		{"an until that is year 0 in UTC", "?until=0001-01-01T00:00:00%2B01:00", "until"},
	}
	for _, c := range cases {
		t.Run(c.name+" answers 400", func(t *testing.T) {
			r := f.h.Do("GET", base+c.query, nil).MustStatus(t, 400)
			e := r.Body["error"].(map[string]any)
			if e["code"] != "VALIDATION_ERROR" || e["details"].(map[string]any)["field"] != c.field {
				t.Fatalf("error %v", e)
			}
		})
	}
	t.Run("include on the legacy endpoint answers 400", func(t *testing.T) {
		f.h.Do("GET", "/v0"+base+"?include=source", nil).MustStatus(t, 400)
	})
	t.Run("a malformed feed id answers 400", func(t *testing.T) {
		f.h.Do("GET", "/feeds/news/nope/items", nil).MustStatus(t, 400)
		f.h.Do("GET", "/v0/feeds/news/nope/items", nil).MustStatus(t, 400)
	})
	t.Run("an unknown feed answers 404", func(t *testing.T) {
		r := f.h.Do("GET", "/feeds/news/"+uuid.NewString()+"/items", nil).MustStatus(t, 404)
		if r.Body["error"].(map[string]any)["resource"] != "feed" {
			t.Fatalf("error %v", r.Body["error"])
		}
	})
	t.Run("another organization's feed answers 404", func(t *testing.T) {
		other := f.h.NewKey("other")
		f.h.DoWith("GET", base, nil, map[string]string{"Authorization": "Bearer " + other}).MustStatus(t, 404)
		f.h.DoWith("GET", "/v0"+base, nil, map[string]string{"Authorization": "Bearer " + other}).MustStatus(t, 404)
	})
}

func TestItemsPageNewestFirstWithTotalsAndDateFilters(t *testing.T) {
	t.Parallel()
	var contents []domain.ArticleContent
	for i := 0; i < 5; i++ {
		contents = append(contents, full(i))
	}
	f := newItemFixture(t, contents...)
	base := "/feeds/news/" + f.feedID + "/items"
	ids := func(r servicetest.Response) []string {
		var out []string
		for _, it := range r.Data()["items"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		return out
	}
	all := ids(f.h.Do("GET", base, nil))
	for i, id := range all {
		if id != f.items[len(f.items)-1-i] {
			t.Fatalf("order %v, want newest first %v", all, f.items)
		}
	}
	p1 := f.h.Do("GET", base+"?limit=2", nil).Data()
	if p1["pagination"].(map[string]any)["hasMore"] != true || p1["total"] != float64(5) {
		t.Fatalf("first page %v", p1)
	}
	p3 := f.h.Do("GET", base+"?limit=2&offset=4", nil)
	if got := ids(p3); len(got) != 1 || got[0] != f.items[0] || p3.Data()["pagination"].(map[string]any)["hasMore"] != false {
		t.Fatalf("last page %v", p3.Data())
	}
	// since/until are exclusive bounds on createdAt.
	items := f.h.Do("GET", base, nil).Data()["items"].([]any)
	mid := items[2].(map[string]any)["createdAt"].(string)
	newer := f.h.Do("GET", base+"?since="+mid, nil)
	if n := len(ids(newer)); n != 2 || newer.Data()["total"] != float64(2) {
		t.Fatalf("since %s gave %d items, total %v; want 2", mid, n, newer.Data()["total"])
	}
	older := f.h.Do("GET", base+"?until="+mid, nil)
	if n := len(ids(older)); n != 2 {
		t.Fatalf("until %s gave %d items, want 2", mid, n)
	}
	day := f.h.Do("GET", base+"?since=2000-01-01", nil)
	if n := len(ids(day)); n != 5 {
		t.Fatalf("a plain date since gave %d items, want 5", n)
	}
}

func TestASingleItemIsFoundOnlyInItsOwnFeed(t *testing.T) {
	t.Parallel()
	f := newItemFixture(t, full(1))
	path := "/feeds/news/" + f.feedID + "/items/" + f.items[0]
	got := f.h.Do("GET", path, nil).MustStatus(t, 200).Data()
	if got["id"] != f.items[0] || got["title"] != "Title 1" {
		t.Fatalf("item %v", got)
	}
	other := f.h.Do("POST", "/feeds/news", map[string]string{"name": "other", "description": "d"}).Data()["id"].(string)
	r := f.h.Do("GET", "/feeds/news/"+other+"/items/"+f.items[0], nil).MustStatus(t, 404)
	if e := r.Body["error"].(map[string]any); e["resource"] != "item" || e["id"] != f.items[0] {
		t.Fatalf("error %v", e)
	}
	f.h.Do("GET", "/feeds/news/"+f.feedID+"/items/"+uuid.NewString(), nil).MustStatus(t, 404)
	f.h.Do("GET", "/feeds/news/"+f.feedID+"/items/123", nil).MustStatus(t, 400)
	f.h.Do("GET", path+"?include=tags", nil).MustStatus(t, 400)
	key := f.h.NewKey("other-org")
	f.h.DoWith("GET", path, nil, map[string]string{"Authorization": "Bearer " + key}).MustStatus(t, 404)
}

func TestFeedbackIsValidatedAdditiveAndCounted(t *testing.T) {
	t.Parallel()
	f := newItemFixture(t, full(1))
	path := "/feeds/news/" + f.feedID + "/items/" + f.items[0] + "/feedback"
	for _, rating := range []string{"positive", "negative", "neutral", "positive"} {
		r := f.h.Do("POST", path, map[string]string{"rating": rating, "comment": "ok"}).MustStatus(t, 200)
		if itemKeys(r.Data()) != "id" {
			t.Fatalf("feedback data %v", r.Data())
		}
		if _, err := uuid.Parse(r.Data()["id"].(string)); err != nil {
			t.Fatalf("feedback id %v", r.Data()["id"])
		}
	}
	counts, err := feedback.NewQueries(f.h.Service.DB.Bun).Counts(context.Background(), feedback.ScopeItem, uuid.MustParse(f.items[0]))
	if err != nil {
		t.Fatal(err)
	}
	if counts.Positive != 2 || counts.Negative != 1 || counts.Neutral != 1 {
		t.Fatalf("counts %+v, want 2/1/1 (feedback is additive and visible once answered)", counts)
	}
	cases := []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"an unknown rating", map[string]string{"rating": "great"}, 400, "rating"},
		{"a missing rating", map[string]string{"comment": "x"}, 400, "rating"},
		{"a rating of the wrong type", map[string]any{"rating": 1}, 400, "rating"},
		{"a comment of 5001 characters", map[string]string{"rating": "neutral", "comment": strings.Repeat("é", 5001)}, 400, "comment"},
		{"a comment of exactly 5000 characters", map[string]string{"rating": "neutral", "comment": strings.Repeat("é", 5000)}, 200, ""},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s answers %d", c.name, c.status), func(t *testing.T) {
			r := f.h.Do("POST", path, c.body).MustStatus(t, c.status)
			if c.field != "" && r.Body["error"].(map[string]any)["details"].(map[string]any)["field"] != c.field {
				t.Fatalf("error %v", r.Body["error"])
			}
		})
	}
	t.Run("feedback on an unknown item answers 404", func(t *testing.T) {
		f.h.Do("POST", "/feeds/news/"+f.feedID+"/items/"+uuid.NewString()+"/feedback", map[string]string{"rating": "positive"}).MustStatus(t, 404)
	})
	t.Run("feedback from another organization answers 404", func(t *testing.T) {
		key := f.h.NewKey("intruder")
		f.h.DoWith("POST", path, `{"rating":"positive"}`, map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}).MustStatus(t, 404)
	})
}
