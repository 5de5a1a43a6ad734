// Package projectortest holds what tests of projectors share: workloads
// of commands that write the events read models read, running projectors
// until they catch up with the log, and dumping a projector's tables to
// compare read models.
package projectortest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// FeedWorkload writes a mix of feed and source commands and returns how many
// events it appended.
func FeedWorkload(t testing.TB, cmds *commands.Handler, org uuid.UUID, feeds int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < feeds; i++ {
		f, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedNews, Org: org, Name: fmt.Sprintf("feed %d", i), Description: "d"})
		id := f.ID
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("renamed %d", i)
		off := false
		if _, _, err := cmds.UpdateFeed(ctx, commands.UpdateFeed{FeedRef: commands.FeedRef{Kind: domain.FeedNews, Org: org, FeedID: id}, Update: domain.FeedUpdate{Name: &name, Enabled: &off}}); err != nil {
			t.Fatal(err)
		}
		domainName := fmt.Sprintf("site%d.example", i%7)
		att, _, err := cmds.AttachSource(ctx, commands.AttachSource{FeedRef: commands.FeedRef{Kind: domain.FeedNews, Org: org, FeedID: id}, Request: domain.SourceRequest{SourceType: "site", Domain: &domainName}})
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if _, _, err := cmds.SetSourceEnabled(ctx, commands.SetSourceEnabled{FeedRef: commands.FeedRef{Kind: domain.FeedNews, Org: org, FeedID: id}, AttachmentID: att.ID}); err != nil {
				t.Fatal(err)
			}
		}
		if i%5 == 0 {
			if _, err := cmds.DeleteFeed(ctx, commands.FeedRef{Kind: domain.FeedNews, Org: org, FeedID: id}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// HappeningWorkload stores event feeds with sources, events found, changed and
// added through several attachments, a detach and a feed
// deletion: every event the eventitems projector reads.
func HappeningWorkload(t testing.TB, cmds *commands.Handler, org uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	base := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for f := range 4 {
		feed, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedHappenings, Org: org, Name: fmt.Sprintf("events %d", f), Description: "d"})
		must(err)
		ref := commands.FeedRef{Kind: domain.FeedHappenings, Org: org, FeedID: feed.ID}
		var atts []domain.Attachment
		for s := range 2 {
			site := fmt.Sprintf("site%d.example", (f+s)%3)
			att, _, err := cmds.AttachSource(ctx, commands.AttachSource{FeedRef: ref, Request: domain.SourceRequest{SourceType: "site", Domain: &site}})
			must(err)
			atts = append(atts, att)
		}
		for e := range 6 {
			att := atts[e%2]
			start := base.Add(time.Duration(e*24+f) * time.Hour)
			d := domain.HappeningDetails{
				Identity: fmt.Sprintf("https://site.example/e/%d", e), Title: fmt.Sprintf("Event %d", e),
				Instances: []domain.HappeningInstance{
					{Key: "a", Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{{Start: start}, {Start: start.Add(24 * time.Hour)}}},
					{Key: "b", Status: domain.StatusCancelled, Occurrences: []domain.Occurrence{{Start: start.Add(7 * 24 * time.Hour)}}},
				},
				Source: domain.SiteBlock(fmt.Sprintf("https://site.example/e/%d", e)),
			}
			found, _, err := cmds.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: att.SourceID, Details: d})
			must(err)
			for _, a := range atts[:1+e%2] {
				_, _, err := cmds.AddHappeningItem(ctx, commands.AddHappeningItem{
					ItemTarget:  domain.ItemTarget{FeedID: feed.ID, OrganizationID: org, AttachmentID: a.ID, SourceID: a.SourceID, SourceType: a.SourceType},
					HappeningID: found.HappeningID,
				})
				must(err)
			}
		}
		switch f {
		case 1:
			_, err := cmds.DetachSource(ctx, commands.DetachSource{FeedRef: ref, AttachmentID: atts[0].ID})
			must(err)
		case 2:
			_, err := cmds.DeleteFeed(ctx, ref)
			must(err)
		}
	}
}

