package http_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// Contract tests of the transport: what the service answers, on a real
// socket, to requests a careless or hostile client sends.

// answerWithin bounds every wait for an answer in these tests: the service
// must answer malformed requests at once, not when a timeout fires.
const answerWithin = 3 * time.Second

// dial opens a connection to addr, from the loopback address from when set.
func dial(t *testing.T, addr, from string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: answerWithin}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// readAnswer reads one HTTP answer from conn; it fails the test if none
// arrives within answerWithin, and on any body that is not JSON.
func readAnswer(t *testing.T, conn net.Conn, br *bufio.Reader) servicetest.Response {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(answerWithin))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer within %s: %v", answerWithin, err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("read the body of a %d: %v", resp.StatusCode, err)
	}
	out := servicetest.Response{Status: resp.StatusCode, Raw: string(raw), Header: resp.Header}
	if err := json.Unmarshal(raw, &out.Body); err != nil {
		t.Fatalf("answer %d is not a JSON envelope: %q", resp.StatusCode, raw)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("answer %d has Content-Type %q; want application/json", resp.StatusCode, ct)
	}
	return out
}

// exchange sends raw bytes on a new connection and reads one answer.
func exchange(t *testing.T, addr, raw string) (servicetest.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	conn := dial(t, addr, "")
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatalf("write request: %v", err)
	}
	br := bufio.NewReader(conn)
	return readAnswer(t, conn, br), conn, br
}

// wantClosed fails unless the server closes conn (after its answer) at once.
func wantClosed(t *testing.T, conn net.Conn, br *bufio.Reader) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(answerWithin))
	if n, err := br.Read(make([]byte, 1)); n > 0 || !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		t.Fatalf("connection still open after the answer: read %d bytes, %v", n, err)
	}
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// request is a raw HTTP/1.1 request: the request line, then header lines.
func request(line string, headers ...string) string {
	return line + "\r\n" + strings.Join(append([]string{"Host: feedsvc"}, headers...), "\r\n") + "\r\n\r\n"
}

func TestMalformedRequestsAreAnsweredWithoutEchoingAnyOfTheirBytes(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	addr := h.Listen()
	auth := "Authorization: Bearer " + h.Key
	marker := "X-Marker: marker-7f3a9"
	cases := []struct{ name, raw string }{
		{"a header name with a space before the colon", request("GET /feeds/news HTTP/1.1", auth, marker, "X-Bad : 1")},
		{"a header name with a control character", request("GET /feeds/news HTTP/1.1", auth, marker, "X-B\x01d: 1")},
		{"a header value with a NUL", request("GET /feeds/news HTTP/1.1", auth, marker, "X-Bad: a\x00b")},
		{"a request line with a bare version", request("GET /feeds/news HTTP/1.1 x", auth, marker)},
		{"an invalid chunked body", request("POST /feeds/news HTTP/1.1", auth, marker, "Content-Type: application/json", "Transfer-Encoding: chunked") + "zz\r\n{}\r\n0\r\n\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" answers 400 in the envelope and quotes nothing", func(t *testing.T) {
			r, _, _ := exchange(t, addr, tc.raw)
			e := wantError(t, r, http.StatusBadRequest, "VALIDATION_ERROR")
			wantKeys(t, "error", e, "code", "message", "details")
			for _, leak := range []string{h.Key, h.Key[len(h.Key)-16:], "Bearer", "marker-7f3a9", "X-Bad", "X-B", "/feeds/news"} {
				if strings.Contains(r.Raw, leak) {
					t.Fatalf("the answer echoes %q from the request: %s", leak, r.Raw)
				}
			}
		})
	}
}

func TestMalformedFramingIsAnswered400AtOnceAndTheConnectionClosed(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	addr := h.Listen()
	auth := "Authorization: Bearer " + h.Key
	cases := []struct{ name, raw string }{
		{"two different Content-Length headers", request("POST /feeds/news HTTP/1.1", auth, "Content-Type: application/json",
			"Content-Length: 2", "Content-Length: 40") + "{}"},
		{"a header line without a colon", request("GET /feeds/news HTTP/1.1", auth, "X-No-Colon")},
		{"a header line without a colon as the only header", "GET /healthz HTTP/1.1\r\nHost\r\n\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// exchange waits answerWithin, far less than any timeout of the
			// server: an answer at all means an answer at once.
			r, conn, br := exchange(t, addr, tc.raw)
			wantError(t, r, http.StatusBadRequest, "VALIDATION_ERROR")
			wantClosed(t, conn, br)
		})
	}
	t.Run("nothing was created", func(t *testing.T) {
		if feeds := wantDataList(t, as(h, h.Key).do(t, "GET", "/feeds/news", nil)); len(feeds) != 0 {
			t.Fatalf("feeds %s", jsonOf(feeds))
		}
	})
}

