package projections

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/eventstore"
)

type txKey struct{}

// TxFromContext returns the transaction of the batch whose message ctx is
// (the message's context): the one its checkpoint is written in, which
// commits when the handler acks and rolls back when it nacks.
func TxFromContext(ctx context.Context) (bun.Tx, bool) {
	tx, ok := ctx.Value(txKey{}).(bun.Tx)
	return tx, ok
}

// BatchWriter holds writes a projector postpones to the end of a batch, so
// that a batch's events become a few multi-row statements instead of a
// round trip or two each. Flush runs in the batch's transaction after the
// batch's last event and before its checkpoint is written; an error rolls
// the whole batch back, as a failing event does. A projector that defers
// must defer every write to the tables involved (or flush first), so that
// its own reads within the batch never miss a pending write.
type BatchWriter interface {
	Flush(ctx context.Context, db bun.IDB) error
}

type deferredKey struct{}

// deferred is a batch's BatchWriters, flushed in order of first use.
type deferred struct {
	mu     sync.Mutex
	keys   []any
	byKey  map[any]BatchWriter
	closed bool
}

// Deferred returns the current batch's writer for key, made by create on
// first use. ok is false when ctx is not a batch's (the projector was
// called directly): the caller must then write at once.
func Deferred[W BatchWriter](ctx context.Context, key any, create func() W) (w W, ok bool) {
	d, _ := ctx.Value(deferredKey{}).(*deferred)
	if d == nil {
		return w, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return w, false
	}
	if got, found := d.byKey[key]; found {
		return got.(W), true
	}
	w = create()
	d.byKey[key] = w
	d.keys = append(d.keys, key)
	return w, true
}

func (d *deferred) flush(ctx context.Context, db bun.IDB) error {
	d.mu.Lock()
	d.closed = true
	keys, byKey := d.keys, d.byKey
	d.mu.Unlock()
	for _, k := range keys {
		if err := byKey[k].Flush(ctx, db); err != nil {
			return err
		}
	}
	return nil
}

// defaultPollInterval is SubscriberConfig.PollInterval's default.
const defaultPollInterval = 200 * time.Millisecond

// SubscriberConfig tunes a Subscriber.
type SubscriberConfig struct {
	// Checkpoint is the name of the checkpoint row (the consumer group).
	Checkpoint string
	// Version is recorded with a checkpoint row this subscriber creates:
	// the version of the projector that starts the read model.
	Version int
	// EventTypes filters what is delivered; empty means everything.
	EventTypes []string
	BatchSize  int
	// PollInterval is how often an idle subscriber looks for events
	// appended by other processes; appends in this process wake it at once.
	PollInterval time.Duration
	// RetryBackoff is the first wait after a failed batch; it doubles up to
	// a minute while the same batch keeps failing.
	RetryBackoff time.Duration
	// watch, when set (by a Runner, for all its subscribers), looks for
	// other processes' appends instead of each subscriber every
	// PollInterval; the subscriber then looks for itself only every
	// watchFallback intervals (watchFallbackListening while the watch
	// hears announced appends).
	watch *headWatch
}

// Subscriber is a Watermill subscriber over the event store's global log.
//
// Each batch runs in one transaction: it takes the checkpoint's advisory
// lock (so two processes never project the same batch), reads the events
// of the projector's types after the checkpoint (the store passes the
// others), hands them to the handler as one message that carries them
// (its payload) and the transaction (its context: TxFromContext), and
// writes the new checkpoint, how far the read reached, in that
// transaction. An acked batch commits; a nack rolls the whole batch back
// and it is delivered again from the same checkpoint after a backoff.
// Nothing is skipped and nothing applied twice. One message per batch
// rather than per event: Watermill's per-message goroutine and metadata
// cost more than a projector's work on most events.
type Subscriber struct {
	store    eventstore.Store
	db       *bun.DB
	cfg      SubscriberConfig
	types    map[string]bool
	progress *Progress
	logger   *slog.Logger

	closeOnce sync.Once
	closing   chan struct{}
	wg        sync.WaitGroup

	// ahead is the next page, being read (and its message built) while a
	// batch is projected; resume, when set, is where the next page starts
	// instead of this process's position (a checkpoint found behind it).
	// Only the loop goroutine touches them.
	ahead  *page
	resume *eventstore.Position
}

