package servicetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
)

// FeedbackHistory is what WriteFeedbackHistory recorded: two
// organizations' feeds of both kinds, items added over a week and feedback
// given on them over the following days.
type FeedbackHistory struct {
	// Org is acme's (the harness key's); its feeds are News, Events, and
	// Deleted, a news feed deleted after it got feedback.
	Org     uuid.UUID
	News    []uuid.UUID
	Events  []uuid.UUID
	Deleted uuid.UUID
	// Other is a second organization with one news feed, fed by a source
	// record acme's feeds use too; OtherKey is its key.
	Other     uuid.UUID
	OtherFeed uuid.UUID
	OtherKey  string
	// Start is the Monday the history starts.
	Start time.Time
}

// historyWriter records through commands dated by its own clock.
type historyWriter struct {
	h    *Harness
	cmds *commands.Handler
	now  time.Time
	rng  *rand.Rand
}

// wait fails the test on a command's error, else waits for the read
// models of what it wrote.
func (w *historyWriter) wait(res commands.Result, err error) {
	w.h.T.Helper()
	if err != nil {
		w.h.T.Fatal(err)
	}
	if err := w.h.Service.Waiter.Wait(context.Background(), res.Position, res.EventTypes); err != nil {
		w.h.T.Fatal(err)
	}
}

type historyItem struct {
	kind domain.FeedKind
	org  uuid.UUID
	feed uuid.UUID
	id   uuid.UUID
	at   time.Time
}

