package projections

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
)

const rebuildSuffix = "@rebuild"

// Rebuild recreates a projector's read model from position 0 while the
// live one keeps serving, then swaps the two in one transaction. It fails
// with ErrRebuildRunning when another rebuild of the projector is under
// way, in this process or another. See Rebuilder.Rebuild.
func Rebuild(ctx context.Context, dsn string, main *database.DB, store eventstore.Store, p Projector, logger *slog.Logger) error {
	return RebuildAll(ctx, dsn, main, store, []Projector{p}, logger)
}

// RebuildAll rebuilds several projectors' read models, reading the log
// once for all of them. See Rebuilder.Rebuild.
func RebuildAll(ctx context.Context, dsn string, main *database.DB, store eventstore.Store, ps []Projector, logger *slog.Logger) error {
	r := &Rebuilder{DSN: dsn, DB: main, Store: store, Logger: logger}
	return r.Rebuild(ctx, ps...)
}

// ErrRebuildRunning is the error of a rebuild asked for while another of
// the same projector runs.
var ErrRebuildRunning = errors.New("a rebuild of this projector is already running (see feedsvc projections list)")

// Rebuild recreates the read models of ps from position 0 while the live
// ones keep serving, then swaps each in one transaction, and records each
// projector's version as its read model's.
//
// Each shadow copy is built in its own schema. The projectors read the log
// together, once (readTogether): each event is read and decoded once and
// handed to every projector that handles its type, and each projector
// writes its shadow tables and its shadow checkpoint in one transaction
// per batch, as a live projector does. Then, one projector at a time, a
// shadow runner (a pool whose search_path puts the schema first, so the
// projector's unqualified table names land there) catches up with what was
// appended meanwhile, and the swap takes the live projector's lock (its
// batches pause), lets the shadow catch up to the head of the log, moves
// the shadow tables into public and hands the shadow's checkpoint to the
// live projector. Readers blocked on the swap continue on the new tables:
// there is no moment when reads answer from an empty model.
//
// A session lock per projector, held for the whole rebuild, makes it the
// only one of that projector on the database (ErrRebuildRunning otherwise,
// and nothing is rebuilt): two rebuilds would share the shadow schema. Its
// progress is kept in projection_rebuilds.
func (r *Rebuilder) Rebuild(ctx context.Context, ps ...Projector) error {
	for i, p := range ps {
		// Session locks are re-entrant: a projector named twice would get
		// its lock twice and two writers into one shadow.
		if slices.ContainsFunc(ps[:i], func(q Projector) bool { return q.Name() == p.Name() }) {
			return fmt.Errorf("rebuild %s: the projector is named twice", p.Name())
		}
	}
	locks, got, err := r.tryLocks(ctx, ps)
	if err != nil {
		return err
	}
	defer locks.release()
	if len(got) < len(ps) {
		for _, p := range ps {
			if !slices.ContainsFunc(got, func(g Projector) bool { return g.Name() == p.Name() }) {
				return fmt.Errorf("rebuild %s: %w", p.Name(), ErrRebuildRunning)
			}
		}
	}
	return r.rebuildLocked(ctx, ps)
}

// shadowBuild is one projector's part of a rebuild.
type shadowBuild struct {
	p        Projector
	schema   string
	logger   *slog.Logger
	st       *RebuildState
	handlers dispatcher
	// later are the index statements left for finishShadow.
	later []string
	// events is how many events of its types the shared read projected
	// for it; reached how far its shadow checkpoint is.
	mu      sync.Mutex
	events  int64
	reached eventstore.Position
	done    bool // swapped in
	err     error
}

func (r *Rebuilder) rebuildLocked(ctx context.Context, ps []Projector) (err error) {
	var builds []*shadowBuild
	defer func() {
		for _, b := range builds {
			berr := b.err
			if berr == nil && !b.done {
				berr = err
				if berr == nil {
					berr = errors.New("rebuild stopped before the swap")
				}
			}
			b.st.end(berr)
			if rerr := r.record(context.WithoutCancel(ctx), b.p, "ended", b.st); rerr != nil {
				b.logger.Warn("could not record the rebuild's end", "err", rerr)
			}
		}
	}()
	for _, p := range ps {
		b := &shadowBuild{
			p: p, schema: "rebuild_" + p.Name(), st: r.state(p), handlers: dispatcherFor(p),
			logger: r.logger().With("projector", p.Name(), "version", p.Version()),
		}
		b.st.begin(p.Version())
		if err := r.record(ctx, p, "started", b.st); err != nil {
			return err
		}
		builds = append(builds, b)
	}
	for _, b := range builds {
		if b.later, err = prepareShadow(ctx, r.DB.Bun, b.schema, b.p); err != nil {
			return err
		}
	}
	if err := r.readTogether(ctx, builds); err != nil {
		return err
	}
	var errs []error
	for _, b := range builds {
		if b.err = r.finish(ctx, b); b.err != nil {
			if ctx.Err() != nil {
				return b.err
			}
			errs = append(errs, fmt.Errorf("rebuild %s: %w", b.p.Name(), b.err))
			continue
		}
		b.done = true
	}
	return errors.Join(errs...)
}

