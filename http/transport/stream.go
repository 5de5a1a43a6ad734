package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/http/keyauth"
	"github.com/feedsvc/feedsvc/readmodel/changes"
)

// Live streams answer Server-Sent Events, one per change of a feed's item
// list, in the order of the list's changes, each with an id to resume
// after. A stream reads its feed's changes (with the StreamReader its
// handler gives) when the process's shared poller (streamhub.go) says its
// feed changed, and on every keep-alive. What the events say is the
// handler's (package http, streams.go); how they travel, how many may be
// open and when they end is this file's.

// StreamConfig bounds and paces the live item streams. Zero values take
// the defaults.
type StreamConfig struct {
	// PerKey bounds the streams one API key holds open in this process
	// (default 5); past it, 429.
	PerKey int
	// Total bounds the streams this process holds open (default 1,000);
	// past it, 503.
	Total int
	// KeepAlive is how long a quiet stream waits before sending a comment
	// (default 15 s): proxies keep the connection, and a client whose
	// network vanished without closing it is noticed when writes fail.
	KeepAlive time.Duration
	// Poll is how often the shared poller reads the feeds with open
	// streams (default 1 s): the delay between an item's projection and
	// its event, at most.
	Poll time.Duration
	// Retry is the reconnection delay the stream advises (default 3 s).
	Retry time.Duration
	// MaxAge ends a stream after this long (default 30 minutes); the client
	// reconnects with Last-Event-ID, and its key is checked again.
	MaxAge time.Duration
	// Reads bounds the streams reading the database at once (default 4),
	// so that many streams woken together queue rather than take the
	// pool the requests need.
	Reads int
}

// orDefault is d, or def when d is not positive.
func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (s StreamConfig) withDefaults() StreamConfig {
	if s.PerKey <= 0 {
		s.PerKey = 5
	}
	if s.Total <= 0 {
		s.Total = 1000
	}
	if s.Reads <= 0 {
		s.Reads = 4
	}
	s.KeepAlive = orDefault(s.KeepAlive, 15*time.Second)
	s.Poll = orDefault(s.Poll, time.Second)
	s.Retry = orDefault(s.Retry, 3*time.Second)
	s.MaxAge = orDefault(s.MaxAge, 30*time.Minute)
	return s
}

// Streams are the live streams of a process: their bounds, their slots
// and their shared poller.
type Streams struct {
	cfg    StreamConfig
	hub    *streamHub
	slots  *streamSlots
	logger *slog.Logger
	// reads is a semaphore of cfg.Reads.
	reads chan struct{}
}

// NewStreams returns the streams of a process, their poller reading
// watch.
func NewStreams(cfg StreamConfig, watch ChangeWatch, logger *slog.Logger) *Streams {
	cfg = cfg.withDefaults()
	return &Streams{
		cfg: cfg, hub: newStreamHub(watch, cfg.Poll, logger), logger: logger,
		slots: &streamSlots{perKey: cfg.PerKey, total: cfg.Total}, reads: make(chan struct{}, cfg.Reads),
	}
}

// StreamEvent is one event of a stream: its id, its name and its data (one
// JSON value).
type StreamEvent struct {
	ID   string
	Name string
	Data []byte
}

// StreamPage is what one read of a feed's changes gives a stream: its
// events, where the next read starts, and whether more follow at once.
type StreamPage struct {
	Events []StreamEvent
	Next   changes.Key
	More   bool
}

// StreamReader reads a feed's changes after a key. A read that fails with
// a *domain.NotFoundError ends the stream (the feed is gone); any other
// failure is logged and the read tried again at the next wake or
// keep-alive.
type StreamReader func(ctx context.Context, after changes.Key) (StreamPage, error)

// Serve answers the stream of feed from the change after start, reading
// its changes with read, as the request's API key may: it refuses with 429
// past the key's streams, with 503 past the process's. The slot the key
// holds is freed when the stream ends: when the client's connection closes
// (watchClose), at MaxAge, at shutdown, or when the feed is gone.
func (st *Streams) Serve(c *fiber.Ctx, feed StreamFeed, start changes.Key, read StreamReader) error {
	return st.ServeAs(c, feed, start, read, SSE)
}

// StreamFormat is how a stream writes its events.
type StreamFormat int

