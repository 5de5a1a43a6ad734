package http_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/attachments"
	"github.com/feedsvc/feedsvc/readmodel/feeds"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// A feed's keyword rules through the service with its crawler: articles
// that fail them never enter the feed, from a crawl or from a backfill,
// while a feed without rules on the same sites takes them all; the items
// the feed had before stay; and the read models rebuilt from the log
// answer the same.
func TestAFeedsRulesKeepOffTopicArticlesOutOfCrawlsAndBackfills(t *testing.T) {
	t.Parallel()
	general := newSearchSite(t, "en",
		searchPage{"Climate report warns of heat", "Scientists publish their findings."},
		searchPage{"Local football team wins", "A late goal decided it."},
	)
	second := newSearchSite(t, "en",
		searchPage{"Climate talks resume", "Delegates return to the table."},
		searchPage{"Cooking with garlic", "Three recipes for the week."},
		searchPage{"Market report", "Prices rose."},
	)
	// Words only the bodies of pages say: rules read them as q does.
	general.bodies = map[string]string{"Garden notes": "Water early: a heat wave is coming."}
	second.bodies = map[string]string{"Market report": "Traders blamed the weather for the harvest."}
	h := servicetest.Start(t, servicetest.WithCrawler(), func(c *config.Config) {
		c.PollInterval, c.MinPollInterval = 300*time.Millisecond, 300*time.Millisecond
	})
	c := as(h, h.Key)
	ruled := createFeed(t, c, "Climate", "Only climate")["id"].(string)
	open := createFeed(t, c, "Everything", "No rules")["id"].(string)
	titles := func(feed string) []string {
		return sorted(titlesOf(h.Do("GET", "/feeds/news/"+feed+"/items?limit=100", nil).MustStatus(t, http.StatusOK)))
	}
	attach(t, c, ruled, site(general.domain()))
	attach(t, c, open, site(general.domain()))
	wait.Until(t, 60*time.Second, "both feeds' two articles", func() bool { return len(titles(ruled)) == 2 && len(titles(open)) == 2 })

	r := c.do(t, "PATCH", "/feeds/news/"+ruled, map[string]any{"rules": map[string]any{
		"include": []string{"climate OR weather", `"heat wave"`}, "exclude": []string{"sport"},
	}})
	got := wantDataObject(t, r, http.StatusOK)["rules"].(map[string]any)
	if inc := got["include"].([]any); len(inc) != 2 || inc[0] != "climate OR weather" {
		t.Fatalf("the answer shows rules %v", got)
	}
	if shown := wantDataObject(t, c.do(t, "GET", "/feeds/news/"+ruled, nil), http.StatusOK)["rules"]; shown == nil {
		t.Fatal("the feed read after the change shows no rules")
	}
	if _, ok := wantDataObject(t, c.do(t, "GET", "/feeds/news/"+open, nil), http.StatusOK)["rules"]; ok {
		t.Fatal("a feed without rules shows rules")
	}

	t.Run("a crawl adds only what passes", func(t *testing.T) {
		general.publish(searchPage{"Sport: a climate of fear in the league", "The season so far."})
		general.publish(searchPage{"Celebrity gossip", "Who wore what."})
		general.publish(searchPage{"Weather warning for Sunday", "Storms expected."})
		// Rules stem words in the article's language, as q does: an
		// English "weathering" is "weather", "sports" is "sport".
		general.publish(searchPage{"Weathering a dry summer", "Farmers adapt."})
		general.publish(searchPage{"Sports ministers discuss climate", "A summit on stadiums."})
		general.publish(searchPage{"Garden notes", "Plants and pots."})
		wait.Until(t, 60*time.Second, "the feed without rules to take the six new articles", func() bool { return len(titles(open)) == 8 })
		want := []string{"Climate report warns of heat", "Garden notes", "Local football team wins", "Weather warning for Sunday", "Weathering a dry summer"}
		if got := titles(ruled); !slices.Equal(got, want) {
			t.Errorf("the ruled feed holds %q, want %q (the items it had stay, the new off-topic ones stay out, words match stemmed, in the body too)", got, want)
		}
	})
	t.Run("a backfill adds only what passes", func(t *testing.T) {
		// The feed without rules takes the site first, so that its
		// articles are known when the ruled feed takes it: the ruled
		// feed gets them from its backfill alone, which reads an
		// article's body from the log (the read models keep none).
		attach(t, c, open, site(second.domain()))
		wait.Until(t, 60*time.Second, "the feed without rules to take the three articles", func() bool { return len(titles(open)) == 11 })
		attach(t, c, ruled, site(second.domain()))
		wait.Until(t, 60*time.Second, "both backfills recorded done", func() bool {
			var n int
			err := h.Service.DB.Bun.NewRaw(`SELECT count(*) FROM ingest_backfills b JOIN ingest_attachments a USING (attachment_id)
				WHERE a.source_id = (SELECT source_id FROM ingest_attachments WHERE feed_id = ? ORDER BY attached_at DESC LIMIT 1)
				AND b.done_at IS NOT NULL`, ruled).Scan(t.Context(), &n)
			return err == nil && n == 2
		})
		// Done is recorded once the backfill's items are appended; the
		// list shows them when the items' projector has read them.
		wait.Until(t, 30*time.Second, "the backfilled articles that pass in the ruled feed", func() bool {
			got := titles(ruled)
			return slices.Contains(got, "Climate talks resume") && slices.Contains(got, "Market report")
		})
		if got := titles(ruled); !slices.Contains(got, "Climate talks resume") || !slices.Contains(got, "Market report") || slices.Contains(got, "Cooking with garlic") || len(got) != 7 {
			t.Errorf("after the backfill the ruled feed holds %q (a rule matching only a body's word admits a backfilled article too)", got)
		}
	})
	t.Run("removing the rules lets everything in again", func(t *testing.T) {
		r := c.do(t, "PATCH", "/feeds/news/"+ruled, map[string]any{"rules": map[string]any{}})
		if _, ok := wantDataObject(t, r, http.StatusOK)["rules"]; ok {
			t.Fatalf("emptied rules are shown: %s", r.Raw)
		}
		general.publish(searchPage{"Celebrity wedding", "Who came."})
		wait.Until(t, 60*time.Second, "the once ruled feed to take an off-topic article", func() bool { return slices.Contains(titles(ruled), "Celebrity wedding") })
	})

	answers := func() any {
		return map[string]any{"ruled": titles(ruled), "open": titles(open), "feed": c.do(t, "GET", "/feeds/news/"+ruled, nil).Raw}
	}
	projectortest.RebuildAnswersTheSame(t, h.DSN, h.Service.DB, h.Service.Store, newsitems.Projector{}, answers)
	projectortest.RebuildAnswersTheSame(t, h.DSN, h.Service.DB, h.Service.Store, feeds.Projector{}, answers)
	projectortest.RebuildAnswersTheSame(t, h.DSN, h.Service.DB, h.Service.Store, attachments.Projector{}, func() any {
		var rules []string
		if err := h.Service.DB.Bun.NewRaw(`SELECT coalesce(feed_rules::text, '') FROM ingest_attachments ORDER BY attachment_id`).Scan(t.Context(), &rules); err != nil {
			t.Fatal(err)
		}
		return rules
	})
}

