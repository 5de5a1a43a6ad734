package projections

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/internal/lease"
)

// progressEvery is how often a rebuild logs and records its progress.
const progressEvery = 2 * time.Second

// Rebuilder rebuilds read models in shadow copies and swaps them in: on
// request (Rebuild, `feedsvc projections rebuild`) or because the code's
// projector is newer than the read model (RebuildOutdated, on `feedsvc
// serve` start). Set the fields before the first call.
type Rebuilder struct {
	// DSN is the database's URL: the shadow copy gets a pool of its own.
	DSN    string
	DB     *database.DB
	Store  eventstore.Store
	Logger *slog.Logger
	// Owner names this process in projection_rebuilds.
	Owner string
	// RetryInterval is how often RebuildOutdated looks again at a
	// projector another process is rebuilding; a failed rebuild is
	// retried after it too, doubling up to ten minutes. Zero means 2 s.
	RetryInterval time.Duration
	// BatchSize is how many events a rebuild reads at a time (of its
	// projectors' types together); zero means 1,000.
	BatchSize int

	mu     sync.Mutex
	states map[string]*RebuildState
	warned map[string]bool
}

// The phases of a rebuild as RebuildState reports them.
const (
	PhaseOutdated   = "outdated"                    // the read model is older than the code; not started here yet
	PhaseWaiting    = "waiting for another process" // another process holds the projector's rebuild lock
	PhaseRebuilding = "rebuilding"
	PhaseSwapping   = "swapping"
	PhaseDone       = "done"
	PhaseDoneElse   = "done by another process"
	PhaseFailed     = "failed"
)

// RebuildState is a projector's rebuild as this process sees it.
type RebuildState struct {
	mu sync.Mutex
	s  RebuildSnapshot
}

// RebuildSnapshot is a RebuildState at one moment.
type RebuildSnapshot struct {
	Projector string
	Version   int // the version being built
	Phase     string
	// Events is how many events the shadow projector has read; Total how
	// many of its types the log held when the rebuild started (0 until
	// counted).
	Events, Total int64
	Position      eventstore.Position
	Started       time.Time
	Finished      time.Time
	Err           error
}

// Snapshot copies the state.
func (s *RebuildState) Snapshot() RebuildSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s
}

func (s *RebuildState) update(f func(*RebuildSnapshot)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.s)
}

func (s *RebuildState) setPhase(phase string) { s.update(func(v *RebuildSnapshot) { v.Phase = phase }) }

func (s *RebuildState) begin(version int) {
	s.update(func(v *RebuildSnapshot) {
		*v = RebuildSnapshot{Projector: v.Projector, Version: version, Phase: PhaseRebuilding, Started: time.Now()}
	})
}

func (s *RebuildState) setProgress(events int64, pos eventstore.Position) {
	s.update(func(v *RebuildSnapshot) { v.Events, v.Position = events, pos })
}

func (s *RebuildState) end(err error) {
	s.update(func(v *RebuildSnapshot) {
		v.Finished, v.Err, v.Phase = time.Now(), err, PhaseDone
		if err != nil {
			v.Phase = PhaseFailed
		}
	})
}

// countLog counts the events the rebuild has to read (those of the
// projector's types), for its progress; apart from the rebuild, so that it
// does not delay it.
func (s *RebuildState) countLog(ctx context.Context, db *database.DB, types []string) {
	var n int64
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM events WHERE event_type = ANY($1)", types).Scan(&n); err != nil {
		return
	}
	s.update(func(v *RebuildSnapshot) { v.Total = n })
}

// States are the rebuilds this process has run or is running, by name.
func (r *Rebuilder) States() []RebuildSnapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]RebuildSnapshot, 0, len(r.states))
	for _, s := range r.states {
		out = append(out, s.Snapshot())
	}
	slices.SortFunc(out, func(a, b RebuildSnapshot) int { return cmp.Compare(a.Projector, b.Projector) })
	return out
}

func (r *Rebuilder) state(p Projector) *RebuildState {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.states == nil {
		r.states = map[string]*RebuildState{}
	}
	s, ok := r.states[p.Name()]
	if !ok {
		s = &RebuildState{s: RebuildSnapshot{Projector: p.Name(), Version: p.Version()}}
		r.states[p.Name()] = s
	}
	return s
}

func (r *Rebuilder) logger() *slog.Logger {
	if r.Logger == nil {
		return slog.Default()
	}
	return r.Logger
}