// Dump renders a projector's tables in a stable order for comparison.
func Dump(t testing.TB, db bun.IDB, p projections.Projector) string {
	t.Helper()
	var out string
	for _, table := range p.Tables() {
		var rows []string
		err := db.NewRaw(fmt.Sprintf("SELECT t::text FROM %s AS t ORDER BY t::text", table)).Scan(context.Background(), &rows)
		if err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		out += fmt.Sprintf("%s %d rows\n%v\n", table, len(rows), rows)
	}
	return out
}

// Commands builds the command side over a test database.
func Commands(db *database.DB) (*eventstore.Postgres, *commands.Handler) {
	store := eventstore.NewPostgres(db.Pool)
	return store, commands.New(store, readmodel.NewLookups(db.Bun))
}

// RunUntilCaughtUp runs projectors until they reach the head of the log.
func RunUntilCaughtUp(t testing.TB, store eventstore.Store, db *database.DB, batch int, ps ...projections.Projector) {
	t.Helper()
	runner, err := projections.NewRunner(store, db.Bun, servicetest.Logger(), projections.RunnerConfig{BatchSize: batch, PollInterval: 20 * time.Millisecond}, ps...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	<-runner.Running()
	head := HeadPosition(t, db)
	for _, p := range ps {
		wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
		if err := runner.Progress(p.Name()).WaitFor(wctx, head); err != nil {
			t.Fatalf("%s did not catch up: %v", p.Name(), err)
		}
		wcancel()
	}
	cancel()
	<-done
}

// HeadPosition is the position of the last event of the log.
func HeadPosition(t testing.TB, db *database.DB) eventstore.Position {
	t.Helper()
	var commit, prepare int64
	err := db.Bun.NewRaw(`SELECT transaction_id::text::bigint, global_position FROM events
		ORDER BY transaction_id DESC, global_position DESC LIMIT 1`).Scan(context.Background(), &commit, &prepare)
	if err != nil {
		t.Fatal(err)
	}
	return eventstore.Position{Commit: uint64(commit), Prepare: uint64(prepare)}
}

// Logged decodes every event of E's type in the log, in log order: what a
// read model's queries must answer, worked out in the test from the
// events themselves.
func Logged[E domain.Event](t testing.TB, db bun.IDB) []E {
	t.Helper()
	var zero E
	var data []json.RawMessage
	if err := db.NewRaw(`SELECT data FROM events WHERE event_type = ? ORDER BY transaction_id, global_position`, zero.EventType()).
		Scan(context.Background(), &data); err != nil {
		t.Fatalf("read the %s events: %v", zero.EventType(), err)
	}
	out := make([]E, 0, len(data))
	for _, d := range data {
		var e E
		if err := json.Unmarshal(d, &e); err != nil {
			t.Fatalf("decode a %s event: %v", zero.EventType(), err)
		}
		out = append(out, e)
	}
	return out
}

// RebuildAnswersTheSame rebuilds p from the log and fails the test unless
// answers, the read model's queries, answer as they did before it: a
// rebuild must give the read model its projector kept live.
func RebuildAnswersTheSame(t testing.TB, dsn string, db *database.DB, store eventstore.Store, p projections.Projector, answers func() any) {
	t.Helper()
	before, err := json.Marshal(answers())
	if err != nil {
		t.Fatal(err)
	}
	if err := projections.Rebuild(context.Background(), dsn, db, store, p, servicetest.Logger()); err != nil {
		t.Fatalf("rebuild %s: %v", p.Name(), err)
	}
	after, err := json.Marshal(answers())
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Fatalf("%s rebuilt from the log answers otherwise than the live one:\nlive:    %s\nrebuilt: %s", p.Name(), before, after)
	}
}
