package transport

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/feedsvc/feedsvc/http/envelope"
)

// Request bodies are streamed (fiber.Config.StreamRequestBody) and read
// here, bounded, before anything else sees them. A body over the limit is
// answered 413 at once, from its Content-Length when it has one, and the
// rest of it is then read and dropped so that the connection stays usable:
// closing a connection with unread bytes in it makes the peer's kernel
// answer with a reset, which can destroy the 413 before the client reads
// it (fasthttp itself drains only 256 KiB, then closes).
const (
	// maxDrain bounds what is read and dropped after a 413; a bigger body
	// has its connection closed once the answer is out.
	maxDrain = 64 << 20
	// maxDrainsPerConn bounds the 413s one connection is kept open after:
	// each is served on a wrapper of the previous connection.
	maxDrainsPerConn = 8
)

// BoundBody reads the request body, refusing it with 413 past the limit
// of its path (limitFor). The body's own read timeout (set when its
// headers arrived) bounds the read. Fiber must stream request bodies
// (fiber.Config.StreamRequestBody) for it to see them first.
func BoundBody(app *fiber.App, limitFor func(path string) int, bodyTimeout time.Duration) fiber.Handler {
	d := &drainer{srv: app.Server(), bodyTimeout: bodyTimeout}
	// A drained connection is served again only while the app serves: one
	// drained during a shutdown must not reach handlers after it.
	app.Hooks().OnListen(func(fiber.ListenData) error { d.stopped.Store(false); return nil })
	app.Hooks().OnShutdown(func() error { d.stopped.Store(true); return nil })
	return func(c *fiber.Ctx) error {
		req := c.Request()
		stream := req.BodyStream()
		if stream == nil {
			return c.Next()
		}
		limit := limitFor(c.Path())
		if req.Header.ContentLength() > limit {
			return d.tooLarge(c, stream)
		}
		// A chunked body has no length to judge it by: read one byte past
		// the limit to know.
		body, err := io.ReadAll(io.LimitReader(stream, int64(limit)+1))
		if err != nil {
			// The stream is marked failed, so fasthttp closes the connection.
			return transportError(err)
		}
		if len(body) > limit {
			return d.tooLarge(c, stream)
		}
		req.SetBody(body)
		return c.Next()
	}
}

// drainer drains oversized bodies and serves their connections again.
type drainer struct {
	srv         *fasthttp.Server
	bodyTimeout time.Duration
	stopped     atomic.Bool
}

// tooLarge answers 413 and, once the answer is written, drains the rest of
// the body and goes on serving the connection. Hijacking is fasthttp's one
// way to act on a connection after its answer has been flushed; the server
// keeps hijacked connections (KeepHijackedConns), so this owns closing it.
func (d *drainer) tooLarge(c *fiber.Ctx, stream io.Reader) error {
	depth := 0
	if dc, ok := c.Context().Conn().(*drainedConn); ok {
		depth = dc.depth
	}
	// fasthttp hands the hijacker a wrapper of its own (reading what it
	// had buffered first), so the connection's record is taken here.
	counted := countedOf(c.Context().Conn())
	c.Context().Hijack(func(conn net.Conn) {
		_ = conn.SetReadDeadline(time.Now().Add(d.bodyTimeout))
		_, err := io.CopyN(io.Discard, stream, maxDrain+1)
		if !errors.Is(err, io.EOF) || depth+1 >= maxDrainsPerConn || d.stopped.Load() {
			conn.Close()
			return
		}
		_ = conn.SetReadDeadline(time.Time{})
		// ServeConn closes the connection when it is done with it, unless a
		// later request hijacks it again.
		_ = d.srv.ServeConn(&drainedConn{Conn: conn, depth: depth + 1, counted: counted})
	})
	return envelope.ForStatus(fiber.StatusRequestEntityTooLarge)
}

// drainedConn is a connection served again after an oversized body was
// drained from it; depth counts how often.
type drainedConn struct {
	net.Conn
	depth int
	// counted is the accepted connection under it, when there is one.
	counted *countedConn
}