// record keeps the rebuild's state in projection_rebuilds for `feedsvc
// projections list`.
func (r *Rebuilder) record(ctx context.Context, p Projector, what string, st *RebuildState) error {
	s := st.Snapshot()
	r.mu.Lock()
	if r.Owner == "" {
		r.Owner = lease.DefaultOwner()
	}
	owner := r.Owner
	r.mu.Unlock()
	var finished *time.Time
	if !s.Finished.IsZero() {
		finished = &s.Finished
	}
	var total *int64
	if s.Total > 0 {
		total = &s.Total
	}
	var errText *string
	if s.Err != nil {
		e := s.Err.Error()
		errText = &e
	}
	_, err := r.DB.Bun.NewRaw(`INSERT INTO projection_rebuilds (name, version, owner, started_at, updated_at, events, total, position, finished_at, error)
		VALUES (?, ?, ?, ?, now(), ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET version = EXCLUDED.version, owner = EXCLUDED.owner, started_at = EXCLUDED.started_at,
			updated_at = now(), events = EXCLUDED.events, total = EXCLUDED.total, position = EXCLUDED.position,
			finished_at = EXCLUDED.finished_at, error = EXCLUDED.error`,
		p.Name(), s.Version, owner, s.Started, s.Events, total, s.Position.String(), finished, errText).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record rebuild of %s %s: %w", p.Name(), what, err)
	}
	return nil
}

// rebuildLocks are rebuild locks, session locks held on one connection
// of the main pool until release: a process that dies lets go of them
// with its connection.
type rebuildLocks struct {
	conn *pgxpool.Conn
	keys []string
}

func rebuildLockKey(p Projector) string { return "projection-rebuild:" + p.Name() }

// tryLocks takes the rebuild locks of the projectors of ps that no other
// session holds, and returns those projectors. Every lock is on one
// connection, however many projectors a rebuild takes.
func (r *Rebuilder) tryLocks(ctx context.Context, ps []Projector) (*rebuildLocks, []Projector, error) {
	conn, err := r.DB.Pool.Acquire(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("take rebuild locks: %w", err)
	}
	l := &rebuildLocks{conn: conn}
	var got []Projector
	for _, p := range ps {
		var ok bool
		key := rebuildLockKey(p)
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtextextended($1, 0))", key).Scan(&ok); err != nil {
			l.release()
			return nil, nil, fmt.Errorf("rebuild %s: take its lock: %w", p.Name(), err)
		}
		if ok {
			l.keys = append(l.keys, key)
			got = append(got, p)
		}
	}
	return l, got, nil
}

// release lets go of every lock.
func (l *rebuildLocks) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, key := range l.keys {
		if _, err := l.conn.Exec(ctx, "SELECT pg_advisory_unlock(hashtextextended($1, 0))", key); err != nil {
			// A pooled connection must not keep the lock: closing the
			// session releases it.
			_ = l.conn.Conn().Close(ctx)
			break
		}
	}
	l.conn.Release()
}

// Outdated are the projectors of ps whose read model an older version of
// the projector built. A projector with no checkpoint yet is not: the
// live runner starts its read model at the code's version.
func (r *Rebuilder) Outdated(ctx context.Context, ps []Projector) ([]Projector, error) {
	stored, err := StoredVersions(ctx, r.DB, ps)
	if err != nil {
		return nil, err
	}
	var out []Projector
	for _, p := range ps {
		v, ok := stored[p.Name()]
		switch {
		case !ok || v == p.Version():
		case v < p.Version():
			out = append(out, p)
		default:
			r.warnNewer(p, v)
		}
	}
	return out, nil
}

// warnNewer says once that a read model is newer than this process's code
// (a process of the previous release during a rolling deploy, or a
// rollback): rebuilding it back would fight the newer processes.
func (r *Rebuilder) warnNewer(p Projector, stored int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.warned == nil {
		r.warned = map[string]bool{}
	}
	if r.warned[p.Name()] {
		return
	}
	r.warned[p.Name()] = true
	r.logger().Warn("read model built by a newer projector than this process runs; not rebuilding it (run feedsvc projections rebuild to build it with this version)",
		"projector", p.Name(), "stored_version", stored, "code_version", p.Version())
}