// NewSubscriber returns a subscriber reporting its position to progress.
func NewSubscriber(store eventstore.Store, db *bun.DB, cfg SubscriberConfig, progress *Progress, logger *slog.Logger) *Subscriber {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 500
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = defaultPollInterval
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 100 * time.Millisecond
	}
	types := map[string]bool{}
	for _, t := range cfg.EventTypes {
		types[t] = true
	}
	return &Subscriber{
		store: store, db: db, cfg: cfg, types: types, progress: progress,
		logger:  logger.With("projector", cfg.Checkpoint),
		closing: make(chan struct{}),
	}
}

// Subscribe starts delivering; the topic is informational, the checkpoint
// decides where reading starts.
func (s *Subscriber) Subscribe(ctx context.Context, _ string) (<-chan *message.Message, error) {
	if _, err := s.db.NewRaw(
		"INSERT INTO projection_checkpoints (name, version) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", s.cfg.Checkpoint, max(s.cfg.Version, 1),
	).Exec(ctx); err != nil {
		return nil, fmt.Errorf("create checkpoint %s: %w", s.cfg.Checkpoint, err)
	}
	pos, err := s.readCheckpoint(ctx, s.db)
	if err != nil {
		return nil, err
	}
	s.progress.set(pos)
	out := make(chan *message.Message)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(out)
		s.loop(ctx, out)
	}()
	return out, nil
}

// Close stops delivering; an unfinished batch is rolled back.
func (s *Subscriber) Close() error {
	s.closeOnce.Do(func() { close(s.closing) })
	s.wg.Wait()
	return nil
}

func (s *Subscriber) loop(ctx context.Context, out chan<- *message.Message) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	// Appends of events this projector skips do not wake it: the poll
	// moves its checkpoint past them.
	appended, stop := s.store.Appended(s.cfg.EventTypes...)
	defer stop()
	backoff := s.cfg.RetryBackoff
	for ctx.Err() == nil {
		caughtUp, err := s.batch(ctx, out)
		switch {
		case errors.Is(err, errBusy):
			// The other process's batch holds the lock for a moment:
			// look again soon, at once when a waiter here wants a
			// position, rather than spin on the pool.
			s.progress.setErr(nil)
			t := time.NewTimer(busyWait)
			select {
			case <-ctx.Done():
			case <-s.progress.wanted():
			case <-t.C:
			}
			t.Stop()
		case err != nil && ctx.Err() == nil:
			s.progress.setErr(err)
			s.logger.Error("projection batch failed, retrying", "err", err, "retry_in", backoff)
			sleep(ctx, backoff)
			backoff = min(backoff*2, time.Minute)
		case err != nil:
			return
		case !caughtUp.IsZero():
			s.progress.setErr(nil)
			backoff = s.cfg.RetryBackoff
			s.progress.markIdle(caughtUp)
			s.wait(ctx, appended)
		default:
			s.progress.setErr(nil)
			backoff = s.cfg.RetryBackoff
		}
	}
}

// wait sleeps until an append in this process, the poll interval (or,
// under a runner, the head watch seeing the log move), or a waiter asking for a position this projector has not reached (the fence
// may have held events back at the last read).
func (s *Subscriber) wait(ctx context.Context, appended <-chan struct{}) {
	poll := s.cfg.PollInterval
	var moved <-chan struct{}
	if s.cfg.watch != nil {
		poll *= s.cfg.watch.fallback()
		var stop func()
		moved, stop = s.cfg.watch.after(s.progress.Position(), s.cfg.EventTypes)
		defer stop()
	}
	t := time.NewTimer(poll)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-moved:
	case <-appended:
	case <-s.progress.wanted():
		sleep(ctx, 2*time.Millisecond)
	case <-t.C:
	}
}

// errBusy: another process holds this checkpoint right now.
var errBusy = errors.New("checkpoint held by another process")

// busyWait is how long a subscriber whose checkpoint another process
// holds waits before it looks again, unless a waiter asks sooner.
const busyWait = 20 * time.Millisecond

