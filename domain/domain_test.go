package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

func ptr[T any](v T) *T { return &v }

func TestDomainsAreNormalizedOrRefused(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"example.com", "example.com", true},
		{"HTTPS://Example.COM/", "example.com", true},
		{"http://news.example.org", "news.example.org", true},
		{"127.0.0.1:8081", "127.0.0.1:8081", true},
		{"  example.com  ", "example.com", true},
		{"example.com/news", "", false},
		{"exa mple.com", "", false},
		{"", "", false},
		{"https://", "", false},
		{"example.com:", "", false},
		{"..", "", false},
		{"user@example.com", "", false},
		// Host names have limits (RFC 1035): 253 characters, labels of 63.
		{strings.Repeat("a", 63) + ".com", strings.Repeat("a", 63) + ".com", true},
		{strings.Repeat("a", 64) + ".com", "", false},
		{strings.Repeat("abcdefghi.", 25) + "com", strings.Repeat("abcdefghi.", 25) + "com", true},
		{strings.Repeat("abcdefghi.", 25) + "info", "", false},
		{strings.Repeat("a", 100_000), "", false},
		// Unicode names count in their Punycode form.
		{"bücher.example", "bücher.example", true},
		{strings.Repeat("ü", 60) + ".example", "", false},
	}
	for _, c := range cases {
		got, err := domain.NormalizeDomain(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("NormalizeDomain(%q) = %q, %v; want %q ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestSourceRequestsBecomeNormalizedDetails(t *testing.T) {
	site := uuid.New()
	cases := []struct {
		name    string
		req     domain.SourceRequest
		want    domain.SourceDetails
		errWant string
	}{
		{"a site keeps only its domain", domain.SourceRequest{SourceType: "site", Domain: ptr("Example.com")},
			domain.SourceDetails{SourceType: domain.SourceSite, Domain: "example.com"}, ""},
		{"a sitemap needs url and siteId", domain.SourceRequest{SourceType: "sitemap", URL: ptr("HTTPS://Example.com/s.xml#x"), SiteID: ptr(site.String())},
			domain.SourceDetails{SourceType: domain.SourceSitemap, URL: "https://example.com/s.xml", SiteID: &site}, ""},
		{"a sitemap without siteId is refused", domain.SourceRequest{SourceType: "sitemap", URL: ptr("https://e.com/s.xml")}, domain.SourceDetails{}, "siteId"},
		{"a sitemap url with credentials is refused", domain.SourceRequest{SourceType: "sitemap", URL: ptr("https://user:pw@e.com/s.xml"), SiteID: ptr(site.String())}, domain.SourceDetails{}, "url"},
		{"a sitemap url with an impossible port is refused", domain.SourceRequest{SourceType: "sitemap", URL: ptr("https://e.com:99999/s.xml"), SiteID: ptr(site.String())}, domain.SourceDetails{}, "url"},
		{"an index page with a relative url is refused", domain.SourceRequest{SourceType: "siteIndexPage", URL: ptr("/news"), SiteID: ptr(site.String())}, domain.SourceDetails{}, "url"},
		{"a neutral platform word is an alias", domain.SourceRequest{SourceType: "photoshare", Username: ptr("@Somebody")},
			domain.SourceDetails{SourceType: domain.SourceInstagram, Username: "somebody"}, ""},
		{"a facebook source needs its type", domain.SourceRequest{SourceType: "socialnet", Identifier: ptr("page1")}, domain.SourceDetails{}, "facebookType"},
		{"an unknown type is refused", domain.SourceRequest{SourceType: "rss"}, domain.SourceDetails{}, "sourceType"},
		{"a missing type is refused", domain.SourceRequest{}, domain.SourceDetails{}, "sourceType"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := domain.NewSourceDetails(c.req)
			if c.errWant != "" {
				var v *domain.ValidationError
				if !errors.As(err, &v) || v.Field != c.errWant {
					t.Fatalf("err %v, want a validation error on %s", err, c.errWant)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Identity() != c.want.Identity() || got.SourceType != c.want.SourceType || (c.want.SiteID != nil && *got.SiteID != *c.want.SiteID) {
				t.Fatalf("got %+v want %+v", got, c.want)
			}
		})
	}
}

func TestTheSameIdentityMapsToTheSameSourceStream(t *testing.T) {
	a, _ := domain.NewSourceDetails(domain.SourceRequest{SourceType: "site", Domain: ptr("HTTP://EXAMPLE.com/")})
	b, _ := domain.NewSourceDetails(domain.SourceRequest{SourceType: "site", Domain: ptr("example.com")})
	c, _ := domain.NewSourceDetails(domain.SourceRequest{SourceType: "site", Domain: ptr("example.org")})
	if domain.SourceStream(a) != domain.SourceStream(b) || domain.SourceStream(a) == domain.SourceStream(c) {
		t.Fatal("source streams must be keyed by normalized identity")
	}
}

// feed is a decided-on feed for tests: decisions are applied as a command
// would after appending them.
type feed struct {
	*domain.Feed
	org uuid.UUID
}

func (f feed) do(events []domain.Event, err error) error {
	if err != nil {
		return err
	}
	for _, e := range events {
		f.Apply(e)
	}
	return nil
}

func newFeed(t *testing.T) feed {
	t.Helper()
	f := feed{domain.NewFeed(domain.FeedNews), uuid.New()}
	if err := f.do(f.Create(uuid.New(), f.org, " Tech ", "News", domain.FeedOptions{}, domain.Now())); err != nil {
		t.Fatal(err)
	}
	return f
}

func site(t *testing.T, name string) *domain.Source {
	t.Helper()
	d, err := domain.NewSourceDetails(domain.SourceRequest{SourceType: "site", Domain: &name})
	if err != nil {
		t.Fatal(err)
	}
	s := &domain.Source{}
	for _, e := range s.Register(uuid.New(), d, uuid.New(), domain.Now()) {
		s.Apply(e)
	}
	return s
}

func TestANewsFeedGuardsItsInvariants(t *testing.T) {
	now := domain.Now()
	t.Run("a name and description of at least one character are required", func(t *testing.T) {
		for _, c := range [][2]string{{"", "d"}, {"  ", "d"}, {"n", ""}, {strings.Repeat("x", 201), "d"}} {
			if _, err := domain.NewFeed(domain.FeedNews).Create(uuid.New(), uuid.New(), c[0], c[1], domain.FeedOptions{}, now); err == nil {
				t.Errorf("created a feed named %q described %q", c[0], c[1])
			}
		}
	})
	t.Run("a name is trimmed", func(t *testing.T) {
		if newFeed(t).State().Name != "Tech" {
			t.Fatal("name not trimmed")
		}
	})
	t.Run("a source record is attached once", func(t *testing.T) {
		f, s := newFeed(t), site(t, "a.example")
		if err := f.do(f.AttachSource(uuid.New(), s, s.Details(), now)); err != nil {
			t.Fatal(err)
		}
		if err := f.do(f.AttachSource(uuid.New(), s, s.Details(), now)); !errors.Is(err, domain.ErrConflict) {
			t.Fatalf("second attach: %v, want a conflict", err)
		}
	})
	t.Run("a detached source can be attached again", func(t *testing.T) {
		f, s := newFeed(t), site(t, "a.example")
		att := uuid.New()
		_ = f.do(f.AttachSource(att, s, s.Details(), now))
		if err := f.do(f.DetachSource(att, now)); err != nil {
			t.Fatal(err)
		}
		if err := f.do(f.AttachSource(uuid.New(), s, s.Details(), now)); err != nil {
			t.Fatalf("re-attach after detach: %v", err)
		}
	})
	t.Run("a deleted feed refuses every operation", func(t *testing.T) {
		f := newFeed(t)
		if err := f.do(f.Delete(now)); err != nil {
			t.Fatal(err)
		}
		ops := map[string]error{
			"update": f.do(f.Update(domain.FeedUpdate{Name: ptr("x")}, now)),
			"delete": f.do(f.Delete(now)),
			"attach": f.do(f.AttachSource(uuid.New(), site(t, "b.example"), site(t, "b.example").Details(), now)),
			"detach": f.do(f.DetachSource(uuid.New(), now)),
		}
		for name, err := range ops {
			if !errors.Is(err, domain.ErrNotFound) {
				t.Errorf("%s on a deleted feed: %v, want not found", name, err)
			}
		}
	})
	t.Run("an update records only what changed", func(t *testing.T) {
		f := newFeed(t)
		changes, err := f.Update(domain.FeedUpdate{Name: ptr("Tech"), Description: ptr("Other"), Enabled: ptr(true)}, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) != 1 || changes[0].EventType() != "NewsFeedDescribed" {
			t.Fatalf("changes %v", changes)
		}
	})
	t.Run("an invalid update records nothing", func(t *testing.T) {
		f := newFeed(t)
		if changes, err := f.Update(domain.FeedUpdate{Name: ptr("ok"), Description: ptr(" ")}, now); err == nil || len(changes) != 0 {
			t.Fatalf("err %v changes %v", err, changes)
		}
	})
	t.Run("a feed is visible only to its organization", func(t *testing.T) {
		f := newFeed(t)
		if !f.VisibleTo(f.org) || f.VisibleTo(uuid.New()) {
			t.Fatal("visibility")
		}
	})
}

func TestEventFeedsHaveTheirOwnEventNamesAndStreams(t *testing.T) {
	id := uuid.New()
	events, err := domain.NewFeed(domain.FeedHappenings).Create(id, uuid.New(), "Concerts", "Live music", domain.FeedOptions{}, domain.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := events[0].EventType(); got != "EventFeedCreated" {
		t.Fatalf("an event feed's creation is stored as %s", got)
	}
	if domain.FeedStream(domain.FeedHappenings, id) == domain.FeedStream(domain.FeedNews, id) {
		t.Fatal("a news feed and an event feed with one id share a stream")
	}
	b, _ := domain.EncodeEvent(events[0])
	back, err := domain.DecodeEvent("EventFeedCreated", b)
	if err != nil || back.(domain.FeedCreated).Kind != domain.FeedHappenings {
		t.Fatalf("decoded %+v, %v: the kind must come back from the stored name", back, err)
	}
}

func TestEventsRoundTripThroughJSON(t *testing.T) {
	at := domain.Now()
	in := domain.FeedCreated{Kind: domain.FeedNews, FeedID: uuid.New(), OrganizationID: uuid.New(), Name: "n", Description: "d", At: at}
	b, err := domain.EncodeEvent(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := domain.DecodeEvent(in.EventType(), b)
	if err != nil {
		t.Fatal(err)
	}
	if out.(domain.FeedCreated) != in {
		t.Fatalf("round trip %+v != %+v", out, in)
	}
	if _, err := domain.DecodeEvent("Unheard", b); err == nil {
		t.Fatal("an unknown event type must not decode")
	}
}

func TestAnArticleIsJudgedByItsPublishTimeThenLastmodThenDiscovery(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	pub := now.Add(-48 * time.Hour)
	lastmod := now.Add(-24 * time.Hour)
	cases := []struct {
		name    string
		pub     *time.Time
		lastmod *time.Time
		want    time.Time
	}{
		{"a published article", &pub, &lastmod, pub},
		{"an undated article with a lastmod", nil, &lastmod, lastmod},
		{"an undated article without lastmod", nil, nil, now},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			events := (&domain.Article{}).Discover(uuid.New(), uuid.New(), uuid.New(),
				domain.ArticleContent{URL: "https://e.com/a", PublishedAt: c.pub}, c.lastmod, now)
			if got := events[0].(domain.ArticleDiscovered).EffectiveAt; !got.Equal(c.want) {
				t.Fatalf("effective %v, want %v", got, c.want)
			}
		})
	}
	t.Run("a known article found through another source is linked, not rediscovered", func(t *testing.T) {
		a := &domain.Article{}
		src := uuid.New()
		for _, e := range a.Discover(uuid.New(), uuid.New(), src, domain.ArticleContent{URL: "https://e.com/a"}, nil, now) {
			a.Apply(e)
		}
		if ev := a.Discover(uuid.New(), uuid.New(), src, domain.ArticleContent{URL: "https://e.com/a"}, nil, now); len(ev) != 0 {
			t.Fatalf("same source again decided %v", ev)
		}
		ev := a.Discover(uuid.New(), uuid.New(), uuid.New(), domain.ArticleContent{URL: "https://e.com/a"}, nil, now)
		if len(ev) != 1 || ev[0].EventType() != "ArticleFoundOnSource" {
			t.Fatalf("another source decided %v", ev)
		}
	})
}

func TestAttachmentsAcceptArticlesFromTheMomentTheyBecameActive(t *testing.T) {
	active := time.Date(2026, 11, 8, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		enabled   bool
		effective time.Time
		want      bool
	}{
		{"an article from after activation", true, active.Add(time.Hour), true},
		{"an article from the very moment", true, active, true},
		{"an article from before activation", true, active.Add(-time.Second), false},
		{"any article while disabled", false, active.Add(time.Hour), false},
	}
	for _, c := range cases {
		if got := domain.Accepts(c.enabled, active, c.effective); got != c.want {
			t.Errorf("%s: accepted %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFeedbackNeedsAKnownRatingAndABoundedComment(t *testing.T) {
	cases := []struct {
		rating, comment string
		ok              bool
	}{
		{"positive", "", true},
		{"negative", strings.Repeat("ü", 5000), true},
		{"neutral", strings.Repeat("ü", 5001), false},
		{"great", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		if _, err := domain.NewFeedback(c.rating, c.comment); (err == nil) != c.ok {
			t.Errorf("rating %q comment of %d chars: err %v, want ok=%v", c.rating, len([]rune(c.comment)), err, c.ok)
		}
	}
}

func TestArticleContentLosesControlCharactersAndKeepsLineBreaks(t *testing.T) {
	c, err := domain.NewArticleContent(domain.ArticleContent{
		URL: "https://e.com/a", Title: " bad\x00title\x07 ", Description: "line one\nline two\x1b", ImageURL: "https://e.com/i.jpg\x00",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Title != "badtitle" || c.Description != "line one\nline two" || c.ImageURL != "https://e.com/i.jpg" {
		t.Fatalf("cleaned content %+v", c)
	}
}