// finish brings b's shadow, which the shared read brought near the head of
// the log, to the head with a shadow runner, then indexes, analyzes and
// swaps it in.
func (r *Rebuilder) finish(ctx context.Context, b *shadowBuild) error {
	p, logger, st := b.p, b.logger, b.st
	shadowDSN, err := withSearchPath(r.DSN, b.schema)
	if err != nil {
		return err
	}
	shadow, err := database.Open(ctx, shadowDSN)
	if err != nil {
		return fmt.Errorf("open shadow connection: %w", err)
	}
	defer shadow.Close()

	runner, err := NewRunner(r.Store, shadow.Bun, logger, RunnerConfig{BatchSize: r.batchSize(), PollInterval: 50 * time.Millisecond, CheckpointSuffix: rebuildSuffix}, p)
	if err != nil {
		return err
	}
	runCtx, stopRunner := context.WithCancel(ctx)
	defer stopRunner()
	done := make(chan error, 1)
	go func() { done <- runner.Run(runCtx) }()
	progress := runner.Progress(p.Name())

	started := time.Now()
	if err := r.waitCaughtUp(ctx, p, st, progress, b.events, started, logger, done); err != nil {
		return err
	}
	if err := finishShadow(ctx, r.DB.Bun, b.schema, p, b.later, logger); err != nil {
		return err
	}
	logger.Info("rebuild caught up, swapping", "events", b.events+progress.Processed(), "elapsed", time.Since(st.Snapshot().Started).Round(time.Millisecond))
	st.setProgress(b.events+progress.Processed(), progress.Position())
	st.setPhase(PhaseSwapping)
	err = swap(ctx, r.DB.Bun, b.schema, p, progress, runner, done, logger)
	st.setProgress(b.events+progress.Processed(), progress.Position())
	return err
}

// IndexesLast is implemented by a projector whose handlers find rows only
// through primary keys and unique indexes, which its inserts' ON CONFLICT
// and lookups use: a rebuild of it creates the tables' other indexes once
// the shadow has caught up, each in one sorted pass, instead of keeping
// them current row by row (issue 22: a third to a half of what inserting a
// row costs). A lookup through such an index during a rebuild would scan
// the table instead, so a projector that makes them does not declare it.
type IndexesLast interface {
	Projector
	// IndexesLast says which lookups its handlers make.
	IndexesLast() string
}

// storageParameters are the statements that give the shadow of table t
// the live table's storage parameters (WITH (...), such as
// toast_tuple_target), which LIKE ... INCLUDING ALL does not copy: the
// rebuilt rows are to be stored as the live ones are, and the swapped-in
// table is to keep them.
func storageParameters(ctx context.Context, db *bun.DB, schema, t string) ([]string, error) {
	var opts []string
	err := db.NewRaw(`SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = to_regclass(?)`, "public."+t).
		Scan(ctx, pgdialect.Array(&opts))
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("storage parameters of %s: %w", t, err)
	}
	if len(opts) == 0 {
		return nil, nil
	}
	return []string{fmt.Sprintf("ALTER TABLE %s.%s SET (%s)", schema, t, strings.Join(opts, ", "))}, nil
}

// prepareShadow creates the shadow schema with p's tables and their
// constraints and indexes, and resets the shadow's checkpoint. It returns
// the index statements it left for finishShadow: the non-unique indexes
// of a projector that builds them last.
func prepareShadow(ctx context.Context, db *bun.DB, schema string, p Projector) ([]string, error) {
	stmts := []string{
		fmt.Sprintf("DROP SCHEMA IF EXISTS %s CASCADE", schema),
		fmt.Sprintf("CREATE SCHEMA %s", schema),
	}
	_, last := p.(IndexesLast)
	var later []string
	for _, t := range p.Tables() {
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE %s.%s (LIKE public.%s INCLUDING ALL EXCLUDING INDEXES)", schema, t, t))
		params, err := storageParameters(ctx, db, schema, t)
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, params...)
		idx, err := indexStatements(ctx, db, schema, t)
		if err != nil {
			return nil, err
		}
		for _, s := range idx {
			if last && strings.HasPrefix(s, "CREATE INDEX ") {
				later = append(later, s)
				continue
			}
			stmts = append(stmts, s)
		}
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return nil, fmt.Errorf("prepare shadow schema %s: %w", schema, err)
		}
	}
	_, err := db.NewRaw(`INSERT INTO projection_checkpoints (name) VALUES (?)
		ON CONFLICT (name) DO UPDATE SET commit_position = 0, prepare_position = 0, updated_at = now()`,
		p.Name()+rebuildSuffix).Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("reset shadow checkpoint: %w", err)
	}
	return later, nil
}