// batch projects one batch. When its read found the log read to the end
// (the fence), it returns when that read started: the projector had
// caught up with everything committed before then.
//
// A batch's transaction holds a connection, and the process's pool is
// smaller than its projectors: a batch that waited for a second
// connection while holding its transaction's could, with every other
// batch doing the same, wait for ever. So the page is read before the
// transaction begins, and inside it everything goes through the
// transaction.
func (s *Subscriber) batch(ctx context.Context, out chan<- *message.Message) (caughtUp time.Time, err error) {
	p, err := s.next(ctx)
	if err != nil {
		return time.Time{}, err
	}
	if p.reached == p.from {
		return p.started, nil
	}
	if p.msg == nil {
		return s.pass(ctx, p)
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{})
	if err != nil {
		return time.Time{}, fmt.Errorf("begin batch: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after commit this is a no-op

	var locked bool
	if err := tx.NewRaw("SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))", lockKey(s.cfg.Checkpoint)).Scan(ctx, &locked); err != nil {
		return time.Time{}, fmt.Errorf("lock checkpoint %s: %w", s.cfg.Checkpoint, err)
	}
	from, err := s.readCheckpoint(ctx, tx)
	if err != nil {
		return time.Time{}, err
	}
	if !locked || from != p.from {
		// Another process is projecting, or has moved the checkpoint
		// since the page was read (a rebuild's swap may even have moved
		// it back): follow its committed checkpoint, so that
		// read-after-write waits in this process still see progress, and
		// read again from there.
		s.progress.set(from)
		if !locked {
			return time.Time{}, errBusy
		}
		s.resume = &from
		return time.Time{}, nil
	}
	if p.full {
		// Catching up: read the next page while this one is projected.
		// The read takes a connection of its own, which this batch does
		// not wait for.
		s.ahead = s.readAhead(ctx, p.reached)
	}
	if p.msg != nil {
		if err := s.project(ctx, tx, out, p); err != nil {
			return time.Time{}, err
		}
	}
	if _, err := tx.NewRaw(
		"UPDATE projection_checkpoints SET commit_position = ?, prepare_position = ?, updated_at = now() WHERE name = ?",
		int64(p.reached.Commit), int64(p.reached.Prepare), s.cfg.Checkpoint,
	).Exec(ctx); err != nil {
		return time.Time{}, fmt.Errorf("write checkpoint %s: %w", s.cfg.Checkpoint, err)
	}
	if err := tx.Commit(); err != nil {
		return time.Time{}, fmt.Errorf("commit batch: %w", err)
	}
	s.progress.advance(p.reached, p.n)
	if !p.full {
		return p.started, nil
	}
	return time.Time{}, nil
}

// pass moves the checkpoint past a page that holds none of the
// subscriber's types (most pages of most projectors: an append wakes them
// all), in one statement instead of a batch's five (begin, lock, read,
// write, commit): nothing is projected, so there is no read-model change
// the checkpoint must commit with. The write only takes effect from the
// position the page was read from (compare and set), so a checkpoint
// another process or a rebuild's swap moved meanwhile is followed as in a
// batch; a batch of another process that holds the row makes this wait for
// its commit, then find the position moved.
func (s *Subscriber) pass(ctx context.Context, p *page) (time.Time, error) {
	res, err := s.db.NewRaw(
		"UPDATE projection_checkpoints SET commit_position = ?, prepare_position = ?, updated_at = now() WHERE name = ? AND commit_position = ? AND prepare_position = ?",
		int64(p.reached.Commit), int64(p.reached.Prepare), s.cfg.Checkpoint, int64(p.from.Commit), int64(p.from.Prepare),
	).Exec(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("move checkpoint %s past %s: %w", s.cfg.Checkpoint, p.reached, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		from, err := s.readCheckpoint(ctx, s.db)
		if err != nil {
			return time.Time{}, err
		}
		s.progress.set(from)
		s.resume = &from
		return time.Time{}, nil
	}
	s.progress.advance(p.reached, 0)
	return p.started, nil
}

// next returns the page to project, read outside any transaction: the
// page read ahead when it starts at this process's position and its read
// succeeded, else a fresh one from that position. Most polls find
// nothing new, and so does the batch that follows one that emptied the
// log: looking before a transaction begins costs one round trip instead
// of a transaction's five. The checkpoint only moves forward and the
// progress follows every committed move seen, so nothing past the
// checkpoint is missed; the batch checks the checkpoint again under its
// lock before it projects the page.
func (s *Subscriber) next(ctx context.Context) (*page, error) {
	from := s.progress.Position()
	if s.resume != nil {
		from, s.resume = *s.resume, nil
	}
	if p := s.ahead; p != nil {
		s.ahead = nil
		select {
		case <-p.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if p.from == from && p.err == nil {
			return p, nil
		}
	}
	p := s.readPage(ctx, from)
	if p.err != nil {
		return nil, fmt.Errorf("read events after %s: %w", from, p.err)
	}
	return p, nil
}

// project hands a page's message to the handler, with the batch's
// transaction in its context, and waits for its verdict.
func (s *Subscriber) project(ctx context.Context, tx bun.Tx, out chan<- *message.Message, p *page) error {
	msg := p.msg
	msg.Metadata.Set("checkpoint", s.cfg.Checkpoint)
	msg.SetContext(context.WithValue(ctx, txKey{}, tx))
	if err := deliver(ctx, out, msg); err != nil {
		return fmt.Errorf("batch %s..%s: %w", p.first, p.last, err)
	}
	return nil
}

// page is what a batch projects: the events of the subscriber's types
// after from, and how far the read reached. A live projector's page holds
// them as its batch's message (msg, nil when there are none); a rebuild's
// holds them decoded (events).
type page struct {
	from    eventstore.Position
	started time.Time // when the read began
	msg     *message.Message
	n       int                 // events in msg
	first   eventstore.Position // of msg's first event
	last    eventstore.Position // and of its last
	events  []Envelope
	reached eventstore.Position
	// full: the read stopped at the batch size, not at the end of the log.
	full bool
	err  error
	done chan struct{}
}

// readPage reads the page after from.
func (s *Subscriber) readPage(ctx context.Context, from eventstore.Position) *page {
	p := &page{from: from, done: make(chan struct{})}
	s.fill(ctx, p)
	return p
}

// readAhead starts reading the page after from. The log below the fence
// never changes, so a page read early is a prefix of what a read at the
// start of the next batch would return: using it (when that batch starts
// from the same checkpoint) skips nothing and repeats nothing. Its
// message is built there too, while the current batch is written.
func (s *Subscriber) readAhead(ctx context.Context, from eventstore.Position) *page {
	p := &page{from: from, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.fill(ctx, p)
	}()
	return p
}

// fill reads p and builds its message, then closes p.done.
func (s *Subscriber) fill(ctx context.Context, p *page) {
	defer close(p.done)
	events := readRecords(ctx, s.store, p, s.cfg.BatchSize, s.cfg.EventTypes)
	if p.err != nil || len(events) == 0 {
		return
	}
	p.msg, p.n = marshalBatch(events), len(events)
	p.first, p.last = events[0].Position, events[len(events)-1].Position
}

// readRecords reads the events of the page after p.from, undecoded, and
// says in p how far the read reached, or its error.
func readRecords(ctx context.Context, store eventstore.Store, p *page, n int, types []string) []eventstore.RecordedEvent {
	p.started, p.reached = time.Now(), p.from
	var events []eventstore.RecordedEvent
	if len(types) > 0 {
		events, p.reached, p.err = store.ReadAllOfTypes(ctx, p.from, n, types)
	} else {
		events, p.err = store.ReadAll(ctx, p.from, n)
		if len(events) > 0 {
			p.reached = events[len(events)-1].Position
		}
	}
	if p.err != nil {
		return nil
	}
	p.full = len(events) == n
	return events
}

// decode decodes the page's events read by readRecords.
func (p *page) decode(events []eventstore.RecordedEvent) {
	p.events = make([]Envelope, 0, len(events))
	for _, e := range events {
		env, err := decodeEnvelope(e)
		if err != nil {
			p.err = err
			return
		}
		p.events = append(p.events, env)
	}
}

// ErrUndecodable marks the error of an event this build cannot decode. A
// projector never skips it: a live one retries until a build that decodes
// it runs, and a rebuild fails naming it.
var ErrUndecodable = errors.New("this build cannot decode it")

// deliver hands one message to the router and waits for its verdict: a
// nack's error is the one its message carries back.
func deliver(ctx context.Context, out chan<- *message.Message, msg *message.Message) error {
	select {
	case out <- msg:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-msg.Acked():
		return nil
	case <-msg.Nacked():
		return nackedError(msg)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Subscriber) readCheckpoint(ctx context.Context, db bun.IDB) (eventstore.Position, error) {
	return readCheckpoint(ctx, db, s.cfg.Checkpoint)
}

// readCheckpoint reads the committed position of a checkpoint row.
func readCheckpoint(ctx context.Context, db bun.IDB, name string) (eventstore.Position, error) {
	var commit, prepare int64
	err := db.NewRaw("SELECT commit_position, prepare_position FROM projection_checkpoints WHERE name = ?", name).
		Scan(ctx, &commit, &prepare)
	if err != nil {
		return eventstore.Position{}, fmt.Errorf("read checkpoint %s: %w", name, err)
	}
	return eventstore.Position{Commit: uint64(commit), Prepare: uint64(prepare)}, nil
}

func lockKey(checkpoint string) string { return "projection:" + checkpoint }

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