const (
	// SSE writes Server-Sent Events (text/event-stream): each event's id,
	// name and one data line; a comment as keep-alive.
	SSE StreamFormat = iota
	// NDJSON writes each event's data alone on a line
	// (application/x-ndjson); an empty line as keep-alive. The data must
	// say where to resume itself.
	NDJSON
)

// ServeAs is Serve writing the stream in format.
func (st *Streams) ServeAs(c *fiber.Ctx, feed StreamFeed, start changes.Key, read StreamReader, format StreamFormat) error {
	cfg := st.cfg
	p, _ := keyauth.PrincipalFrom(c)
	key := p.KeyID
	if ok, keyFull := st.slots.take(key); !ok {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(max(cfg.KeepAlive, time.Second)/time.Second)))
		if keyFull {
			return &envelope.Error{Status: fiber.StatusTooManyRequests, Code: envelope.CodeTooMany,
				Message: fmt.Sprintf("this API key has %d live item streams open, the most it may; close one, or retry once one has ended", cfg.PerKey)}
		}
		return &envelope.Error{Status: fiber.StatusServiceUnavailable, Code: envelope.CodeUnavailable,
			Message: "the service holds as many live item streams as it allows; retry shortly"}
	}
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	if format == NDJSON {
		c.Set(fiber.HeaderContentType, "application/x-ndjson")
	}
	c.Set(fiber.HeaderCacheControl, "no-cache")
	// Proxies that buffer answers (nginx) pass this one through as written.
	c.Set("X-Accel-Buffering", "no")
	c.Status(fiber.StatusOK)
	fctx := c.Context()
	// The connection serves no request after the stream: watchClose reads
	// it while the stream runs, and whatever it reads is not kept.
	fctx.SetConnectionClose()
	conn := fctx.Conn()
	// Closed when the server shuts down: the stream ends, so the shutdown
	// does not wait for the client.
	done := fctx.Done()
	// The server's write timeout bounds a whole answer; a stream's writes
	// are bounded by its age instead (a client that stops reading is
	// dropped then).
	_ = fctx.SetWriteDeadline(time.Now().Add(cfg.MaxAge + cfg.KeepAlive + time.Minute))
	// The request's context ends with the handler; the stream keeps its
	// values (the request id of its log lines).
	ctx := context.WithoutCancel(c.UserContext())
	wake, unsubscribe := st.hub.subscribe(feed)
	s := &liveStream{cfg: cfg, format: format, reads: st.reads, read: read, wake: wake, done: done, cursor: start, feed: feed, logger: st.logger}
	// The writer runs in its own goroutine, after the handler has
	// returned: it must not touch c.
	fctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer st.slots.release(key)
		defer unsubscribe()
		gone, stop := watchClose(conn)
		defer stop()
		s.gone = gone
		s.run(ctx, w)
	})
	return nil
}

// watchClose reports, by closing gone, that the client closed conn (or
// the connection failed), as soon as the server sees it: a client sends
// nothing after a stream's request, so a read that ends means it has
// gone. Writes would say so only later: fasthttp passes the stream
// through a pipe, and the writes after a close still succeed, so a slot
// came back three keep-alives after its client left (issue 34.2). What a
// read returns is dropped; the connection is closed after the stream.
// stop ends the watch (the stream ended first) and waits for it.
func watchClose(conn net.Conn) (gone <-chan struct{}, stop func()) {
	closed := make(chan struct{})
	if conn == nil {
		return closed, func() {}
	}
	// Beneath the server's wrappers: they keep what the server reads,
	// from its own goroutine.
	conn = unwrapConn(conn)
	var stopping atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 512)
		// The request's read deadline may still be set.
		_ = conn.SetReadDeadline(time.Time{})
		for {
			_, err := conn.Read(buf)
			if err == nil {
				continue
			}
			var netErr net.Error
			if stopping.Load() {
				return
			}
			if errors.As(err, &netErr) && netErr.Timeout() {
				_ = conn.SetReadDeadline(time.Time{})
				continue
			}
			close(closed)
			return
		}
	}()
	return closed, func() {
		stopping.Store(true)
		_ = conn.SetReadDeadline(time.Now())
		<-done
	}
}

