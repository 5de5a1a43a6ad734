package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/readmodel"
)

const feedsUsage = `Usage: feedsvc feeds events enable|disable FEED_ID [--reason TEXT]

Switches an event feed of any organization on or off as the operator: the
feed's enabledSource becomes "admin" and enabledReason the given reason.
`

// runFeeds implements `feedsvc feeds events enable|disable`.
func runFeeds(ctx context.Context, db *database.DB, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, feedsUsage)
		return nil
	}
	if len(args) < 2 || args[0] != "events" || (args[1] != "enable" && args[1] != "disable") {
		fmt.Fprint(stderr, feedsUsage)
		return errors.New("feeds: expected events enable|disable FEED_ID")
	}
	fs := flag.NewFlagSet("feeds events "+args[1], flag.ContinueOnError)
	fs.SetOutput(stderr)
	reason := fs.String("reason", "", "why the feed is switched (shown as enabledReason)")
	rest := args[2:]
	if len(rest) == 0 {
		fmt.Fprint(stderr, feedsUsage)
		return errors.New("feeds: missing FEED_ID")
	}
	id, err := uuid.Parse(rest[0])
	if err != nil {
		return fmt.Errorf("feeds: FEED_ID %q is not a UUID", rest[0])
	}
	if help, err := parseFlags(fs, rest[1:]); help || err != nil {
		return err
	}
	handler := commands.New(eventstore.NewPostgres(db.Pool), readmodel.NewLookups(db.Bun))
	feed, _, err := handler.SetFeedEnabled(ctx, commands.SetFeedEnabled{
		Kind: domain.FeedHappenings, FeedID: id, Enabled: args[1] == "enable", By: domain.EnabledByAdmin, Reason: *reason,
	})
	if err != nil {
		return fmt.Errorf("feeds events %s %s: %w", args[1], id, err)
	}
	fmt.Fprintf(stdout, "event feed %s enabled=%t enabledSource=%s\n", feed.ID, feed.Enabled, feed.EnabledBy)
	return nil
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}