func TestOversizedRequestLinesAndHeadersAnswer431AsAClientError(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	addr := h.Listen()
	auth := "Authorization: Bearer " + h.Key
	long := strings.Repeat("a", 20_000)
	cases := []struct{ name, raw string }{
		{"a 20,000-character URL", request("GET /feeds/news?x="+long+" HTTP/1.1", auth)},
		{"a 20,000-character header", request("GET /feeds/news HTTP/1.1", auth, "X-Long: "+long)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _, _ := exchange(t, addr, tc.raw)
			e := wantError(t, r, http.StatusRequestHeaderFieldsTooLarge, "VALIDATION_ERROR")
			if strings.Contains(r.Raw, "aaaa") {
				t.Fatalf("431 echoes the request: %s", r.Raw)
			}
			wantObject(t, "error.details", e["details"])
		})
	}
	t.Run("a 5,000-character id in a path is a malformed id, 400", func(t *testing.T) {
		r, _, _ := exchange(t, addr, request("GET /feeds/news/"+strings.Repeat("7", 5000)+" HTTP/1.1", auth))
		wantValidation(t, r, "feedId")
	})
}

func TestAClientThatStallsInItsHeadersIsAnswered408AfterTheHeaderTimeout(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t, func(c *config.Config) { c.HeaderTimeout = 300 * time.Millisecond })
	addr := h.Listen()
	t.Run("headers that never end answer 408 REQUEST_TIMEOUT", func(t *testing.T) {
		conn := dial(t, addr, "")
		start := time.Now()
		_, _ = io.WriteString(conn, "GET /feeds/news HTTP/1.1\r\nHost: feedsvc\r\nAuthorization: Bearer "+h.Key+"\r\n")
		br := bufio.NewReader(conn)
		r := readAnswer(t, conn, br)
		wantError(t, r, http.StatusRequestTimeout, "REQUEST_TIMEOUT")
		if waited := time.Since(start); waited < 250*time.Millisecond {
			t.Fatalf("answered after %s, before the 300ms header timeout", waited)
		}
		if strings.Contains(r.Raw, h.Key) {
			t.Fatalf("408 echoes the key: %s", r.Raw)
		}
		wantClosed(t, conn, br)
	})
	t.Run("a body slower than the header timeout still has the read timeout", func(t *testing.T) {
		conn := dial(t, addr, "")
		body := `{"name":"slow","description":"body"}`
		_, _ = io.WriteString(conn, request("POST /feeds/news HTTP/1.1", "Authorization: Bearer "+h.Key,
			"Content-Type: application/json", "Content-Length: "+itoa(len(body))))
		time.Sleep(600 * time.Millisecond)
		_, _ = io.WriteString(conn, body)
		wantDataObject(t, readAnswer(t, conn, bufio.NewReader(conn)), http.StatusCreated)
	})
}

func TestConnectionsPastTheCapsAreAnsweredInTheEnvelopeAndClosed(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t, func(c *config.Config) { c.MaxConnsPerIP = 2; c.MaxConns = 3 })
	addr := h.Listen()
	health := request("GET /healthz HTTP/1.1")
	// open holds a connection, served one request, until the whole test
	// ends (a subtest's cleanup would close it early).
	held := t
	open := func(t *testing.T, from string) net.Conn {
		t.Helper()
		conn := dial(held, addr, from)
		_, _ = io.WriteString(conn, health)
		r := readAnswer(t, conn, bufio.NewReader(conn))
		r.MustStatus(t, http.StatusOK)
		return conn
	}
	refused := func(t *testing.T, from string, status int, code string) {
		t.Helper()
		conn := dial(t, addr, from)
		_, _ = io.WriteString(conn, health)
		br := bufio.NewReader(conn)
		r := readAnswer(t, conn, br)
		wantError(t, r, status, code)
		if r.Header.Get("X-Request-Id") == "" {
			t.Fatalf("a refused connection's answer has no X-Request-Id: %v", r.Header)
		}
		wantClosed(t, conn, br)
	}
	a1 := open(t, "127.0.0.1")
	open(t, "127.0.0.1")
	t.Run("a third connection from one address answers 429", func(t *testing.T) {
		refused(t, "127.0.0.1", http.StatusTooManyRequests, "TOO_MANY_REQUESTS")
	})
	t.Run("another address is still served", func(t *testing.T) {
		open(t, "127.0.0.2")
	})
	t.Run("past the total cap any address answers 503", func(t *testing.T) {
		refused(t, "127.0.0.3", http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	})
	t.Run("a closed connection frees its place", func(t *testing.T) {
		a1.Close()
		var r servicetest.Response
		if !wait.Within(answerWithin, func() bool {
			conn := dial(t, addr, "127.0.0.1")
			_, _ = io.WriteString(conn, health)
			r = readAnswer(t, conn, bufio.NewReader(conn))
			return r.Status == http.StatusOK
		}) {
			t.Fatalf("still refused after the close: %d %s", r.Status, r.Raw)
		}
	})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
