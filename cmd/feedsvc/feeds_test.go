package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/readmodel"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

func TestTheFeedsCommandSwitchesAnEventFeedAsTheOperator(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	store := eventstore.NewPostgres(db.Pool)
	cmds := commands.New(store, readmodel.NewLookups(db.Bun))
	feed, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedHappenings, Org: uuid.New(), Name: "Gigs", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	load := func() domain.FeedState {
		f := domain.NewFeed(domain.FeedHappenings)
		events, err := store.ReadStream(ctx, domain.FeedStream(domain.FeedHappenings, feed.ID), 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			ev, err := domain.DecodeEvent(e.Type, e.Data)
			if err != nil {
				t.Fatal(err)
			}
			f.Apply(ev)
		}
		return f.State()
	}

	cases := []struct {
		name        string
		args        []string
		wantEnabled bool
		wantReason  string
	}{
		{"disable with a reason", []string{"events", "disable", feed.ID.String(), "--reason", "spam source"}, false, "spam source"},
		{"enable without one", []string{"events", "enable", feed.ID.String()}, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if err := runFeeds(ctx, db, tc.args, &out, &errOut); err != nil {
				t.Fatalf("feeds %v: %v (%s)", tc.args, err, errOut.String())
			}
			got := load()
			if got.Enabled != tc.wantEnabled || got.EnabledBy != domain.EnabledByAdmin || got.Reason != tc.wantReason {
				t.Fatalf("feed is enabled=%t by %q for %q", got.Enabled, got.EnabledBy, got.Reason)
			}
			if !strings.Contains(out.String(), "enabledSource=admin") {
				t.Fatalf("printed %q", out.String())
			}
		})
	}
	t.Run("an unknown feed is an error", func(t *testing.T) {
		var out, errOut bytes.Buffer
		if err := runFeeds(ctx, db, []string{"events", "disable", uuid.NewString()}, &out, &errOut); err == nil {
			t.Fatal("disabling an unknown feed succeeded")
		}
	})
}
