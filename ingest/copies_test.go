package ingest_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/readmodel/copies"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// budgetStory is one wire story as three sites run it.
var budgetStory = []string{
	"SPRINGFIELD (AP) — The Springfield City Council voted 7-2 early Wednesday to approve a $412 million budget for the next fiscal year, ending a debate that ran past midnight and drew more than 200 residents to City Hall.",
	"The spending plan raises the property tax rate by 1.5 percent, the first increase in six years, and adds 40 positions to the police and fire departments. It also sets aside $8 million to repair roads damaged during last winter's storms.",
	"Council member Dana Whitfield, who voted in favor, said the city had put off maintenance for too long. \"We can pay for it now or pay twice as much later,\" she said.",
	"The two members who voted against the plan said the tax increase would hurt retirees on fixed incomes. Mayor Luis Ortega is expected to sign the budget on Friday. The fiscal year begins July 1.",
}

var rejectStory = []string{
	"SHELBYVILLE (AP) — The Shelbyville City Council voted 5-4 early Wednesday to reject a $96 million budget for the next fiscal year, sending the plan back to the mayor after a debate that ran past midnight at City Hall.",
	"The proposal would have raised the property tax rate by 3 percent and closed two branch libraries. Residents who spoke against it said the library closures would leave the east side without a place for children to study after school.",
	"Council member Rob Haines, who voted against the plan, said the city should look for savings in its vehicle fleet first. \"We were asked to choose between books and potholes,\" he said.",
	"Mayor Ellen Park said she would present a revised budget within two weeks. If no budget passes by July 1, the city will operate under last year's spending levels.",
}

