package http

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
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
// also keeps the start of the latest request head read (see requestPath).
type countedConn struct {
	net.Conn
	once      sync.Once
	release   func()
	lingering chan struct{}

	// head holds the first bytes read after the last answer was written:
	// the start of the request now being read. The server reads and
	// writes a connection from one goroutine at a time.
	head         []byte
	answeredLast bool
}

// maxHead is how much of a request head is kept: a request line longer
// than that has no path worth knowing.
const maxHead = 1 << 10

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && (c.head == nil || c.answeredLast) {
		c.head = append(c.head[:0], b[:min(n, maxHead)]...)
		c.answeredLast = false
	}
	return n, err
}

func (c *countedConn) Write(b []byte) (int, error) {
	c.answeredLast = true
	return c.Conn.Write(b)
}

// requestPath is the path in the request line of the request being read,
// for the answer the transport writes to a request whose head it could
// not parse (fasthttp keeps nothing of it): its path decides the answer's
// dialect. A pipelined request read in one go with the one before it is
// not seen, and the path is then that earlier request's; "" when the line
// has no target.
func (c *countedConn) requestPath() string {
	line, _, _ := strings.Cut(string(c.head), "\n")
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return ""
	}
	target := fields[1]
	if u, err := url.Parse(target); err == nil && u.IsAbs() {
		target = u.EscapedPath()
	}
	path, _, _ := strings.Cut(target, "?")
	return path
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