func TestRulesThatAreNotQueriesAnswer400NamingTheRule(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := createFeed(t, c, "News", "d")["id"].(string)
	cases := []struct {
		name  string
		rules any
		field string
	}{
		{"not an object", "climate", "rules"},
		{"a list that is not of strings", map[string]any{"include": []int{1}}, "rules"},
		{"an empty rule", map[string]any{"include": []string{""}}, "rules.include[0]"},
		{"an exclusion alone", map[string]any{"include": []string{"climate", "-sport"}}, "rules.include[1]"},
		{"a rule too long", map[string]any{"exclude": []string{string(make([]byte, 300))}}, "rules.exclude[0]"},
		{"too many rules", map[string]any{"include": slices.Repeat([]string{"a"}, 21)}, "rules.include"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantValidation(t, c.do(t, "PATCH", "/feeds/news/"+feed, map[string]any{"rules": tc.rules}), tc.field)
		})
	}
	events := wantDataObject(t, c.do(t, "POST", "/feeds/events", map[string]any{"name": "Events", "description": "d"}), http.StatusCreated)["id"].(string)
	for _, tc := range cases {
		t.Run("an event feed's "+tc.name, func(t *testing.T) {
			// The event routes' dialect (api.md 3.2): BAD_REQUEST.
			r := c.do(t, "PATCH", "/feeds/events/"+events, map[string]any{"rules": tc.rules})
			if d, _ := wantError(t, r, http.StatusBadRequest, "BAD_REQUEST")["details"].(map[string]any); d["field"] != tc.field {
				t.Errorf("the error names %v, want %s: %s", d["field"], tc.field, r.Raw)
			}
		})
	}
}

