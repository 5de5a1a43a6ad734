// Package changes owns the change key every item list pages by (the
// item-list cursor of news and event feeds alike): where an item last
// changed in its feed's list, and how a page read after a key says where
// the next one starts. The item read models (readmodel/newsitems,
// readmodel/happeningitems) write and read the keys; http encodes them as
// cursors.
package changes

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Key is where an item last changed in its feed's list: the global
// log position of the event that last changed it, then its id, since one
// event can change several items of a feed. Item lists page through a
// feed's changes in this order (the item-list cursor).
//
// It is exact because of who writes it. The owning projector applies the
// log strictly in order, one batch transaction after another (under its
// advisory lock), and the log itself hands out an event only once no
// event before it can still commit (the fence in eventstore/postgres.go).
// So a reader that sees an item changed at position P sees every change
// at a position before P too: reading the keys after a cursor never skips
// a change that commits later. And a rebuild replays the same events into
// the same keys, so a cursor outlives restarts and rebuilds.
type Key struct {
	Commit, Prepare uint64
	Item            uuid.UUID
}

// Less orders keys as the lists do (Postgres compares uuids bytewise).
func (k Key) Less(o Key) bool {
	if k.Commit != o.Commit {
		return k.Commit < o.Commit
	}
	if k.Prepare != o.Prepare {
		return k.Prepare < o.Prepare
	}
	return bytes.Compare(k.Item[:], o.Item[:]) < 0
}

// Args are the key as the three values of a row comparison with
// (change_commit, change_prepare, id).
func (k Key) Args() []any {
	return []any{int64(k.Commit), int64(k.Prepare), k.Item}
}

// Changes is what a page read in change order carries besides its items.
type Changes struct {
	// Next is where the next read continues; set on every page (the
	// cursor of the answer). A page read by offset has the feed's latest
	// change: polling from it returns what changes after the page.
	Next Key
	// HasMore reports that more changes follow Next right away.
	HasMore bool
	// Removed are the items that left the feed after the cursor, in
	// change order (event feeds: their last attachment was removed).
	Removed []uuid.UUID
}

// NextAfter is where polling continues after a page of changes read after
// after: the last entry of a full page; otherwise the feed's latest change
// when the page was read (latest, read before the page), so that changes
// the filters skip are not walked again. Every change up to latest that
// matched is in a page that is not full: the page saw all of them.
func NextAfter(after, latest Key, last *Key, more bool) Key {
	if more && last != nil {
		return *last
	}
	next := after
	if last != nil && next.Less(*last) {
		next = *last
	}
	if next.Less(latest) {
		next = latest
	}
	return next
}

// LatestSQL finds the latest change of the feed given as param in a
// table with change keys: one step back along its (feed_id, change key)
// index.
func LatestSQL(table, param string) string {
	return `SELECT change_commit, change_prepare, id FROM ` + table + ` WHERE feed_id = ` + param + `
		ORDER BY change_commit DESC, change_prepare DESC, id DESC LIMIT 1`
}

// Latest reads the latest change of a feed's items in table; the
// zero key (before every change) when it has none.
func Latest(ctx context.Context, db bun.IDB, table string, feedID uuid.UUID) (Key, error) {
	var (
		k               Key
		commit, prepare int64
	)
	err := db.NewRaw(LatestSQL(table, "?"), feedID).Scan(ctx, &commit, &prepare, &k.Item)
	if errors.Is(err, sql.ErrNoRows) {
		return Key{}, nil
	}
	if err != nil {
		return Key{}, fmt.Errorf("latest change of feed %s: %w", feedID, err)
	}
	k.Commit, k.Prepare = uint64(commit), uint64(prepare)
	return k, nil
}

// LatestOf reads the latest change of each of feeds' items in table, in
// one statement (one step back along the index per feed); a feed without
// items is left out. The live item streams' shared poller asks it for
// every feed with an open stream at once.
func LatestOf(ctx context.Context, db bun.IDB, table string, feeds []uuid.UUID) (map[uuid.UUID]Key, error) {
	out := make(map[uuid.UUID]Key, len(feeds))
	if len(feeds) == 0 {
		return out, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT f.id, l.change_commit, l.change_prepare, l.id
		FROM unnest(?::uuid[]) AS f(id)
		CROSS JOIN LATERAL (`+LatestSQL(table, "f.id")+`) AS l`, pgdialect.Array(feeds))
	if err != nil {
		return nil, fmt.Errorf("latest changes in %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			feed            uuid.UUID
			commit, prepare int64
			k               Key
		)
		if err := rows.Scan(&feed, &commit, &prepare, &k.Item); err != nil {
			return nil, fmt.Errorf("latest changes in %s: %w", table, err)
		}
		k.Commit, k.Prepare = uint64(commit), uint64(prepare)
		out[feed] = k
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("latest changes in %s: %w", table, err)
	}
	return out, nil
}
