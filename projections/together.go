package projections

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
)

// rebuildBatch is how many events a rebuild reads at a time unless
// Rebuilder.BatchSize says otherwise: a page of the projectors' types
// together. Each projector writes its events in transactions of about as
// many.
const rebuildBatch = 1000

func (r *Rebuilder) batchSize() int {
	if r.BatchSize > 0 {
		return r.BatchSize
	}
	return rebuildBatch
}

// rebuildConns is how many connections the writers of a rebuild share
// when its URL does not say: the rebuild's share of a process's budget.
const rebuildConns = 3

// readTogether brings the shadows of builds from position 0 to near the
// head of the log with one read of it (issue 22): a rebuild of several
// projectors read and decoded the whole log once per projector.
//
// One goroutine reads pages of the events of every projector's types,
// another decodes each page once, ahead of the writers. Each projector has
// its own writer, which takes the events of its types from the pages (it
// passes the others) and projects them, and writes its shadow checkpoint,
// in one transaction per batch of about as many events as a page (or
// every second), as a live projector's batch does. The writers run side
// by side on the rebuild's pool, so that one projector's inserts do not
// wait for another's. A page with nothing for a projector costs it
// nothing: its checkpoint moves with its next write. The read stops at the
// first page that is not full (the read reached the fence); each
// projector's shadow runner goes on from its checkpoint (finish).
//
// A failing batch is rolled back and retried, as a live batch is, and
// logged meanwhile; an event that cannot be decoded fails the rebuild.
func (r *Rebuilder) readTogether(ctx context.Context, builds []*shadowBuild) error {
	var types []string
	for _, b := range builds {
		for _, t := range EventTypes(b.p) {
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
	}
	slices.Sort(types)
	dsn, err := shadowDSN(r.DSN)
	if err != nil {
		return err
	}
	pool, err := database.Open(ctx, dsn)
	if err != nil {
		return fmt.Errorf("open shadow connection: %w", err)
	}
	defer pool.Close()

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var total atomic.Int64
	go countLog(ctx, r.DB, builds, types, &total)

	pages := make([]chan *page, len(builds))
	var wg sync.WaitGroup
	for i, b := range builds {
		// Two pages queued per writer: the reader keeps a page ahead of
		// the slowest one.
		pages[i] = make(chan *page, 2)
		w := &shadowWriter{b: b, db: pool, checkpoint: b.p.Name() + rebuildSuffix, batch: r.batchSize()}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.run(ctx, pages[i]); err != nil {
				cancel(err)
			}
		}()
	}

	started := time.Now()
	var read readCounter
	names := make([]string, len(builds))
	for i, b := range builds {
		names[i] = b.p.Name()
	}
	logger := r.logger().With("projectors", strings.Join(names, ","))
	logger.Info("rebuilding from the log into shadow copies, reading it once for all; the current read models serve meanwhile")
	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		r.reportTogether(ctx, builds, &read, &total, started, logger, stopProgress)
	}()

	readErr := readPages(ctx, cancel, r.Store, types, r.batchSize(), pages, &read, logger)
	for _, ch := range pages {
		close(ch)
	}
	wg.Wait()
	close(stopProgress)
	<-progressDone
	if err := context.Cause(ctx); err != nil && readErr == nil {
		readErr = err
	}
	if readErr != nil {
		return readErr
	}
	n, pos := read.get()
	for _, b := range builds {
		b.st.setProgress(b.events, b.reached)
	}
	logger.Info("read the log once for all projectors; each now catches up with what came since and is swapped in",
		"events", n, "position", pos.String(), "elapsed", time.Since(started).Round(time.Millisecond))
	return nil
}