// An event feed's keyword rules through the service with its crawler:
// they read an event's title, description, venue, address and organizer;
// events that fail them enter the feed neither from a backfill nor from a
// crawl, while a feed without rules on the same source takes them all;
// rules changed later keep the items the feed has; and the read models
// rebuilt from the log answer the same.
func TestAnEventFeedsRulesKeepOtherEventsOutOfBackfillsAndCrawls(t *testing.T) {
	t.Parallel()
	at := func(days int) time.Time {
		return time.Now().UTC().Add(time.Duration(days) * 24 * time.Hour).Truncate(time.Hour)
	}
	venue := newSearchSite(t, "en")
	venue.events = []searchEvent{
		{"late-set", "Late set", "Blue Note Hall", "Kaiweg 3, Hamburg", "Jazz Society", at(3)},
		{"chess", "Chess tournament", "Town library", "Marktplatz 1, Bremen", "Chess Club", at(4)},
	}
	h := servicetest.Start(t, servicetest.WithCrawler(), func(c *config.Config) {
		c.PollInterval, c.MinPollInterval = 300*time.Millisecond, 300*time.Millisecond
	})
	c := as(h, h.Key)
	// The venue's source record comes from a news feed's attachment, and
	// its two events are recorded before either event feed takes it: what
	// the event feeds get first comes from their backfills.
	news := createFeed(t, c, "Venue news", "d")["id"].(string)
	source := attach(t, c, news, site(venue.domain()))["sourceId"].(string)
	wait.Until(t, 60*time.Second, "the venue's two event pages crawled", func() bool {
		return len(titlesOf(h.Do("GET", "/feeds/news/"+news+"/items?limit=100", nil).MustStatus(t, http.StatusOK))) == 2
	})
	newEventFeed := func(name string) string {
		return wantDataObject(t, c.do(t, "POST", "/feeds/events", map[string]any{"name": name, "description": "d"}), http.StatusCreated)["id"].(string)
	}
	ruled, open := newEventFeed("Jazz"), newEventFeed("Everything")
	r := c.do(t, "PATCH", "/feeds/events/"+ruled, map[string]any{"rules": map[string]any{"include": []string{"jazz"}, "exclude": []string{"cancelled"}}})
	if got := wantDataObject(t, r, http.StatusOK)["rules"].(map[string]any); got["include"].([]any)[0] != "jazz" {
		t.Fatalf("the answer shows rules %v", got)
	}
	if shown := wantDataObject(t, c.do(t, "GET", "/feeds/events/"+ruled, nil), http.StatusOK)["rules"]; shown == nil {
		t.Fatal("the event feed read after the change shows no rules")
	}
	if _, ok := wantDataObject(t, c.do(t, "GET", "/feeds/events/"+open, nil), http.StatusOK)["rules"]; ok {
		t.Fatal("an event feed without rules shows rules")
	}
	titles := func(feed string) []string {
		return sorted(titlesOf(h.Do("GET", "/feeds/events/"+feed+"/items?limit=100", nil).MustStatus(t, http.StatusOK)))
	}
	for _, feed := range []string{ruled, open} {
		c.do(t, "POST", "/feeds/events/"+feed+"/sources", map[string]any{"sourceType": "site", "sourceId": source}).MustStatus(t, http.StatusCreated)
	}

	t.Run("a backfill adds only what passes, by the organizer's name", func(t *testing.T) {
		wait.Until(t, 60*time.Second, "the feed without rules to backfill both events", func() bool { return len(titles(open)) == 2 })
		wait.Until(t, 60*time.Second, "both backfills recorded done", func() bool {
			var n int
			err := h.Service.DB.Bun.NewRaw(`SELECT count(*) FROM ingest_backfills b JOIN ingest_attachments a USING (attachment_id)
				WHERE a.feed_id IN (?, ?) AND b.done_at IS NOT NULL`, ruled, open).Scan(t.Context(), &n)
			return err == nil && n == 2
		})
		if got := titles(ruled); !slices.Equal(got, []string{"Late set"}) {
			t.Errorf("after the backfill the ruled feed holds %q, want the Jazz Society's event alone", got)
		}
	})
	t.Run("a crawl adds only what passes", func(t *testing.T) {
		venue.mu.Lock()
		venue.events = append(venue.events,
			searchEvent{"brunch", "Sunday brunch", "Jazz Cafe", "Hafenstrasse 1, Hamburg", "Cafe Owners", at(5)},
			searchEvent{"pottery", "Pottery class", "Clay Studio", "Ring 2, Bremen", "Clay Studio", at(6)},
			searchEvent{"cancelled", "Jazz quartet (cancelled)", "Blue Note Hall", "Kaiweg 3, Hamburg", "Jazz Society", at(7)},
		)
		venue.mu.Unlock()
		wait.Until(t, 60*time.Second, "the feed without rules to take the three new events", func() bool { return len(titles(open)) == 5 })
		want := []string{"Late set", "Sunday brunch"}
		if got := titles(ruled); !slices.Equal(got, want) {
			t.Errorf("the ruled feed holds %q, want %q (a venue's word admits, an excluded word keeps out)", got, want)
		}
	})
	t.Run("changed rules keep what the feed has and judge what comes next", func(t *testing.T) {
		r := c.do(t, "PATCH", "/feeds/events/"+ruled, map[string]any{"rules": map[string]any{"include": []string{"chess"}}})
		if got := wantDataObject(t, r, http.StatusOK)["rules"].(map[string]any); got["include"].([]any)[0] != "chess" {
			t.Fatalf("the answer shows rules %v", got)
		}
		venue.mu.Lock()
		venue.events = append(venue.events,
			searchEvent{"simul", "Simultaneous exhibition", "Town library", "Marktplatz 1, Bremen", "Chess Club", at(8)},
			searchEvent{"jam", "Jam session", "Blue Note Hall", "Kaiweg 3, Hamburg", "Jazz Society", at(9)},
		)
		venue.mu.Unlock()
		wait.Until(t, 60*time.Second, "the feed without rules to take the two new events", func() bool { return len(titles(open)) == 7 })
		// The chess tournament was known before the change: rules judge
		// what is offered after it, they do not backfill again.
		want := []string{"Late set", "Simultaneous exhibition", "Sunday brunch"}
		if got := titles(ruled); !slices.Equal(got, want) {
			t.Errorf("the ruled feed holds %q, want %q (its jazz events stay, the new rule admits the chess club's new event only)", got, want)
		}
	})

	answers := func() any {
		return map[string]any{"ruled": titles(ruled), "open": titles(open), "feed": c.do(t, "GET", "/feeds/events/"+ruled, nil).Raw}
	}
	projectortest.RebuildAnswersTheSame(t, h.DSN, h.Service.DB, h.Service.Store, happeningitems.Projector{}, answers)
	projectortest.RebuildAnswersTheSame(t, h.DSN, h.Service.DB, h.Service.Store, feeds.Projector{}, answers)
}