// WriteFeedbackHistory records a varied history of items and feedback,
// the same for a seed: ratings of all three kinds, several entries on one
// item that change its rating (feedback is additive, so each counts),
// comments and empty ones, items added after others were rated, feedback
// a skewed clock dated before its item's add, and a feed deleted after
// its feedback.
func WriteFeedbackHistory(h *Harness, seed uint64) FeedbackHistory {
	h.T.Helper()
	ctx := context.Background()
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC) // a Monday
	w := &historyWriter{h: h, now: start, rng: rand.New(rand.NewPCG(seed, seed+1))}
	w.cmds = h.Service.Commands.WithClock(func() time.Time { return w.now })

	p, err := h.Service.Keys.Authenticate(ctx, h.Key)
	if err != nil {
		h.T.Fatal(err)
	}
	out := FeedbackHistory{Org: p.OrganizationID, Start: start}
	out.OtherKey = h.NewKey("globex")
	if p, err = h.Service.Keys.Authenticate(ctx, out.OtherKey); err != nil {
		h.T.Fatal(err)
	}
	out.Other = p.OrganizationID

	feed := func(kind domain.FeedKind, org uuid.UUID, sites ...string) (uuid.UUID, []domain.Attachment) {
		state, res, err := w.cmds.CreateFeed(ctx, commands.CreateFeed{Kind: kind, Org: org, Name: "insights", Description: "d"})
		w.wait(res, err)
		var atts []domain.Attachment
		for _, site := range sites {
			att, res, err := w.cmds.AttachSource(ctx, commands.AttachSource{
				FeedRef: commands.FeedRef{Kind: kind, Org: org, FeedID: state.ID}, Request: domain.SourceRequest{SourceType: "site", Domain: &site},
			})
			w.wait(res, err)
			atts = append(atts, att)
		}
		return state.ID, atts
	}
	n1, n1a := feed(domain.FeedNews, out.Org, "s0.insights.example", "s1.insights.example")
	n2, n2a := feed(domain.FeedNews, out.Org, "s1.insights.example", "s2.insights.example")
	e1, e1a := feed(domain.FeedHappenings, out.Org, "s2.insights.example", "s3.insights.example")
	gone, gonea := feed(domain.FeedNews, out.Org, "s0.insights.example")
	other, othera := feed(domain.FeedNews, out.Other, "s0.insights.example", "s4.insights.example")
	out.News, out.Events, out.Deleted, out.OtherFeed = []uuid.UUID{n1, n2}, []uuid.UUID{e1}, gone, other

	var items []historyItem
	article := 0
	addNews := func(org, feedID uuid.UUID, att domain.Attachment, url string) {
		d, res, err := w.cmds.DiscoverArticle(ctx, commands.DiscoverArticle{SourceID: att.SourceID, Content: domain.ArticleContent{URL: url, Title: "t"}})
		w.wait(res, err)
		_, res, err = w.cmds.AddNewsItem(ctx, commands.AddNewsItem{ItemTarget: domain.ItemTarget{FeedID: feedID, OrganizationID: org, AttachmentID: att.ID,
			SourceID: att.SourceID, SourceType: att.SourceType}, Article: d.ArticleDiscovered})
		w.wait(res, err)
		var id uuid.UUID
		if err := h.Service.DB.Bun.NewRaw("SELECT id FROM news_items WHERE feed_id = ? AND news_page_id = ?", feedID, d.NewsPageID).Scan(ctx, &id); err != nil {
			h.T.Fatal(err)
		}
		items = append(items, historyItem{domain.FeedNews, org, feedID, id, w.now})
	}
	addEvent := func(feedID uuid.UUID, att domain.Attachment, identity string) {
		start := w.now.Add(20 * 24 * time.Hour)
		found, res, err := w.cmds.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: att.SourceID, Details: domain.HappeningDetails{
			Identity: identity, Title: "Event", Description: "d", Time: domain.HappeningTime{TemporalPattern: domain.PatternSingular, Timezone: "UTC"},
			Instances: []domain.HappeningInstance{{Key: "0", Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{{Start: start}}}},
			Source:    domain.SiteBlock(identity),
		}})
		w.wait(res, err)
		_, res, err = w.cmds.AddHappeningItem(ctx, commands.AddHappeningItem{ItemTarget: domain.ItemTarget{FeedID: feedID, OrganizationID: out.Org,
			AttachmentID: att.ID, SourceID: att.SourceID, SourceType: att.SourceType}, HappeningID: found.HappeningID})
		w.wait(res, err)
		items = append(items, historyItem{domain.FeedHappenings, out.Org, feedID, domain.HappeningItemID(feedID, found.HappeningID), w.now})
	}
	addSome := func() {
		for _, t := range []struct {
			org, feed uuid.UUID
			att       domain.Attachment
		}{{out.Org, n1, n1a[0]}, {out.Org, n1, n1a[1]}, {out.Org, n2, n2a[0]}, {out.Org, n2, n2a[1]}, {out.Org, gone, gonea[0]},
			{out.Other, other, othera[0]}, {out.Other, other, othera[1]}} {
			for range 1 + w.rng.IntN(2) {
				article++
				addNews(t.org, t.feed, t.att, fmt.Sprintf("https://%s/a/%d", t.att.Details.Domain, article))
				w.now = w.now.Add(time.Duration(w.rng.IntN(90)+1) * time.Minute)
			}
		}
		for _, att := range e1a {
			article++
			addEvent(e1, att, fmt.Sprintf("https://%s/e/%d", att.Details.Domain, article))
		}
	}
	rate := func(it historyItem, at time.Time) {
		w.now = at
		comment := ""
		if w.rng.IntN(3) > 0 {
			comment = fmt.Sprintf("comment %d", w.rng.IntN(1000))
		}
		rating := []string{"positive", "negative", "neutral"}[w.rng.IntN(3)]
		_, res, err := w.cmds.GiveFeedback(ctx, commands.GiveFeedback{
			FeedRef: commands.FeedRef{Kind: it.kind, Org: it.org, FeedID: it.feed}, ItemID: it.id, Rating: rating, Comment: comment,
		})
		w.wait(res, err)
	}

	// Three rounds: items are added, then rated over the next days, then
	// more items come while the earlier ones keep being rated.
	for round := range 3 {
		w.now = start.Add(time.Duration(round*3)*24*time.Hour + 9*time.Hour)
		addSome()
		added := w.now
		for range 25 {
			it := items[w.rng.IntN(len(items))]
			rate(it, added.Add(time.Duration(w.rng.IntN(4*24*60))*time.Minute))
		}
	}
	// One item rated three times, its rating changing each time.
	for i, at := range []time.Duration{30 * time.Hour, 31 * time.Hour, 80 * time.Hour} {
		w.now = items[0].at.Add(at)
		_, res, err := w.cmds.GiveFeedback(ctx, commands.GiveFeedback{
			FeedRef: commands.FeedRef{Kind: items[0].kind, Org: items[0].org, FeedID: items[0].feed}, ItemID: items[0].id,
			Rating: []string{"positive", "negative", "neutral"}[i], Comment: fmt.Sprintf("changed my mind %d", i),
		})
		w.wait(res, err)
	}
	// A clock running behind: feedback dated before its item was added.
	last := items[len(items)-1]
	rate(last, last.at.Add(-36*time.Hour))

	w.now = start.Add(12 * 24 * time.Hour)
	res, err := w.cmds.DeleteFeed(ctx, commands.FeedRef{Kind: domain.FeedNews, Org: out.Org, FeedID: gone})
	w.wait(res, err)
	return out
}
