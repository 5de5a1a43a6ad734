package copies

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/eventstore"
)

// FeedLocks are the cross-process locks of feeds' copy decisions
// (commands.FeedLocks): a Postgres transaction-level advisory lock per
// feed, held on a transaction of their own from before the copies are
// looked for until this read model shows what was appended, so the next
// process to decide for the feed finds it. Feeds lock on keys of their
// own (the hash of "copies:feed:" and its id, as the event store and the
// projectors key their locks): unrelated feeds never wait for each other,
// short of a 64-bit hash collision, which only makes two feeds take turns.
type FeedLocks struct {
	db       *bun.DB
	interval time.Duration
}

// NewFeedLocks returns the feed locks over db.
func NewFeedLocks(db *bun.DB) *FeedLocks { return &FeedLocks{db: db, interval: 5 * time.Millisecond} }

var _ commands.FeedLocks = (*FeedLocks)(nil)

// Hold takes the feeds' locks in one order (no two callers deadlock).
func (l *FeedLocks) Hold(ctx context.Context, feedIDs []uuid.UUID) (func(context.Context, commands.Result) error, error) {
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
	return func(ctx context.Context, res commands.Result) error {
		// Rolling back lets the locks go, whatever the wait's outcome.
		defer func() { _ = tx.Rollback() }()
		if res.Position == (eventstore.Position{}) {
			return nil
		}
		return l.waitVisible(ctx, res.Position)
	}, nil
}

// waitVisible polls the copies projector's checkpoint until it reached pos.
func (l *FeedLocks) waitVisible(ctx context.Context, pos eventstore.Position) error {
	for {
		var commit, prepare int64
		err := l.db.NewRaw(`SELECT commit_position, prepare_position FROM projection_checkpoints WHERE name = ?`, Projector{}.Name()).Scan(ctx, &commit, &prepare)
		if err == nil && !(eventstore.Position{Commit: uint64(commit), Prepare: uint64(prepare)}).Less(pos) {
			return nil
		}
		t := time.NewTimer(l.interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("copies read model did not reach %s: %w", pos, ctx.Err())
		case <-t.C:
		}
	}
}
