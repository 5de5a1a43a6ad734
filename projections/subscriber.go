package projections

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/eventstore"
)

// Message metadata keys set by the Subscriber.
const (
	metaType       = "event_type"
	metaStream     = "stream_id"
	metaRevision   = "stream_revision"
	metaCommit     = "commit_position"
	metaPrepare    = "prepare_position"
	metaRecordedAt = "recorded_at"
)

type txKey struct{}

// TxFromContext returns the batch transaction a message is delivered in;
// handlers write the read model through it.
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
}

// Subscriber is a Watermill subscriber over the event store's global log.
//
// Each batch runs in one transaction: it takes the checkpoint's advisory
// lock (so two processes never project the same batch), reads events after
// the checkpoint, hands them one at a time to the handler with the
// transaction in the message context, and writes the new checkpoint. An
// acked batch commits; a nack rolls the whole batch back and it is
// delivered again from the same checkpoint after a backoff. Nothing is
// skipped and nothing applied twice.
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

	// ahead is the next page, being read while a batch is projected; only
	// the loop goroutine touches it.
	ahead *pageAhead
}

// NewSubscriber returns a subscriber reporting its position to progress.
func NewSubscriber(store eventstore.Store, db *bun.DB, cfg SubscriberConfig, progress *Progress, logger *slog.Logger) *Subscriber {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 500
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 200 * time.Millisecond
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
		n, err := s.batch(ctx, out)
		switch {
		case err != nil && ctx.Err() == nil:
			s.progress.setErr(err)
			s.logger.Error("projection batch failed, retrying", "err", err, "retry_in", backoff)
			sleep(ctx, backoff)
			backoff = min(backoff*2, time.Minute)
		case err != nil:
			return
		case n == 0:
			s.progress.setErr(nil)
			backoff = s.cfg.RetryBackoff
			s.progress.markIdle()
			s.wait(ctx, appended)
		default:
			s.progress.setErr(nil)
			backoff = s.cfg.RetryBackoff
		}
	}
}

// wait sleeps until an append in this process, the poll interval, or a
// waiter asking for a position this projector has not reached (the fence
// may have held events back at the last read).
func (s *Subscriber) wait(ctx context.Context, appended <-chan struct{}) {
	t := time.NewTimer(s.cfg.PollInterval)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-appended:
	case <-s.progress.wanted():
		sleep(ctx, 2*time.Millisecond)
	case <-t.C:
	}
}

// errBusy: another process holds this checkpoint right now.
var errBusy = errors.New("checkpoint held by another process")

