package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/feedsvc/feedsvc/http/envelope"
)

// ConnLimits bound the connections the API holds open, so slow or
// numerous clients cannot exhaust the process. Past Total any new
// connection is answered 503; past PerIP one from the same address, 429.
// Zero means no cap.
type ConnLimits struct {
	Total int
	PerIP int
}

// Every connection the server closes is closed the way RFC 9112 section
// 9.6 asks ("lingering close"): its sending side first, so the answer
// already written goes out and ends with a FIN, then what the client still
// sends is read and dropped for a while, and only then is it closed. A
// socket closed with unread bytes in it answers them with a reset, which
// can destroy the answer before the client reads it: a 400 or 408 written
// by the transport while a large body is still arriving, or a refusal at a
// connection cap. The drain is bounded in time, bytes and number: at most
// maxLingering connections linger at once (past that they are closed at
// once, so a flood costs no more), each for lingerFor and lingerBytes at
// most, counted against the caps until it is closed.
const (
	lingerFor    = 2 * time.Second
	lingerBytes  = 64 << 20
	maxLingering = 256
)

// LimitConns wraps ln so it hands the server no more connections than
// limits allow. The caps are checked at accept, before a byte is read: a
// refused connection never reaches a worker.
//
// Per address means per TCP peer: behind a proxy every connection comes
// from the proxy, so there the per-address cap must be off (0) or at least
// the proxy's pool size.
func LimitConns(ln net.Listener, limits ConnLimits, logger *slog.Logger) net.Listener {
	return &limitedListener{
		Listener:  ln,
		limits:    limits,
		logger:    logger,
		perIP:     make(map[netip.Addr]int),
		lingering: make(chan struct{}, maxLingering),
		tooMany:   &envelope.Error{Status: fiber.StatusTooManyRequests, Code: envelope.CodeTooMany, Message: "too many connections from this address; close some and retry"},
		full: &envelope.Error{Status: fiber.StatusServiceUnavailable, Code: envelope.CodeUnavailable,
			Message: "the service is at its connection limit; retry shortly"},
	}
}

type limitedListener struct {
	net.Listener
	limits    ConnLimits
	logger    *slog.Logger
	lingering chan struct{}
	tooMany   *envelope.Error
	full      *envelope.Error

	mu    sync.Mutex
	total int
	perIP map[netip.Addr]int
}

// refusal is the whole HTTP answer written to a refused connection. It
// has an X-Request-Id like every answer, though no request was read.
func refusal(e *envelope.Error) []byte {
	body, _ := json.Marshal(e.Body(envelope.News)) // plain strings: cannot fail
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\nRetry-After: 1\r\nX-Request-Id: %s\r\n\r\n%s",
		e.Status, fasthttp.StatusMessage(e.Status), len(body), uuid.NewString(), body)
}

func (l *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := peerAddr(c)
		if refused := l.admit(ip); refused != nil {
			l.refuse(c, refused)
			continue
		}
		return &countedConn{Conn: c, release: func() { l.release(ip) }, lingering: l.lingering}, nil
	}
}

// admit counts a new connection from ip, or returns the answer refusing it.
func (l *limitedListener) admit(ip netip.Addr) *envelope.Error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limits.Total > 0 && l.total >= l.limits.Total {
		return l.full
	}
	if l.limits.PerIP > 0 && ip.IsValid() && l.perIP[ip] >= l.limits.PerIP {
		return l.tooMany
	}
	l.total++
	if ip.IsValid() {
		l.perIP[ip]++
	}
	return nil
}

func (l *limitedListener) release(ip netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if !ip.IsValid() {
		return
	}
	if l.perIP[ip]--; l.perIP[ip] <= 0 {
		delete(l.perIP, ip)
	}
}

// refuse answers c and closes it without holding up the accept loop.
func (l *limitedListener) refuse(c net.Conn, refused *envelope.Error) {
	l.logger.Debug("connection refused at a connection cap", "peer", c.RemoteAddr().String())
	select {
	case l.lingering <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.lingering }()
		_ = c.SetDeadline(time.Now().Add(lingerFor))
		if _, err := c.Write(refusal(refused)); err != nil {
			c.Close()
			return
		}
		linger(c)
	}()
}

// linger closes c's sending side, reads and drops what the client still
// sends until it closes its side, lingerFor passes or lingerBytes are
// read, then closes c.
func linger(c net.Conn) {
	defer c.Close()
	cw, ok := c.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(lingerFor))
	_, _ = io.Copy(io.Discard, io.LimitReader(c, lingerBytes))
}

