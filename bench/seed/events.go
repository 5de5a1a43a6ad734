package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/database"
)

// eventsDB is the event benchmark's own database on the same server.
func eventsDB() string {
	dsn, err := database.WithDatabase(defaultDB(), "feedsvc_bench_events")
	if err != nil {
		return ""
	}
	return dsn
}

// seedEvents fills one event feed with events found through one site
// source, through the same commands ingestion uses (DiscoverHappening, then
// AddHappeningItem), from several writers at once; then the projections catch
// up.
func seedEvents(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("seed events", flag.ContinueOnError)
	dsn := fs.String("db", eventsDB(), "database URL (created if missing)")
	fresh := fs.Bool("fresh", false, "drop the database first")
	org := fs.String("org", "bench", "organization of the key and the feed")
	events := fs.Int("events", 10_000, "events in the feed (10 occurrences each)")
	writers := fs.Int("writers", 16, "concurrent command writers")
	seed := fs.Uint64("seed", 1, "random seed of the event layout")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after this long")
	verbose := fs.Bool("v", false, "log projection progress")
	config := fs.String("config", "", "the event feed's config (JSON), e.g. with geo and keywords so that items are scored")
	newsItems := fs.Int("news-items", 0, "also a news feed of this many items (NEWS_FEED), the peer the event list is measured beside")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *newsItems < 0 || *newsItems > 1_000_000 {
		return errors.New("-news-items must be in [0, 1e6]")
	}
	if *events < 1 || *events > 1_000_000 || *writers < 1 || *writers > 256 {
		return errors.New("-events must be in [1, 1e6], -writers in [1, 256]")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	db, store, cmds, key, orgID, err := openWithKey(ctx, *dsn, *fresh, *org)
	if err != nil {
		return err
	}
	defer db.Close()
	var opts domain.FeedOptions
	if *config != "" {
		c, err := domain.ParseFeedConfig([]byte(*config))
		if err != nil {
			return fmt.Errorf("-config: %w", err)
		}
		opts.Config = &c
	}
	feed, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{
		Kind: domain.FeedHappenings, Org: orgID, Name: "Bench events", Description: fmt.Sprintf("%d events", *events),
		Options: opts,
	})
	if err != nil {
		return err
	}
	site := "events.example.com"
	att, _, err := cmds.AttachSource(ctx, commands.AttachSource{
		FeedRef: commands.FeedRef{Kind: domain.FeedHappenings, Org: orgID, FeedID: feed.ID},
		Request: domain.SourceRequest{SourceType: "site", Domain: &site},
	})
	if err != nil {
		return err
	}
	gen := eventGen{now: time.Now().UTC().Truncate(time.Hour), seed: *seed}
	target := domain.ItemTarget{FeedID: feed.ID, OrganizationID: orgID, AttachmentID: att.ID, SourceID: att.SourceID, SourceType: att.SourceType}
	t0 := time.Now()
	if err := addEvents(ctx, cmds, gen, target, *events, *writers); err != nil {
		return err
	}
	el := time.Since(t0)
	fmt.Fprintf(os.Stderr, "added %d events (%d occurrences) through the commands (%d writers) in %s: %.0f events/s\n",
		*events, *events*occurrencesPerEvent, *writers, el.Round(time.Millisecond), float64(*events)/el.Seconds())
	var newsFeed uuid.UUID
	if *newsItems > 0 {
		news, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{
			Kind: domain.FeedNews, Org: orgID, Name: "Bench news", Description: fmt.Sprintf("%d items", *newsItems),
		})
		if err != nil {
			return err
		}
		newsFeed = news.ID
		if err := appendItems(ctx, store, newItemGen(orgID, []uuid.UUID{news.ID}), *newsItems, *writers); err != nil {
			return err
		}
	}
	if err := catchUpAll(ctx, db, store, logger(*verbose), os.Stderr); err != nil {
		return err
	}
	if _, err := db.Pool.Exec(ctx, `VACUUM (ANALYZE)`); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "KEY=%s\nORG=%s\nEVENT_FEED=%s\n", key, orgID, feed.ID)
	if *newsItems > 0 {
		fmt.Fprintf(stdout, "NEWS_FEED=%s\n", newsFeed)
	}
	return nil
}

