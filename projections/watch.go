package projections

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedsvc/feedsvc/eventstore"
)

// noType is an event type no event has: reading the log for it reads only
// its head.
const noType = "(no event type)"

// watchFallback is how many poll intervals a subscriber of a runner waits
// for the watch before it looks for itself (the watch's reads failing);
// watchFallbackListening is the same while the watch listens for
// announced appends and its last read succeeded: the subscribers' own
// reads (a dozen projectors) would otherwise be most of an idle
// process's reads of the log.
const (
	watchFallback          = 50
	watchFallbackListening = 300
)

// watchIdle is how many poll intervals the watch waits between reads
// while it listens for announced appends and has read up to every one it
// heard of: a fallback for appends nobody announced (a process of an
// older build, a lost notification), not the way they are found.
const watchIdle = 25

// headWatch looks for events appended by other processes on behalf of
// every subscriber of a runner: one read of the log's head (below the
// fence, as every read) at a time, instead of one read per projector,
// which with a dozen projectors was most of an idle process's
// statements. A subscriber that has caught up waits until the head is
// past its position (after); appends in this process still wake the
// subscribers of their types at once (eventstore.Appended).
//
// With a listen DSN the watch reads when an append is announced
// (eventstore.ListenForAppends), and while a position it heard of is
// beyond what it could read (the fence holding the append back) every
// poll interval until it can; otherwise every watchIdle intervals. An
// idle process then makes one read every few seconds rather than five a
// second. Without one, or while listening fails, it reads every poll
// interval.
type headWatch struct {
	store     eventstore.Store
	interval  time.Duration
	listenDSN string
	logger    *slog.Logger

	// heard is signalled (coalesced) when an append is announced.
	heard chan struct{}

	mu sync.Mutex
	// head is the furthest position known to be readable: what the
	// watch's last read reached, or a subscriber's, whichever is further.
	head eventstore.Position
	// announced is the furthest position announced; listening is whether
	// announcements are being heard.
	announced eventstore.Position
	listening bool
	// failing is whether the watch's last read failed.
	failing bool
	// moved is closed, and replaced, when a read of the watch finds the
	// head further than it knew.
	moved chan struct{}
}

func newHeadWatch(store eventstore.Store, interval time.Duration, listenDSN string, logger *slog.Logger) *headWatch {
	return &headWatch{
		store: store, interval: interval, listenDSN: listenDSN, logger: logger,
		heard: make(chan struct{}, 1), moved: make(chan struct{}),
	}
}

// after returns a channel that is closed once the head is past pos, the
// position a subscriber caught up to (at once when it already is).
func (w *headWatch) after(pos eventstore.Position) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.head.Less(pos) {
		// The subscriber read further than the watch: the head is there
		// at least, and reading on from it costs less. The subscribers
		// waiting at lower positions have events to read: they are woken,
		// since the watch will not see the head move past them now.
		w.head = pos
		close(w.moved)
		w.moved = make(chan struct{})
	}
	if pos.Less(w.head) {
		return closed
	}
	return w.moved
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// fallback is how many poll intervals a subscriber waits for the watch
// before it reads for itself.
func (w *headWatch) fallback() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.listening && !w.failing {
		return watchFallbackListening
	}
	return watchFallback
}

// next is how long the watch waits before its next read when no
// announcement comes first; behind is how many reads in a row found the
// head short of the announced position.
func (w *headWatch) next(behind int) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case !w.listening:
		return w.interval
	case !w.head.Less(w.announced):
		return w.interval * watchIdle
	}
	// An append is announced as soon as it commits, when a transaction
	// begun before it (anywhere on the server) often still holds the
	// fence below it for a few milliseconds more: the reads that follow
	// start soon and back off, a step at a time, to the poll interval.
	return min(w.interval, minReadGap*time.Duration(behind+1))
}

// behind reports whether the head is short of the announced position.
func (w *headWatch) behind() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.listening && w.head.Less(w.announced)
}

// run reads the head until ctx ends: when an append is announced, and
// every interval (next). A failed read is retried at the next; the
// subscribers' fallback covers a watch that keeps failing.
func (w *headWatch) run(ctx context.Context) {
	if w.listenDSN != "" {
		go w.listen(ctx)
	}
	t := time.NewTimer(w.interval)
	defer t.Stop()
	failing := false
	var last time.Time
	behind := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.heard:
			// Announcements come at most every few dozen milliseconds
			// from each appender; reads of the head are spaced like them
			// so that many appenders do not multiply them.
			if wait := minReadGap - time.Since(last); wait > 0 {
				sleep(ctx, wait)
			}
		case <-t.C:
		}
		last = time.Now()
		w.mu.Lock()
		from := w.head
		w.mu.Unlock()
		_, head, err := w.store.ReadAllOfTypes(ctx, from, 1, []string{noType})
		if err != nil {
			// Logged when it starts failing, not on every read.
			if !failing && ctx.Err() == nil {
				w.logger.Warn("reading the event log's head failed; projectors look for events themselves meanwhile", "err", err)
			}
			failing = true
			w.mu.Lock()
			w.failing = true
			w.mu.Unlock()
			t.Reset(w.interval)
			continue
		}
		failing = false
		w.mu.Lock()
		w.failing = false
		if w.head.Less(head) {
			w.head = head
			close(w.moved)
			w.moved = make(chan struct{})
		}
		w.mu.Unlock()
		if w.behind() {
			behind++
		} else {
			behind = 0
		}
		t.Reset(w.next(behind - 1))
	}
}

// minReadGap is the least time between two reads of the watch woken by
// announcements, and the first wait of a watch whose read stopped short
// of an announced position.
const minReadGap = 10 * time.Millisecond

// listen holds a connection of its own that listens for announced
// appends, reconnecting after a pause when it fails, until ctx ends.
func (w *headWatch) listen(ctx context.Context) {
	pause := time.Second
	for {
		err := w.listenOnce(ctx)
		w.mu.Lock()
		w.listening = false
		w.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		w.logger.Warn("listening for appends failed; the head watch polls meanwhile", "err", err, "retry_in", pause)
		sleep(ctx, pause)
		pause = min(2*pause, 30*time.Second)
	}
}

func (w *headWatch) listenOnce(ctx context.Context) error {
	// The DSN is a pool's (pool_max_conns): pgxpool reads it.
	cfg, err := pgxpool.ParseConfig(w.listenDSN)
	if err != nil {
		return fmt.Errorf("listen for appends: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return fmt.Errorf("connect to listen for appends: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // closing a connection that may have failed
	return eventstore.ListenForAppends(ctx, conn, func(pos eventstore.Position) {
		w.mu.Lock()
		// Listening from now on: the first call (zero position) asks for a
		// read of what was appended while not listening.
		w.listening = true
		if w.announced.Less(pos) {
			w.announced = pos
		}
		w.mu.Unlock()
		select {
		case w.heard <- struct{}{}:
		default:
		}
	})
}