func TestOneStoryOnThreeSitesIsOneItemListingItsCopiesAndASplitRestoresTwo(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	published := now.Add(-2 * time.Hour)
	wire := &fakeArticle{Slug: "springfield-council-budget", Title: "Springfield council approves $412 million budget after late-night debate",
		Published: published, Markup: jsonLD, In: inNewsSitemap, Body: budgetStory,
		Nav: `<nav><a href="/">Home</a> <a href="/world">World</a></nav>`, Footer: `<footer>© Wire Service</footer>`}
	reject := &fakeArticle{Slug: "shelbyville-council-rejects-budget", Title: "Shelbyville council rejects $96 million budget after late-night debate",
		Published: published, Markup: jsonLD, In: inNewsSitemap, Body: rejectStory}
	paper := &fakeArticle{Slug: "council-approves-budget", Dir: "local", Title: "Council approves $412 million budget after late-night debate",
		Published: published.Add(20 * time.Minute), Markup: openGraph, In: inRSS,
		Body:   append([]string{"Posted June 12 | By The Associated Press"}, append(slices.Clone(budgetStory), "Copyright The Associated Press. All rights reserved.")...),
		Footer: `<div class="newsletter"><p>Sign up for the Gazette's morning newsletter to get the day's local news in your inbox.</p></div>`}
	tv := &fakeArticle{Slug: "update-springfield-budget", Title: "UPDATE: Springfield approves budget with first tax increase in six years",
		Published: published.Add(40 * time.Minute), Markup: jsonLD, In: inAtom,
		Body: append(slices.Clone(budgetStory[:3]), "WKRP will have more on this story tonight at 6.")}
	wireSite, paperSite, tvSite := newFakeSite(t, wire, reject), newFakeSite(t, paper), newFakeSite(t, tv)

	h := servicetest.Start(t, withPollInterval(time.Hour), servicetest.WithCrawler())
	c := client{h, h.Key}
	feed := c.createFeed("springfield")
	for _, s := range []*fakeSite{wireSite, paperSite, tvSite} {
		c.attach(feed, map[string]any{"sourceType": "site", "domain": s.domain()})
	}
	// Each site's crawl has stored what it found once its pages were read.
	wait.Until(t, 30*time.Second, "every page read", func() bool {
		return wireSite.hitCount(wire.path()) > 0 && wireSite.hitCount(reject.path()) > 0 &&
			paperSite.hitCount(paper.path()) > 0 && tvSite.hitCount(tv.path()) > 0
	})
	var copyCount int
	wait.Until(t, 30*time.Second, "two copies recorded", func() bool {
		return h.Service.DB.Bun.NewRaw(`SELECT count(*) FROM news_item_copies WHERE feed_id = ?`, feed).Scan(context.Background(), &copyCount) == nil && copyCount >= 2
	})
	items := c.items(feed)
	if len(items) != 2 {
		t.Fatalf("feed has %d items, want the story once and the other story: %v", len(items), keys(items))
	}
	var story map[string]any
	for u, it := range items {
		if u != wireSite.URL+reject.path() {
			story = it
		}
	}
	if story == nil {
		t.Fatalf("the rejected budget is not an item of its own: %v", keys(items))
	}
	itemID := story["id"].(string)
	copied := c.do("GET", "/feeds/news/"+feed+"/items/"+itemID+"/copies", nil).MustStatus(t, http.StatusOK).Data()["copies"].([]any)
	addresses := []string{story["url"].(string)}
	for _, cp := range copied {
		addresses = append(addresses, cp.(map[string]any)["url"].(string))
	}
	slices.Sort(addresses)
	want := []string{wireSite.URL + wire.path(), paperSite.URL + paper.path(), tvSite.URL + tv.path()}
	slices.Sort(want)
	if !slices.Equal(addresses, want) {
		t.Errorf("the item and its copies are at %v, want %v", addresses, want)
	}

	t.Run("the history answers, without the copies, which its released entry types cannot name", func(t *testing.T) {
		entries := c.do("GET", "/feeds/news/"+feed+"/items/"+itemID+"/history", nil).MustStatus(t, http.StatusOK).Data()["entries"].([]any)
		added := 0
		for _, e := range entries {
			if e.(map[string]any)["type"] == "NewsItemAdded" {
				added++
			}
		}
		if added != 1 {
			t.Errorf("history has %d NewsItemAdded, want 1: %v", added, entries)
		}
	})

	t.Run("a split makes the copy an item of its own, and the split survives a rebuild", func(t *testing.T) {
		first := copied[0].(map[string]any)
		r := c.do("POST", "/feeds/news/"+feed+"/items/"+itemID+"/copies/"+first["newsPageId"].(string)+"/split", nil).MustStatus(t, http.StatusCreated)
		split := r.Data()["itemId"].(string)
		after := c.items(feed)
		if len(after) != 3 {
			t.Fatalf("after the split the feed has %d items, want 3: %v", len(after), keys(after))
		}
		if got := after[first["url"].(string)]; got == nil || got["id"] != split {
			t.Errorf("the split copy is not the item %s: %v", split, got)
		}
		left := c.do("GET", "/feeds/news/"+feed+"/items/"+itemID+"/copies", nil).MustStatus(t, http.StatusOK).Data()["copies"].([]any)
		if len(left) != 1 {
			t.Errorf("the item keeps %d copies, want 1", len(left))
		}
		c.do("POST", "/feeds/news/"+feed+"/items/"+itemID+"/copies/"+first["newsPageId"].(string)+"/split", nil).MustStatus(t, http.StatusNotFound)

		if err := h.Service.Rebuilds.Rebuild(context.Background(), copies.Projector{}, newsitems.Projector{}); err != nil {
			t.Fatalf("rebuild: %v", err)
		}
		rebuilt := c.items(feed)
		if len(rebuilt) != 3 {
			t.Errorf("after a rebuild the feed has %d items, want 3: %v", len(rebuilt), keys(rebuilt))
		}
		again := c.do("GET", "/feeds/news/"+feed+"/items/"+itemID+"/copies", nil).MustStatus(t, http.StatusOK).Data()["copies"].([]any)
		if len(again) != 1 {
			t.Errorf("after a rebuild the item keeps %d copies, want 1", len(again))
		}
	})
}
