package http

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
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

// A refused connection is answered, then drained briefly so the answer is
// not lost to a reset (the client may still be sending its request). At
// most maxLingering refusals are drained at once; past that they are only
// closed, so a flood of refused connections costs no more.
const (
	lingerFor    = 500 * time.Millisecond
	maxLingering = 64
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
		return &countedConn{Conn: c, release: func() { l.release(ip) }}, nil
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
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(lingerFor))
		if _, err := c.Write(refusal(refused)); err != nil {
			return
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// peerAddr is the client's address; invalid for a non-IP listener.
func peerAddr(c net.Conn) netip.Addr {
	if tcp, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return tcp.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// countedConn gives its place back once, however often it is closed.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