// readPages reads the log from position 0, page after page, until a page
// is not full, and hands every page to every writer. The pages are decoded
// on a goroutine of their own, so that decoding one overlaps reading the
// next: both are about as costly.
func readPages(ctx context.Context, cancel context.CancelCauseFunc, store eventstore.Store, types []string, batch int, writers []chan *page, read *readCounter, logger *slog.Logger) error {
	type raw struct {
		p      *page
		events []eventstore.RecordedEvent
	}
	raws := make(chan raw, 1)
	decoded := make(chan error, 1)
	go func() {
		err := func() error {
			for r := range raws {
				r.p.decode(r.events)
				if r.p.err != nil {
					// An event this build cannot decode: the rebuild
					// cannot go past it.
					return r.p.err
				}
				read.add(int64(len(r.p.events)), r.p.reached)
				for _, ch := range writers {
					select {
					case ch <- r.p:
					case <-ctx.Done():
						return context.Cause(ctx)
					}
				}
			}
			return nil
		}()
		if err != nil {
			cancel(err) // stops the reader
		}
		decoded <- err
	}()
	err := func() error {
		defer close(raws)
		var from eventstore.Position
		backoff := 100 * time.Millisecond
		for {
			p := &page{from: from}
			events := readRecords(ctx, store, p, batch, types)
			if p.err != nil {
				if ctx.Err() != nil {
					return context.Cause(ctx)
				}
				// The store's own hiccup: read the same page again.
				logger.Error("rebuild read failed, retrying", "err", p.err, "retry_in", backoff)
				sleep(ctx, backoff)
				backoff = min(backoff*2, time.Minute)
				continue
			}
			backoff = 100 * time.Millisecond
			select {
			case raws <- raw{p, events}:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			if !p.full {
				return nil
			}
			from = p.reached
		}
	}()
	if derr := <-decoded; derr != nil {
		return derr
	}
	return err
}

// shadowWriter projects pages into one projector's shadow.
type shadowWriter struct {
	b          *shadowBuild
	db         *database.DB
	checkpoint string
	batch      int
}

func (w *shadowWriter) run(ctx context.Context, pages <-chan *page) error {
	var pending []Envelope
	var reached eventstore.Position
	flushEvery := time.NewTicker(time.Second)
	defer flushEvery.Stop()
	write := func() error {
		if reached == w.b.reached {
			return nil
		}
		if err := w.write(ctx, pending, reached); err != nil {
			return err
		}
		w.b.progress(int64(len(pending)), reached)
		pending = pending[:0]
		return nil
	}
	for p := range pages {
		for _, env := range p.events {
			if _, ok := w.b.handlers[env.Event.EventType()]; ok {
				pending = append(pending, env)
			}
		}
		reached = p.reached
		select {
		case <-flushEvery.C:
		default:
			if len(pending) < w.batch {
				continue
			}
		}
		if err := write(); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return write()
}

// write projects events into the shadow and moves its checkpoint to
// reached, in one transaction; a failure rolls both back and is retried.
func (w *shadowWriter) write(ctx context.Context, events []Envelope, reached eventstore.Position) error {
	backoff := 100 * time.Millisecond
	for {
		err := w.writeOnce(ctx, events, reached)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		w.b.logger.Error("rebuild batch failed, retrying", "err", err, "retry_in", backoff)
		sleep(ctx, backoff)
		backoff = min(backoff*2, time.Minute)
	}
}

func (w *shadowWriter) writeOnce(ctx context.Context, events []Envelope, reached eventstore.Position) error {
	tx, err := w.db.Bun.BeginTx(ctx, &sql.TxOptions{})
	if err != nil {
		return fmt.Errorf("begin rebuild batch: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after commit this is a no-op
	// The pool is shared by the projectors' writers: each transaction
	// puts its own shadow schema first, so that the projector's
	// unqualified table names land there.
	if _, err := tx.ExecContext(ctx, "SELECT set_config('search_path', ?, true)", w.b.schema+",public"); err != nil {
		return fmt.Errorf("set search_path: %w", err)
	}
	if len(events) > 0 {
		if err := w.b.handlers.apply(ctx, tx, w.b.p.Name(), events); err != nil {
			return err
		}
	}
	if _, err := tx.NewRaw(
		"UPDATE projection_checkpoints SET commit_position = ?, prepare_position = ?, updated_at = now() WHERE name = ?",
		int64(reached.Commit), int64(reached.Prepare), w.checkpoint,
	).Exec(ctx); err != nil {
		return fmt.Errorf("write checkpoint %s: %w", w.checkpoint, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit rebuild batch: %w", err)
	}
	return nil
}

// reportTogether logs and records the shared read's progress every
// progressEvery until stop.
func (r *Rebuilder) reportTogether(ctx context.Context, builds []*shadowBuild, read *readCounter, total *atomic.Int64, started time.Time, logger *slog.Logger, stop <-chan struct{}) {
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case <-tick.C:
		}
		n, pos := read.get()
		for _, b := range builds {
			events, reached := b.snapshot()
			b.st.setProgress(events, reached)
			if err := r.record(ctx, b.p, "progress", b.st); err != nil {
				b.logger.Warn("could not record the rebuild's progress", "err", err)
			}
		}
		logger.Info("rebuilding", "events_read", n, "of", total.Load(), "position", pos.String(),
			"events_per_sec", int(float64(n)/time.Since(started).Seconds()))
	}
}

func (b *shadowBuild) progress(n int64, reached eventstore.Position) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events += n
	b.reached = reached
}

func (b *shadowBuild) snapshot() (int64, eventstore.Position) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.events, b.reached
}

// counter is how many events the shared read has read and how far.
type readCounter struct {
	mu  sync.Mutex
	n   int64
	pos eventstore.Position
}

func (c *readCounter) add(n int64, pos eventstore.Position) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += n
	c.pos = pos
}

func (c *readCounter) get() (int64, eventstore.Position) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n, c.pos
}

// countLog counts the events each rebuild has to read (those of its
// projector's types), and those of types that the shared read reads
// (total), for their progress, in one pass over the log; apart from the
// rebuild, so that it does not delay it.
func countLog(ctx context.Context, db *database.DB, builds []*shadowBuild, types []string, total *atomic.Int64) {
	rows, err := db.Pool.Query(ctx, "SELECT event_type, count(*) FROM events GROUP BY event_type")
	if err != nil {
		return
	}
	byType := map[string]int64{}
	for rows.Next() {
		var t string
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			rows.Close()
			return
		}
		byType[t] = n
	}
	rows.Close()
	if rows.Err() != nil {
		return
	}
	for _, b := range builds {
		var n int64
		for _, t := range EventTypes(b.p) {
			n += byType[t]
		}
		b.st.update(func(v *RebuildSnapshot) { v.Total = n })
	}
	var n int64
	for _, t := range types {
		n += byType[t]
	}
	total.Store(n)
}

// shadowDSN is the URL of the pool the shared read's writers share: its
// batches need not wait for the disk (see withSearchPath), and it holds at
// most the rebuild's share of connections (database.SplitBudget) unless
// the URL sizes it.
func shadowDSN(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("parse database url: %w", err)
	}
	q := u.Query()
	q.Set("synchronous_commit", "off")
	if !q.Has("pool_max_conns") {
		q.Set("pool_max_conns", strconv.Itoa(rebuildConns))
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}