// liveStream is one open stream.
type liveStream struct {
	cfg    StreamConfig
	format StreamFormat
	logger *slog.Logger
	reads  chan struct{}
	read   StreamReader
	wake   <-chan struct{}
	done   <-chan struct{}
	cursor changes.Key
	feed   StreamFeed
	// gone is closed when the client's connection closes.
	gone <-chan struct{}
	// failed is set while the last read failed.
	failed bool
}

// errStreamEnded is a write to a client that has gone.
var errStreamEnded = errors.New("stream ended")

// run writes the stream until it ends.
func (s *liveStream) run(ctx context.Context, w *bufio.Writer) {
	// The retry hint first: the answer's head goes out with it, so the
	// client knows the stream is open before any item comes.
	// (An NDJSON stream opens with its head alone.)
	if s.format == SSE {
		fmt.Fprintf(w, "retry: %d\n\n", s.cfg.Retry.Milliseconds())
	}
	if w.Flush() != nil {
		return
	}
	keepAlive := time.NewTicker(s.cfg.KeepAlive)
	defer keepAlive.Stop()
	age := time.NewTimer(s.cfg.MaxAge)
	defer age.Stop()
	// read is whether the feed must be read: at the start, when woken,
	// and after a failed read (at the next keep-alive).
	read := true
	for {
		if read {
			sent, err := s.catchUp(ctx, w)
			if err != nil {
				return
			}
			if sent {
				keepAlive.Reset(s.cfg.KeepAlive)
			}
		}
		select {
		case <-s.wake:
			read = true
		case <-keepAlive.C:
			alive := ": keep-alive\n\n"
			if s.format == NDJSON {
				alive = "\n"
			}
			if _, err := w.WriteString(alive); err != nil || w.Flush() != nil {
				return
			}
			read = s.failed
		case <-s.done:
			return
		case <-s.gone:
			return
		case <-age.C:
			return
		}
	}
}

// catchUp sends the feed's changes after the cursor, page by page; sent
// reports whether any event went out. It fails when the client has gone,
// the server is shutting down or the feed is gone; a failed read is
// logged and retried at the next wake or keep-alive.
func (s *liveStream) catchUp(ctx context.Context, w *bufio.Writer) (sent bool, err error) {
	for {
		select {
		case s.reads <- struct{}{}:
		case <-s.done:
			return sent, errStreamEnded
		case <-s.gone:
			return sent, errStreamEnded
		}
		page, err := s.readPage(ctx)
		<-s.reads
		if err != nil {
			var missing *domain.NotFoundError
			if errors.As(err, &missing) {
				return sent, err
			}
			s.logger.WarnContext(ctx, "live item stream: reading the feed's changes failed", "feed", s.feed.ID, "err", err)
			s.failed = true
			return sent, nil
		}
		s.failed = false
		for _, e := range page.Events {
			writeEvent(w, e, s.format)
		}
		if len(page.Events) > 0 {
			if err := w.Flush(); err != nil {
				return sent, errStreamEnded
			}
			sent = true
		}
		s.cursor = page.Next
		if !page.More {
			return sent, nil
		}
		select {
		case <-s.done:
			return sent, errStreamEnded
		case <-s.gone:
			return sent, errStreamEnded
		default:
		}
	}
}

func (s *liveStream) readPage(ctx context.Context) (StreamPage, error) {
	ctx, cancel := context.WithTimeout(ctx, readDeadline)
	defer cancel()
	return s.read(ctx, s.cursor)
}

// writeEvent writes one event. Its data is one line of JSON: the
// renderings hold no line breaks but inside strings, where JSON escapes
// them; a stored rendering with one between tokens is compacted.
func writeEvent(w *bufio.Writer, e StreamEvent, format StreamFormat) {
	data := e.Data
	if bytes.ContainsAny(data, "\r\n") {
		var b bytes.Buffer
		if json.Compact(&b, data) == nil {
			data = b.Bytes()
		}
	}
	if format == NDJSON {
		w.Write(data)
		w.WriteString("\n")
		return
	}
	w.WriteString("id: ")
	w.WriteString(e.ID)
	w.WriteString("\nevent: ")
	w.WriteString(e.Name)
	w.WriteString("\ndata: ")
	w.Write(data)
	w.WriteString("\n\n")
}