// finishShadow readies a caught-up shadow for the swap: it creates the
// indexes prepareShadow left (the shadow projector keeps running; its next
// write to a table waits for that table's index), and vacuums and analyzes
// the shadow tables, which autovacuum has not seen yet: without statistics
// the swapped-in read model would be planned blind (a list fell from 2 ms
// to seconds until autovacuum came by), and without a visibility map every
// index-only scan visits the heap (lists two to three times slower until
// autovacuum came by).
func finishShadow(ctx context.Context, db *bun.DB, schema string, p Projector, later []string, logger *slog.Logger) error {
	t0 := time.Now()
	for _, s := range later {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("create index in shadow schema %s: %w", schema, err)
		}
	}
	t1 := time.Now()
	for _, t := range p.Tables() {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("VACUUM (ANALYZE) %s.%s", schema, t)); err != nil {
			return fmt.Errorf("vacuum shadow table %s.%s: %w", schema, t, err)
		}
	}
	logger.Info("shadow indexed, vacuumed and analyzed", "indexes", len(later), "index_time", t1.Sub(t0).Round(time.Millisecond),
		"vacuum_time", time.Since(t1).Round(time.Millisecond))
	return nil
}

// indexStatements recreate table's constraints and indexes in the shadow
// schema under their original names (names are per schema), so that after
// the swap the read model's indexes are named as its migrations named them
// and later migrations can refer to them.
func indexStatements(ctx context.Context, db *bun.DB, schema, table string) ([]string, error) {
	var stmts []string
	var constraints []struct {
		Name string `bun:"conname"`
		Def  string `bun:"def"`
	}
	err := db.NewRaw(`SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
		WHERE conrelid = ?::regclass AND contype IN ('p', 'u', 'x') ORDER BY conname`, "public."+table).Scan(ctx, &constraints)
	if err != nil {
		return nil, fmt.Errorf("read constraints of %s: %w", table, err)
	}
	names := []string{}
	for _, c := range constraints {
		stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s.%s ADD CONSTRAINT %s %s", schema, table, pgIdent(c.Name), c.Def))
		names = append(names, c.Name)
	}
	var indexes []struct {
		Name string `bun:"indexname"`
		Def  string `bun:"indexdef"`
	}
	err = db.NewRaw(`SELECT indexname, indexdef FROM pg_indexes
		WHERE schemaname = 'public' AND tablename = ? AND NOT (indexname = ANY(?::text[])) ORDER BY indexname`,
		table, pgdialect.Array(names)).Scan(ctx, &indexes)
	if err != nil {
		return nil, fmt.Errorf("read indexes of %s: %w", table, err)
	}
	for _, ix := range indexes {
		on := " ON public." + table + " "
		if !strings.Contains(ix.Def, on) {
			return nil, fmt.Errorf("index %s of %s: unexpected definition %q", ix.Name, table, ix.Def)
		}
		stmts = append(stmts, strings.Replace(ix.Def, on, " ON "+schema+"."+table+" ", 1))
	}
	return stmts, nil
}

func pgIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// waitCaughtUp reports progress until the shadow finds nothing more to
// read; base events were projected before its runner started.
func (r *Rebuilder) waitCaughtUp(ctx context.Context, p Projector, st *RebuildState, progress *Progress, base int64, since time.Time, logger *slog.Logger, done <-chan error) error {
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		if progress.CaughtUpAt().After(since) {
			return nil
		}
		if err := undecodable(progress); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-done:
			return fmt.Errorf("shadow projector stopped: %w", err)
		case <-tick.C:
			n := progress.Processed()
			st.setProgress(base+n, progress.Position())
			snap := st.Snapshot()
			logger.Info("rebuilding", "events", base+n, "of", snap.Total, "position", progress.Position().String(),
				"events_per_sec", int(float64(n)/time.Since(since).Seconds()), "last_error", errString(progress.Err()))
			if err := r.record(ctx, p, "progress", st); err != nil {
				logger.Warn("could not record the rebuild's progress", "err", err)
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// undecodable is the shadow projector's error when it is stuck on an event
// this build cannot decode (appended after the shared read, say by a newer
// build): it would retry for ever, so the rebuild fails naming the event.
func undecodable(progress *Progress) error {
	if err := progress.Err(); errors.Is(err, ErrUndecodable) {
		return fmt.Errorf("shadow projector: %w", err)
	}
	return nil
}

func swap(ctx context.Context, db *bun.DB, schema string, p Projector, progress *Progress, runner *Runner, done <-chan error, logger *slog.Logger) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin swap: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after commit
	// The live projector's batches try this lock and skip while it is held.
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", lockKey(p.Name())); err != nil {
		return fmt.Errorf("lock live projector: %w", err)
	}
	mark := time.Now()
	for !progress.CaughtUpAt().After(mark) {
		if err := undecodable(progress); err != nil {
			return err
		}
		progress.nudge()
		sleep(ctx, 5*time.Millisecond)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if err := runner.Close(); err != nil {
		return fmt.Errorf("stop shadow projector: %w", err)
	}
	<-done
	pos, err := readCheckpoint(ctx, tx, p.Name()+rebuildSuffix)
	if err != nil {
		return err
	}
	if err := lockLive(ctx, tx, p.Tables()); err != nil {
		return err
	}
	for _, t := range p.Tables() {
		for _, s := range []string{
			fmt.Sprintf("DROP TABLE IF EXISTS public.%s", t),
			fmt.Sprintf("ALTER TABLE %s.%s SET SCHEMA public", schema, t),
		} {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("swap table %s: %w", t, err)
			}
		}
	}
	if _, err := tx.NewRaw(`INSERT INTO projection_checkpoints (name, commit_position, prepare_position, version) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET commit_position = EXCLUDED.commit_position,
		prepare_position = EXCLUDED.prepare_position, version = EXCLUDED.version, updated_at = now()`,
		p.Name(), int64(pos.Commit), int64(pos.Prepare), p.Version()).Exec(ctx); err != nil {
		return fmt.Errorf("hand over checkpoint: %w", err)
	}
	if _, err := tx.NewRaw("DELETE FROM projection_checkpoints WHERE name = ?", p.Name()+rebuildSuffix).Exec(ctx); err != nil {
		return fmt.Errorf("drop shadow checkpoint: %w", err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("DROP SCHEMA %s", schema)); err != nil {
		return fmt.Errorf("drop shadow schema: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit swap: %w", err)
	}
	logger.Info("rebuild swapped in; the rebuilt read model serves", "position", pos.String())
	return nil
}

// lockLive takes every live table's exclusive lock in one go before the
// swap drops any. A reader that joins several of them (an event list reads
// four) holds some while it waits for the next; dropping them one by one
// would deadlock with it, and Postgres would fail the reader. So the swap
// waits a moment for all of them at once (new readers queue behind it), and
// on a timeout lets go of what it got, so that a reader holding one
// finishes, and tries again: readers are short.
func lockLive(ctx context.Context, tx bun.Tx, tables []string) error {
	var live []string
	if err := tx.NewRaw(`SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' AND relname = ANY(?::text[])`,
		pgdialect.Array(tables)).Scan(ctx, &live); err != nil {
		return fmt.Errorf("find live tables: %w", err)
	}
	if len(live) == 0 {
		return nil
	}
	for i, t := range live {
		live[i] = "public." + pgIdent(t)
	}
	lock := "LOCK TABLE " + strings.Join(live, ", ") + " IN ACCESS EXCLUSIVE MODE"
	for {
		err := inSavepoint(ctx, tx, "SET LOCAL lock_timeout = '100ms'", lock, "SET LOCAL lock_timeout = 0")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55P03" { // lock_not_available
			return err
		}
		sleep(ctx, 10*time.Millisecond)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// inSavepoint runs statements in a savepoint of tx, rolled back (with
// whatever they took) when one fails.
func inSavepoint(ctx context.Context, tx bun.Tx, statements ...string) error {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT swap_lock"); err != nil {
		return fmt.Errorf("lock live tables: %w", err)
	}
	for _, s := range statements {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			if _, rbErr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT swap_lock"); rbErr != nil {
				return fmt.Errorf("lock live tables: %w", errors.Join(err, rbErr))
			}
			return fmt.Errorf("lock live tables: %w", err)
		}
	}
	_, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT swap_lock")
	return err
}

func withSearchPath(dsn, schema string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("parse database url: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	// The shadow's batches need not wait for the disk: a crash loses only
	// the shadow, which a rebuild starts anew, and the swap's own commit
	// flushes everything written before it.
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func errString(err error) string {
	if err == nil || errors.Is(err, context.Canceled) {
		return ""
	}
	return err.Error()
}
