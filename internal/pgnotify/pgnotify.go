// Package pgnotify listens for Postgres notifications (LISTEN/NOTIFY) on
// a connection of its own and calls back what each channel's listeners
// registered, so that a loop that would look in a table every tick for
// what another process wrote can look only when told. A notification can
// be lost (the connection failing, the listener not yet connected), so a
// caller looks every tick while the listener is not Listening, and
// otherwise still at a slow fallback period.
package pgnotify

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Reconnection backoff: the first retry after minPause, doubling up to
// maxPause while connecting or listening keeps failing.
const (
	minPause = time.Second
	maxPause = 30 * time.Second
)

// Listener holds one connection that LISTENs on the channels callbacks
// were registered for. The connection is not a pool's: a LISTEN belongs
// to the session that ran it, and a pool hands its connections around. A
// nil *Listener is valid and never listening, so callers look every tick.
type Listener struct {
	dsn string
	log *slog.Logger

	mu    sync.Mutex
	heard map[string][]func()
	// running is set by Run; On after it would not be listened for.
	running bool

	listening atomic.Bool
}

// New returns a listener that connects with dsn (a pool's DSN is fine:
// pool settings are ignored); nothing is listened for until Run.
func New(dsn string, logger *slog.Logger) *Listener {
	if logger == nil {
		logger = slog.Default()
	}
	return &Listener{dsn: dsn, log: logger.With("component", "pgnotify"), heard: map[string][]func(){}}
}

// On registers heard to be called for every notification on channel, and
// once each time listening (re)starts, since notifications sent while
// not listening were not heard: the caller then looks for what it may
// have missed. heard runs on the listener's goroutine, so it must not
// block (signal a channel, set a flag). The channels listened on are
// those registered when Run starts: after that, On takes only one of
// them (and calls heard at once when listening, as for a start). On a nil
// Listener it does nothing.
func (l *Listener) On(channel string, heard func()) {
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.running {
		if _, ok := l.heard[channel]; !ok {
			l.mu.Unlock()
			panic("pgnotify: On(" + channel + ") after Run, which does not listen on it")
		}
	}
	l.heard[channel] = append(l.heard[channel], heard)
	l.mu.Unlock()
	if l.Listening() {
		heard()
	}
}

// Listening reports whether notifications are being heard now. While it
// is false, a caller cannot count on being told and looks for itself.
func (l *Listener) Listening() bool {
	return l != nil && l.listening.Load()
}

// Run listens until ctx ends, reconnecting with backoff when the
// connection fails. Without registered channels it returns at once.
func (l *Listener) Run(ctx context.Context) {
	l.mu.Lock()
	l.running = true
	channels := make([]string, 0, len(l.heard))
	for c := range l.heard {
		channels = append(channels, c)
	}
	l.mu.Unlock()
	if len(channels) == 0 {
		return
	}
	slices.Sort(channels)
	pause := minPause
	for {
		listened, err := l.listenOnce(ctx, channels)
		l.listening.Store(false)
		if ctx.Err() != nil {
			return
		}
		if listened {
			// It worked for a while: the next failure starts over.
			pause = minPause
		}
		l.log.Warn("listening for notifications failed; their listeners look every tick meanwhile",
			"channels", channels, "err", err, "retry_in", pause)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, maxPause)
	}
}

// listenOnce connects, listens on channels and dispatches notifications
// until the connection fails or ctx ends; listened says whether it got as
// far as listening.
func (l *Listener) listenOnce(ctx context.Context, channels []string) (listened bool, err error) {
	// The DSN may be a pool's (pool_max_conns): pgxpool reads it.
	cfg, err := pgxpool.ParseConfig(l.dsn)
	if err != nil {
		return false, fmt.Errorf("parse listener database url: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return false, fmt.Errorf("connect to listen: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // closing a connection that may have failed
	for _, c := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{c}.Sanitize()); err != nil {
			return false, fmt.Errorf("listen on %s: %w", c, err)
		}
	}
	l.listening.Store(true)
	// Whatever was notified before now was not heard: every listener
	// looks once.
	for _, c := range channels {
		l.call(c)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, fmt.Errorf("wait for notifications: %w", err)
		}
		l.call(n.Channel)
	}
}

func (l *Listener) call(channel string) {
	l.mu.Lock()
	fs := l.heard[channel]
	l.mu.Unlock()
	for _, f := range fs {
		f()
	}
}