func TestAWebhookTakesAFilterAndShowsIt(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	created := wantDataObject(t, c.do(t, "POST", "/webhooks", map[string]any{
		"url": "http://127.0.0.1:9/hooks", "events": []string{"event.item_added"}, "filter": `jazz OR "string quartet"`,
	}), http.StatusCreated)
	if created["filter"] != `jazz OR "string quartet"` {
		t.Fatalf("the created webhook shows filter %v", created["filter"])
	}
	id := created["id"].(string)
	if got := wantDataObject(t, c.do(t, "GET", "/webhooks/"+id, nil), http.StatusOK)["filter"]; got != `jazz OR "string quartet"` {
		t.Errorf("read back, the filter is %v", got)
	}
	wantValidation(t, c.do(t, "PATCH", "/webhooks/"+id, map[string]any{"filter": "-jazz"}), "filter")
	wantValidation(t, c.do(t, "POST", "/webhooks", map[string]any{
		"url": "http://127.0.0.1:9/hooks", "events": []string{"event.item_added"}, "filter": `"" ()`,
	}), "filter")
	cleared := wantDataObject(t, c.do(t, "PATCH", "/webhooks/"+id, map[string]any{"filter": ""}), http.StatusOK)
	if _, ok := cleared["filter"]; ok {
		t.Errorf("an emptied filter is shown: %v", cleared)
	}
}
