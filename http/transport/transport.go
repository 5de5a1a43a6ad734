package transport

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/feedsvc/feedsvc/http/envelope"
)

// HeaderBufferSize bounds a request line and its headers together
// (fiber.Config.ReadBufferSize): a 5,000-character id still reaches its
// handler (and its 400), a longer request head answers 431.
const HeaderBufferSize = 8 << 10

// Tune sets what fiber.Config does not reach on app's fasthttp server: a
// body timeout apart from the header timeout, and answers in the error
// envelope to requests that never reach a route (unmatched answers those
// of a method Fiber does not route).
func Tune(app *fiber.App, bodyTimeout time.Duration, logger *slog.Logger, unmatched fiber.Handler) {
	srv := app.Server()
	// ReadTimeout (the header timeout) runs from a request's first byte;
	// once the headers are in, the body gets the longer timeout.
	srv.HeaderReceived = func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
		return fasthttp.RequestConfig{ReadTimeout: bodyTimeout}
	}
	// The parser's messages quote the request, Authorization included, so
	// neither the client nor the log sees them: only the status is logged.
	srv.SecureErrorLogMessage = true
	// A 413 drains the rest of its body on the hijacked connection and then
	// serves it again (BoundBody); fasthttp must not close it meanwhile.
	srv.KeepHijackedConns = true
	srv.ErrorHandler = func(fctx *fasthttp.RequestCtx, err error) {
		answer := transportError(err)
		render(app, fctx, func(c *fiber.Ctx) error {
			// A head that could not be read leaves no path in the request
			// (fasthttp resets it); the connection kept its request line.
			if path := requestPathOf(fctx.Conn()); path != "" {
				c.Path(path)
			}
			logger.Debug("request not read", "status", answer.Status, "request_id", assignRequestID(c))
			return answer
		})
	}
	routed := srv.Handler
	srv.Handler = func(fctx *fasthttp.RequestCtx) {
		// The connection's record of what it read moves past this
		// request, so that a request behind it (pipelined, or after its
		// body) is known by its own path if its head cannot be read.
		if c := countedOf(fctx.Conn()); c != nil {
			c.served(fctx.Request.Header.ContentLength())
		}
		// Fiber answers a method it does not know in plain text before any
		// handler runs; answer it as an unmatched route instead.
		if !knownMethod(fctx.Method()) {
			render(app, fctx, func(c *fiber.Ctx) error {
				assignRequestID(c)
				return unmatched(c)
			})
			return
		}
		routed(fctx)
	}
}

// knownMethod reports whether Fiber routes method (it routes the methods
// HTTP defines, in upper case only).
func knownMethod(method []byte) bool {
	for _, m := range fiber.DefaultMethods {
		if string(method) == m {
			return true
		}
	}
	return false
}

// render answers fctx, outside the routes, with the error answer of h.
func render(app *fiber.App, fctx *fasthttp.RequestCtx, h func(*fiber.Ctx) error) {
	c := app.AcquireCtx(fctx)
	defer app.ReleaseCtx(c)
	_ = app.ErrorHandler(c, h(c))
}

// transportError is the answer to a request the server could not read.
// The parser's own message is never used: it quotes the request.
func transportError(err error) *envelope.Error {
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	switch {
	case errors.As(err, &small):
		return envelope.ForStatus(fiber.StatusRequestHeaderFieldsTooLarge)
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return envelope.ForStatus(fiber.StatusRequestTimeout)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return envelope.ForStatus(fiber.StatusRequestEntityTooLarge)
	}
	return envelope.ForStatus(fiber.StatusBadRequest)
}

// requestPathOf is the path of the request being read on conn, as far as
// its connection saw it; "" when it is not known.
func requestPathOf(conn net.Conn) string {
	if c := countedOf(conn); c != nil {
		return c.requestPath()
	}
	return ""
}

// unwrapConn is the network connection beneath the server's wrappers
// (drainedConn, countedConn).
func unwrapConn(conn net.Conn) net.Conn {
	for {
		switch c := conn.(type) {
		case *drainedConn:
			conn = c.Conn
		case *countedConn:
			conn = c.Conn
		default:
			return conn
		}
	}
}