// batch projects one batch and reports how many events it read.
func (s *Subscriber) batch(ctx context.Context, out chan<- *message.Message) (int, error) {
	if s.ahead == nil {
		// Most polls find nothing new, and so does the batch that follows
		// one that emptied the log: looking first, outside a transaction,
		// costs one round trip instead of a transaction's five. The
		// checkpoint only moves forward and the progress follows every
		// committed move seen, so nothing past the checkpoint is missed; a
		// page found is used like one read ahead.
		from := s.progress.Position()
		events, err := s.store.ReadAll(ctx, from, s.cfg.BatchSize)
		if err != nil {
			return 0, fmt.Errorf("read events after %s: %w", from, err)
		}
		if len(events) == 0 {
			return 0, nil
		}
		s.ahead = readPage(from, events)
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{})
	if err != nil {
		return 0, fmt.Errorf("begin batch: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after commit this is a no-op

	var locked bool
	if err := tx.NewRaw("SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))", lockKey(s.cfg.Checkpoint)).Scan(ctx, &locked); err != nil {
		return 0, fmt.Errorf("lock checkpoint %s: %w", s.cfg.Checkpoint, err)
	}
	if !locked {
		// Another process is projecting; follow its committed checkpoint so
		// that read-after-write waits in this process still see progress.
		s.ahead = nil
		pos, err := s.readCheckpoint(ctx, s.db)
		if err != nil {
			return 0, err
		}
		s.progress.set(pos)
		return 0, nil
	}
	from, err := s.readCheckpoint(ctx, tx)
	if err != nil {
		return 0, err
	}
	events, err := s.read(ctx, from)
	if err != nil {
		return 0, fmt.Errorf("read events after %s: %w", from, err)
	}
	if len(events) == 0 {
		s.progress.set(from)
		return 0, nil
	}
	if len(events) == s.cfg.BatchSize {
		// Catching up: read the next page while this one is projected.
		s.ahead = s.readAhead(ctx, events[len(events)-1].Position)
	}
	writes := &deferred{byKey: map[any]BatchWriter{}}
	msgCtx := context.WithValue(context.WithValue(ctx, txKey{}, tx), deferredKey{}, writes)
	for _, e := range events {
		if len(s.types) > 0 && !s.types[e.Type] {
			continue
		}
		if err := deliver(msgCtx, out, toMessage(e)); err != nil {
			return 0, fmt.Errorf("event %s (%s at %s): %w", e.ID, e.Type, e.Position, err)
		}
	}
	if err := writes.flush(ctx, tx); err != nil {
		return 0, fmt.Errorf("flush batch ending at %s: %w", events[len(events)-1].Position, err)
	}
	last := events[len(events)-1].Position
	if _, err := tx.NewRaw(
		"UPDATE projection_checkpoints SET commit_position = ?, prepare_position = ?, updated_at = now() WHERE name = ?",
		int64(last.Commit), int64(last.Prepare), s.cfg.Checkpoint,
	).Exec(ctx); err != nil {
		return 0, fmt.Errorf("write checkpoint %s: %w", s.cfg.Checkpoint, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit batch: %w", err)
	}
	s.progress.advance(last, len(events))
	return len(events), nil
}

// pageAhead is a page read before its batch began.
type pageAhead struct {
	from   eventstore.Position
	done   chan struct{}
	events []eventstore.RecordedEvent
	err    error
}

// readAhead starts reading the page after from. The log below the fence
// never changes, so a page read early is a prefix of what a read at the
// start of the next batch would return: using it (when that batch starts
// from the same checkpoint) skips nothing and repeats nothing.
func (s *Subscriber) readAhead(ctx context.Context, from eventstore.Position) *pageAhead {
	p := &pageAhead{from: from, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(p.done)
		p.events, p.err = s.store.ReadAll(ctx, from, s.cfg.BatchSize)
	}()
	return p
}

// readPage is a page already read.
func readPage(from eventstore.Position, events []eventstore.RecordedEvent) *pageAhead {
	p := &pageAhead{from: from, done: make(chan struct{}), events: events}
	close(p.done)
	return p
}

// read returns the page after from: the one read ahead when it starts
// there and its read succeeded, else a fresh one.
func (s *Subscriber) read(ctx context.Context, from eventstore.Position) ([]eventstore.RecordedEvent, error) {
	if p := s.ahead; p != nil {
		s.ahead = nil
		select {
		case <-p.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if p.from == from && p.err == nil {
			return p.events, nil
		}
	}
	return s.store.ReadAll(ctx, from, s.cfg.BatchSize)
}

var errNacked = errors.New("handler nacked the event")

// deliver hands one message to the router and waits for its verdict.
func deliver(ctx context.Context, out chan<- *message.Message, msg *message.Message) error {
	msg.SetContext(ctx)
	select {
	case out <- msg:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-msg.Acked():
		return nil
	case <-msg.Nacked():
		return errNacked
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

func toMessage(e eventstore.RecordedEvent) *message.Message {
	msg := message.NewMessage(e.ID.String(), e.Data)
	msg.Metadata.Set(metaType, e.Type)
	msg.Metadata.Set(metaStream, e.StreamID)
	msg.Metadata.Set(metaRevision, strconv.FormatUint(e.Revision, 10))
	msg.Metadata.Set(metaCommit, strconv.FormatUint(e.Position.Commit, 10))
	msg.Metadata.Set(metaPrepare, strconv.FormatUint(e.Position.Prepare, 10))
	msg.Metadata.Set(metaRecordedAt, e.RecordedAt.UTC().Format(time.RFC3339Nano))
	return msg
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
