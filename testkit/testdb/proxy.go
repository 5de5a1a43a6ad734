package testdb

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy is a TCP proxy in front of a Postgres server, for tests that cut
// a client's connections under it, as a network or a server that drops
// them does: Cut resets every connection through it, CutOnNextWrite
// resets each connection at its next statement (cut under a request), and
// Refuse resets new connections as they come. The client sees what it
// sees then on a real network: a write that fails ("broken pipe",
// "connection reset by peer") or a read that ends ("unexpected EOF").
type Proxy struct {
	// Addr is where the proxy listens (127.0.0.1:port).
	Addr   string
	target string
	ln     net.Listener

	mu       sync.Mutex
	links    map[*link]struct{}
	refusing bool
	armed    bool
	wg       sync.WaitGroup
}

// link is one client connection and its server connection.
type link struct {
	client, server *net.TCPConn
}

// NewProxy proxies to the server of dsn (a postgres:// URL) until t ends.
func NewProxy(t testing.TB, dsn string) *Proxy {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("proxy: parse %q: %v", dsn, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: listen: %v", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: u.Host, ln: ln, links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
		p.wg.Wait()
	})
	return p
}

// URL is dsn with the proxy as its server.
func (p *Proxy) URL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		panic(err) // NewProxy parsed a URL of the same server
	}
	u.Host = p.Addr
	return u.String()
}

// Cut resets every connection through the proxy, both ways, and returns
// how many there were.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.links)
	for l := range p.links {
		l.reset()
		delete(p.links, l)
	}
	return n
}

// CutOnNextWrite arms the proxy: each connection whose client sends
// anything next (a statement, a ping) is reset instead of passing it on,
// so the client has written and waits for an answer that never comes.
// New connections pass until their first statement too; Disarm ends it.
func (p *Proxy) CutOnNextWrite() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = true
}

// Disarm ends CutOnNextWrite.
func (p *Proxy) Disarm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = false
}

// Refuse makes the proxy reset every new connection at once (on), as a
// server that is down does, or pass them again (off).
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusing = on
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		client := c.(*net.TCPConn)
		p.mu.Lock()
		refusing := p.refusing
		p.mu.Unlock()
		if refusing {
			_ = client.SetLinger(0)
			client.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.SetLinger(0)
			client.Close()
			continue
		}
		l := &link{client: client, server: s.(*net.TCPConn)}
		p.mu.Lock()
		p.links[l] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			p.forward(l)
		}()
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(l.client, l.server)
			p.drop(l)
		}()
	}
}

// forward passes what the client sends to the server, unless the proxy
// is armed: then the connection is reset instead.
func (p *Proxy) forward(l *link) {
	defer p.drop(l)
	buf := make([]byte, 32<<10)
	started := false
	for {
		n, err := l.client.Read(buf)
		if n > 0 {
			p.mu.Lock()
			cut := p.armed && started
			p.mu.Unlock()
			// A connection's startup (its first bytes) passes: the cut is
			// of a connection in use.
			started = true
			if cut {
				return
			}
			if _, werr := l.server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			_ = l.server.CloseWrite()
			return
		}
	}
}

// drop resets l and forgets it.
func (p *Proxy) drop(l *link) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.links[l]; ok {
		l.reset()
		delete(p.links, l)
	}
}

// reset closes both connections with a reset (no orderly close): the
// peer's next read or write fails.
func (l *link) reset() {
	_ = l.client.SetLinger(0)
	_ = l.server.SetLinger(0)
	l.client.Close()
	l.server.Close()
}
