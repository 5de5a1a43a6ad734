package projections

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
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
// On a store that names the types of what it appended (typesReader: the
// Postgres store), the watch reads those types with the head and wakes
// only the subscribers of one of them. Waking every subscriber whenever
// the log moved made each append of one type cost a dozen projectors a
// wake-up, a read and a checkpoint write to pass over it: at 1,000
// polled sites, a third of the service's statements
// (bench/freshness/README.md). A subscriber's checkpoint then stays
// behind events of other types until one of its own comes or its
// fallback poll (after, fallback), which no read-after-write wait minds:
// a write waits only for the projectors of its types (Waiter).
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
	// typed reads the types with the head (nil: the store cannot);
	// waiters are the subscribers waiting for one of their types, woken
	// by the watch's reads.
	typed   typesReader
	waiters map[*typedWaiter]struct{}
}

// typesReader is a store that names the types of the events after a
// position (eventstore.Postgres.TypesAfter).
type typesReader interface {
	TypesAfter(ctx context.Context, from eventstore.Position, max int) (types []string, head eventstore.Position, full bool, err error)
}

// typedWaiter is a subscriber caught up to pos, waiting for an event of
// one of its types past it.
type typedWaiter struct {
	pos   eventstore.Position
	types []string
	ch    chan struct{}
}

// typesPage bounds one read of the watch: a burst of appends longer than
// this is read in several, each waking the subscribers of its types.
const typesPage = 1000

func newHeadWatch(store eventstore.Store, interval time.Duration, listenDSN string, logger *slog.Logger) *headWatch {
	w := &headWatch{
		store: store, interval: interval, listenDSN: listenDSN, logger: logger,
		heard: make(chan struct{}, 1), moved: make(chan struct{}),
		waiters: map[*typedWaiter]struct{}{},
	}
	if t, ok := store.(typesReader); ok {
		w.typed = t
	}
	return w
}

// after returns a channel that is closed once the head is past pos, the
// position a subscriber of types caught up to (at once when it already
// is), and a function to call when the subscriber stops waiting. On a
// typed watch the channel is closed only when the watch reads an event of
// one of types past pos (types empty: of any type).
func (w *headWatch) after(pos eventstore.Position, types []string) (<-chan struct{}, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if pos.Less(w.head) {
		return closed, func() {}
	}
	if w.typed != nil {
		// The head moves only by the watch's own reads, which know the
		// types of what they passed: a subscriber that read further does
		// not move it, or the types between would be unknown.
		tw := &typedWaiter{pos: pos, types: types, ch: make(chan struct{})}
		w.waiters[tw] = struct{}{}
		return tw.ch, func() {
			w.mu.Lock()
			delete(w.waiters, tw)
			w.mu.Unlock()
		}
	}
	if w.head.Less(pos) {
		// The subscriber read further than the watch: the head is there
		// at least, and reading on from it costs less. The subscribers
		// waiting at lower positions have events to read: they are woken,
		// since the watch will not see the head move past them now.
		w.head = pos
		close(w.moved)
		w.moved = make(chan struct{})
	}
	return w.moved, func() {}
}

// wake wakes the typed waiters before head that wait for one of types
// (every one when types is nil: not known), and the untyped ones. The
// caller holds w.mu and has moved w.head to head.
func (w *headWatch) wake(head eventstore.Position, types []string) {
	close(w.moved)
	w.moved = make(chan struct{})
	for tw := range w.waiters {
		if !tw.pos.Less(head) {
			continue
		}
		if types != nil && len(tw.types) > 0 && !slices.ContainsFunc(tw.types, func(t string) bool { return slices.Contains(types, t) }) {
			continue
		}
		close(tw.ch)
		delete(w.waiters, tw)
	}
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
		head, types, full, err := w.read(ctx, from)
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
			w.wake(head, types)
		}
		w.mu.Unlock()
		if full {
			// A burst longer than a page: read on at once.
			t.Reset(0)
			continue
		}
		if w.behind() {
			behind++
		} else {
			behind = 0
		}
		t.Reset(w.next(behind - 1))
	}
}

// read reads the log's head after from and, on a typed watch, the types
// of the events up to it (nil otherwise); full says a typed read stopped
// at its page, short of the head.
func (w *headWatch) read(ctx context.Context, from eventstore.Position) (head eventstore.Position, types []string, full bool, err error) {
	// The first read only learns the head (and wakes everyone): the types
	// of the whole log are of no use to anyone.
	if w.typed != nil && from != (eventstore.Position{}) {
		types, head, full, err = w.typed.TypesAfter(ctx, from, typesPage)
		if types == nil {
			types = []string{}
		}
		return head, types, full, err
	}
	_, head, err = w.store.ReadAllOfTypes(ctx, from, 1, []string{noType})
	return head, nil, false, err
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