// StoredVersions are the versions of ps's read models, by name; a
// projector with no checkpoint is absent.
func StoredVersions(ctx context.Context, db *database.DB, ps []Projector) (map[string]int, error) {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name()
	}
	var rows []struct {
		Name    string `bun:"name"`
		Version int    `bun:"version"`
	}
	if err := db.Bun.NewRaw("SELECT name, version FROM projection_checkpoints WHERE name = ANY(?::text[])", pgdialect.Array(names)).
		Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read projector versions: %w", err)
	}
	out := make(map[string]int, len(rows))
	for _, row := range rows {
		out[row.Name] = row.Version
	}
	return out, nil
}

// RebuildOutdated rebuilds every projector of ps whose read model an
// older version built, together (one read of the log for all of them,
// Rebuild), each in a shadow copy while the old read model serves, and
// returns once none is outdated (or ctx ends). Processes that run it
// together rebuild each projector once: the one that takes a projector's
// rebuild lock rebuilds it; the others wait for the lock and then find the
// read model current. A failed rebuild is logged and tried again later.
func (r *Rebuilder) RebuildOutdated(ctx context.Context, ps []Projector) error {
	retry := r.RetryInterval
	if retry <= 0 {
		retry = 2 * time.Second
	}
	failures := map[string]int{}
	nextTry := map[string]time.Time{}
	for {
		outdated, err := r.Outdated(ctx, ps)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.logger().Error("cannot compare projector versions; trying again", "err", err, "retry_in", retry)
		}
		if err == nil {
			r.settleOthers(ps, outdated)
		}
		if err == nil && len(outdated) == 0 {
			return nil
		}
		var due []Projector
		for _, p := range outdated {
			r.state(p).update(func(v *RebuildSnapshot) {
				if v.Phase == "" {
					v.Phase = PhaseOutdated
				}
			})
			if !time.Now().Before(nextTry[p.Name()]) {
				due = append(due, p)
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if len(due) > 0 {
			rebuilt, err := r.rebuildIfOutdated(ctx, due)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				for _, p := range rebuilt {
					failures[p.Name()]++
					wait := min(retry<<min(failures[p.Name()], 10), 10*time.Minute)
					nextTry[p.Name()] = time.Now().Add(wait)
					r.logger().Error("rebuild failed; the current read model keeps serving", "projector", p.Name(), "err", err, "retry_in", wait)
				}
			}
		}
		sleep(ctx, retry)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// settleOthers marks as rebuilt elsewhere the projectors this process
// found outdated, or waited for, that are outdated no more.
func (r *Rebuilder) settleOthers(ps, outdated []Projector) {
	for _, p := range ps {
		if slices.ContainsFunc(outdated, func(o Projector) bool { return o.Name() == p.Name() }) {
			continue
		}
		r.mu.Lock()
		st := r.states[p.Name()]
		r.mu.Unlock()
		if st == nil {
			continue
		}
		if phase := st.Snapshot().Phase; phase == PhaseWaiting || phase == PhaseOutdated {
			st.setPhase(PhaseDoneElse)
			r.logger().Info("read model rebuilt by another process", "projector", p.Name(), "version", p.Version())
		}
	}
}

// rebuildIfOutdated rebuilds together the projectors of ps that no other
// process is rebuilding and that are still outdated once their locks are
// taken, and returns them.
func (r *Rebuilder) rebuildIfOutdated(ctx context.Context, ps []Projector) ([]Projector, error) {
	locks, got, err := r.tryLocks(ctx, ps)
	if err != nil {
		return ps, err
	}
	defer locks.release()
	for _, p := range ps {
		if slices.ContainsFunc(got, func(g Projector) bool { return g.Name() == p.Name() }) {
			continue
		}
		st := r.state(p)
		if st.Snapshot().Phase != PhaseWaiting {
			r.logger().Info("another process is rebuilding the read model; waiting for it", "projector", p.Name(), "version", p.Version())
		}
		st.setPhase(PhaseWaiting)
	}
	if len(got) == 0 {
		return nil, nil
	}
	// Under the locks: the process that held them may have just swapped.
	stored, err := StoredVersions(ctx, r.DB, got)
	if err != nil {
		return got, err
	}
	var todo []Projector
	for _, p := range got {
		if v, ok := stored[p.Name()]; !ok || v >= p.Version() {
			r.settleOthers([]Projector{p}, nil)
			continue
		}
		r.logger().Info("read model outdated; rebuilding it in the background", "projector", p.Name(),
			"stored_version", stored[p.Name()], "code_version", p.Version())
		todo = append(todo, p)
	}
	if len(todo) == 0 {
		return nil, nil
	}
	return todo, r.rebuildLocked(ctx, todo)
}
