package eventstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// AppendsChannel is the Postgres notification channel on which every
// Postgres store announces its appends, so that readers in other
// processes (projections.Runner's head watch) wait for a notification
// instead of polling the log. The payload is the position of the last
// event appended (Position.String).
const AppendsChannel = "feedsvc_events"

// announceSpacing is the least time between two announcements of one
// store: appends within it are announced together, once, at its end. It
// bounds the notifications a busy appender sends (and every listener
// receives) to a few dozen a second, whatever the appends.
const announceSpacing = 25 * time.Millisecond

// announcer sends a store's announcements: one goroutine at a time, only
// while there is something to announce.
type announcer struct {
	mu      sync.Mutex
	pos     Position // the furthest position appended, to announce
	pending bool
	running bool
}

// announce tells other processes, after the append committed, that the
// log reaches pos. The NOTIFY is a statement of its own, outside the
// append's transaction: a transaction that notifies takes a lock at
// commit that every notifying transaction of the cluster waits for, which
// in the append would serialize concurrent appends. A lost announcement
// (the pool failing) only delays readers until their fallback poll.
func (s *Postgres) announce(pos Position) {
	a := &s.announcer
	a.mu.Lock()
	if a.pos.Less(pos) {
		a.pos = pos
	}
	a.pending = true
	if a.running {
		a.mu.Unlock()
		return
	}
	a.running = true
	a.mu.Unlock()
	go s.announceLoop()
}

func (s *Postgres) announceLoop() {
	a := &s.announcer
	for {
		a.mu.Lock()
		if !a.pending {
			a.running = false
			a.mu.Unlock()
			return
		}
		pos := a.pos
		a.pending = false
		a.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, AppendsChannel, pos.String())
		cancel()
		time.Sleep(announceSpacing)
	}
}

// ListenForAppends listens on conn for the appends every Postgres store
// of the database announces and calls heard with each announced
// position, until ctx ends or the connection fails (its error returned).
// Once listening it calls heard with the zero position: appends
// announced before then were not heard, and the caller reads the log to
// find them. conn is the caller's, and holds the LISTEN: a connection of
// its own, not one of a pool.
//
// An announced position may not be readable yet: reads stop at the fence
// (the oldest transaction still running), which an append that committed
// can be behind. A reader that cannot read up to an announced position
// reads again until it can.
func ListenForAppends(ctx context.Context, conn *pgx.Conn, heard func(Position)) error {
	if _, err := conn.Exec(ctx, "LISTEN "+AppendsChannel); err != nil {
		return fmt.Errorf("listen for appends: %w", err)
	}
	heard(Position{})
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for appends: %w", err)
		}
		pos, err := ParsePosition(n.Payload)
		if err != nil {
			// Not ours to judge: read the log as after any append.
			pos = Position{}
		}
		heard(pos)
	}
}
