package copies

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
)

// VisibleWithin is how long, by default, a feed's locks are held after an
// append for the copy lookups' read models to show it (the projection
// lag) before they are let go anyway.
const VisibleWithin = 10 * time.Second

// FeedLocks are the cross-process locks of feeds' copy decisions
// (commands.FeedLocks): a Postgres transaction-level advisory lock per
// feed, held on a transaction of their own from before the copies are
// looked for until the read model the lookup asks shows what was
// appended, so the next process to decide for the feed finds it. Feeds
// lock on keys of their own (the hash of "copies:feed:" and its id, as
// the event store and the projectors key their locks): unrelated feeds
// never wait for each other, short of a 64-bit hash collision, which only
// makes two feeds take turns.
type FeedLocks struct {
	db     *bun.DB
	logger *slog.Logger
	runner *projections.Runner
	within time.Duration
	// waiter waits for the lookups' read models: the copies projector
	// (news_copy_index, commands.CopyFinder) and the event items
	// projector (event_item_occurrences, commands.HappeningCopyFinder),
	// each for the event types it reads, so an append waits only for
	// the lookups it changes.
	waiter *projections.Waiter
}

// NewFeedLocks returns the feed locks over db, waiting at most
// VisibleWithin. Until WakeOn, their waits poll the projectors'
// checkpoints.
func NewFeedLocks(db *bun.DB, logger *slog.Logger) *FeedLocks {
	l := &FeedLocks{db: db, logger: logger, within: VisibleWithin}
	l.waitOn()
	return l
}

// WakeOn has the waits wake on r's progress for the projectors r runs in
// this process, as the API's read-after-write waits do (projections.Waiter);
// projectors run elsewhere are still polled. r may be nil. It is to be
// called before the locks are first held: service.New makes the locks
// before the runner, which needs the command handler that holds them.
func (l *FeedLocks) WakeOn(r *projections.Runner) *FeedLocks {
	l.runner = r
	l.waitOn()
	return l
}

// WaitingAtMost sets how long the locks are held after an append for the
// read models to show it (VisibleWithin unless set), before the locks
// are let go anyway. It is to be called before the locks are first held.
func (l *FeedLocks) WaitingAtMost(d time.Duration) *FeedLocks {
	l.within = d
	l.waitOn()
	return l
}

func (l *FeedLocks) waitOn() {
	l.waiter = projections.NewWaiter(l.db, l.runner, l.within, Projector{}, happeningitems.Projector{})
}

var _ commands.FeedLocks = (*FeedLocks)(nil)

// Hold takes the feeds' locks in one order (no two callers deadlock).
func (l *FeedLocks) Hold(ctx context.Context, feedIDs []uuid.UUID) (func(context.Context, commands.Result), error) {
	ids := slices.Clone(feedIDs)
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	ids = slices.Compact(ids)
	tx, err := l.db.BeginTx(ctx, &sql.TxOptions{})
	if err != nil {
		return nil, fmt.Errorf("begin the feed locks' transaction: %w", err)
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, "copies:feed:"+id.String()); err != nil {
			_ = tx.Rollback()
			return nil, fmt.Errorf("lock feed %s for its copies: %w", id, err)
		}
	}
	return func(ctx context.Context, res commands.Result) {
		// Rolling back lets the locks go, whatever the wait's outcome.
		defer func() { _ = tx.Rollback() }()
		if res.Position == (eventstore.Position{}) {
			return
		}
		// The append is kept whatever comes of the wait: a lookup read
		// model too far behind (or a checkpoint unreadable that long)
		// only reopens the window the lock closes, and the caller is
		// not told it failed (a retry would append nothing new).
		if err := l.waiter.Wait(ctx, res.Position, res.EventTypes); err != nil {
			l.logger.Warn("feed copy locks let go before the copy lookup showed the append; another process may add a copy of what it added",
				"feeds", ids, "position", res.Position.String(), "bound", l.within, "err", err)
		}
	}, nil
}