// peerAddr is the client's address; invalid for a non-IP listener.
func peerAddr(c net.Conn) netip.Addr {
	if tcp, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return tcp.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// countedConn gives its place back once, however often it is closed, and
// is closed lingering (see lingerFor) when a lingering slot is free. It
// also keeps the bytes of the request being read (see requestPath).
type countedConn struct {
	net.Conn
	once      sync.Once
	release   func()
	lingering chan struct{}

	// pending holds the bytes read that belong to no request served yet:
	// the head of the request being read, and of those pipelined behind
	// it. served drops each request's head and body from it as the
	// request reaches its handler; skip is what of that body has not been
	// read yet, dropped as it comes. The server reads a connection from
	// one goroutine at a time.
	pending []byte
	skip    int64
	// lost: pending is not known to start at a request (a body of no
	// stated length, or more pending than maxPending); it then starts
	// again with the first bytes read after an answer, which is right
	// unless requests are pipelined.
	lost         bool
	answeredLast bool
}

// maxPending bounds pending: the server reads 8 KiB at a time and only
// once it has served what it read, so pending holds at most the rest of
// one read and the head it cut.
const maxPending = 4 * HeaderBufferSize

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.saw(b[:n])
	}
	return n, err
}

// saw takes bytes read into pending, past the body being skipped.
func (c *countedConn) saw(b []byte) {
	if c.lost && c.answeredLast {
		c.lost, c.skip, c.pending = false, 0, c.pending[:0]
	}
	c.answeredLast = false
	if c.skip > 0 {
		dropped := min(c.skip, int64(len(b)))
		c.skip -= dropped
		b = b[dropped:]
	}
	if c.lost || len(b) == 0 {
		return
	}
	if len(c.pending)+len(b) > maxPending {
		c.lost, c.pending = true, c.pending[:0]
		return
	}
	c.pending = append(c.pending, b...)
}

func (c *countedConn) Write(b []byte) (int, error) {
	c.answeredLast = true
	return c.Conn.Write(b)
}

// served drops from pending the request that has just reached its
// handler: its head, and its body of contentLength bytes (as much of it as
// was read; the rest is skipped as it comes). fasthttp's contentLength is
// -2 for a request with neither Content-Length nor Transfer-Encoding, which
// has no body, and -1 for a chunked one, whose length on the wire is not
// known: that loses the count until the next answer.
func (c *countedConn) served(contentLength int) {
	if c.lost {
		return
	}
	if contentLength == -2 {
		contentLength = 0
	}
	head := headEnd(c.pending)
	if head < 0 || contentLength < 0 {
		c.lost, c.pending = true, c.pending[:0]
		return
	}
	rest := c.pending[head:]
	body := min(int64(contentLength), int64(len(rest)))
	c.skip = int64(contentLength) - body
	c.pending = append(c.pending[:0], rest[body:]...)
}

// headEnd is where the request head at the start of b ends (after the
// empty line that closes it; the empty lines a client may send before a
// request line are part of it), or -1 when b does not hold all of it.
func headEnd(b []byte) int {
	start := len(b) - len(bytes.TrimLeft(b, "\r\n"))
	for i := start; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		line := b[i : i+j]
		i += j + 1
		if i-j-1 > start && (len(line) == 0 || len(line) == 1 && line[0] == '\r') {
			return i
		}
	}
}

// requestPath is the path in the request line of the request being read,
// as its client wrote it, for the answer the transport writes to a
// request whose head it could not parse (fasthttp keeps nothing of it):
// its path decides the answer's dialect (envelope.For, which reads it as
// the router would). "" when it is not known: the line has no target
// yet, or pending lost its place.
func (c *countedConn) requestPath() string {
	if c.lost {
		return ""
	}
	line, _, _ := bytes.Cut(bytes.TrimLeft(c.pending, "\r\n"), []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 2 {
		return ""
	}
	return targetPath(fields[1])
}

// targetPath is the path of a request target: an origin-form target's up
// to its query or fragment, an absolute-form target's after its scheme
// and authority (however malformed the rest), and "" for the other forms.
func targetPath(target string) string {
	if _, rest, ok := strings.Cut(target, "://"); ok && !strings.HasPrefix(target, "/") {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return "/"
		}
		target = rest[i:]
	}
	if !strings.HasPrefix(target, "/") {
		return ""
	}
	path, _, _ := strings.Cut(target, "?")
	path, _, _ = strings.Cut(path, "#")
	return path
}

// countedOf is the countedConn under conn (served again after a drained
// body, as often as that was); nil when there is none.
func countedOf(conn net.Conn) *countedConn {
	switch c := conn.(type) {
	case *drainedConn:
		return c.counted
	case *countedConn:
		return c
	}
	return nil
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		select {
		case c.lingering <- struct{}{}:
		default:
			c.Conn.Close()
			c.release()
			return
		}
		go func() {
			defer func() { <-c.lingering }()
			defer c.release()
			linger(c.Conn)
		}()
	})
	return nil
}