func addEvents(ctx context.Context, cmds *commands.Handler, gen eventGen, to domain.ItemTarget, n, writers int) error {
	return inParallel(ctx, n, writers, func(i int) error {
		found, _, err := cmds.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: to.SourceID, Details: gen.event(i)})
		if err != nil {
			return err
		}
		_, _, err = cmds.AddHappeningItem(ctx, commands.AddHappeningItem{ItemTarget: to, HappeningID: found.HappeningID})
		return err
	})
}

const occurrencesPerEvent = 10

// eventGen lays out a city's year of events around now: each event starts
// on a day drawn uniformly from 60 days back to 300 days ahead, at a
// whole hour between 10:00 and 21:00, and has 10 occurrences, as
//   - half: a weekly series (10 instances a week apart, 2 hours each; one
//     in ten series has an instance cancelled),
//   - a quarter: a 10-day festival (one instance, one occurrence a day),
//   - a quarter: a monthly series (10 instances 30 days apart).
//
// So a 30-day window holds about a twelfth of the occurrences (~8,300 of
// 100,000) of about a third of the events.
type eventGen struct {
	now  time.Time
	seed uint64
}

func (g eventGen) event(i int) domain.HappeningDetails {
	r := rand.New(rand.NewPCG(g.seed, uint64(i)))
	first := g.now.Truncate(24 * time.Hour).
		Add(time.Duration(r.IntN(360)-60) * 24 * time.Hour).
		Add(time.Duration(10+r.IntN(12)) * time.Hour)
	url := fmt.Sprintf("https://events.example.com/%d/%s", i, "an-event-with-a-reasonably-long-slug")
	d := domain.HappeningDetails{
		Identity: url, Title: fmt.Sprintf("Event %d: a concert, a talk or an exhibition with a real-length title", i),
		Description:      "<p>A paragraph about the event, as event pages usually carry one, long enough to look like the real thing in a response body.</p>",
		ShortDescription: "A short summary of the event.",
		Time:             domain.HappeningTime{Timezone: "Europe/Berlin", DisplayText: "See the event page for times"},
		Location: &domain.Location{
			Venue:          &domain.Venue{Name: "Kulturhaus", Address: "Hauptstraße 1, 10827 Berlin"},
			Coordinates:    &domain.Coordinates{Lat: 52.48 + r.Float64()/10, Lng: 13.35 + r.Float64()/10},
			DisplayAddress: "Kulturhaus, Hauptstraße 1, Berlin", Locality: "Berlin", Country: "DE",
		},
		Organizer:    &domain.Organizer{Name: "Kulturhaus Berlin", URL: "https://events.example.com"},
		PrimaryImage: fmt.Sprintf("https://cdn.example.com/events/%d.jpg", i),
		PrimaryURL:   url, URLs: []string{url},
		GeoLocations: []domain.GeoLocation{
			{Description: "Kulturhaus, Berlin", RelationType: domain.GeoLocationPoint, Score: 100},
			{Description: "Berlin", RelationType: domain.GeoRelevanceRange, Score: 80},
		},
		Source: domain.SiteBlock(url),
	}
	switch {
	case i%4 < 2:
		d.Time.TemporalPattern = domain.PatternRecurring
		d.Instances = series(first, 7*24*time.Hour, 2*time.Hour, i%10 == 0)
	case i%4 == 2:
		d.Time.TemporalPattern = domain.PatternSingular
		in := domain.HappeningInstance{Key: "0", Status: domain.StatusScheduled}
		for k := range occurrencesPerEvent {
			start := first.Add(time.Duration(k) * 24 * time.Hour)
			end := start.Add(8 * time.Hour)
			in.Occurrences = append(in.Occurrences, domain.Occurrence{Start: start, End: &end})
		}
		d.Instances = []domain.HappeningInstance{in}
	default:
		d.Time.TemporalPattern = domain.PatternRecurring
		d.Instances = series(first, 30*24*time.Hour, 3*time.Hour, false)
	}
	return d
}

func series(first time.Time, every, length time.Duration, cancelOne bool) []domain.HappeningInstance {
	out := make([]domain.HappeningInstance, 0, occurrencesPerEvent)
	for k := range occurrencesPerEvent {
		start := first.Add(time.Duration(k) * every)
		end := start.Add(length)
		status := domain.StatusScheduled
		if cancelOne && k == 3 {
			status = domain.StatusCancelled
		}
		out = append(out, domain.HappeningInstance{
			Key: start.Format(time.RFC3339), Status: status,
			Occurrences: []domain.Occurrence{{Start: start, End: &end}},
		})
	}
	return out
}
