package http_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// Bodies over the 1 MiB limit, sent in full on a real socket: the 413 must
// reach the client (no connection reset) and the same keep-alive
// connection must serve the next request.

// oversized is a POST /feeds/news whose name alone is size bytes.
func oversized(key string, size int, chunked bool) (head string, body string) {
	body = `{"name":"` + strings.Repeat("n", size) + `","description":"too big"}`
	framing := fmt.Sprintf("Content-Length: %d", len(body))
	if chunked {
		framing = "Transfer-Encoding: chunked"
		var b strings.Builder
		for rest := body; rest != ""; {
			n := min(len(rest), 64<<10)
			fmt.Fprintf(&b, "%x\r\n%s\r\n", n, rest[:n])
			rest = rest[n:]
		}
		b.WriteString("0\r\n\r\n")
		body = b.String()
	}
	return request("POST /feeds/news HTTP/1.1", "Authorization: Bearer "+key, "Content-Type: application/json", framing), body
}

// sendWhole writes raw in the background, as a client that sends its whole
// request before reading does, and returns what the write ended in.
func sendWhole(conn net.Conn, raw string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_ = conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
		_, err := io.WriteString(conn, raw)
		done <- err
	}()
	return done
}

func TestAnOversizedBodyIsAnswered413AndTheConnectionServesTheNextRequest(t *testing.T) {
	h := servicetest.Start(t)
	addr := h.Listen()
	c := as(h, h.Key)
	cases := []struct {
		name    string
		size    int
		chunked bool
	}{
		{"a 1 MB name with a Content-Length", 1 << 20, false},
		{"a 10 MB name with a Content-Length", 10 << 20, false},
		{"a 1 MB name in chunks", 1 << 20, true},
		{"a 10 MB name in chunks", 10 << 20, true},
	}
	for _, tc := range cases {
		t.Run(tc.name+" answers 413 and the connection stays usable", func(t *testing.T) {
			conn := dial(t, addr, "")
			br := bufio.NewReader(conn)
			head, body := oversized(h.Key, tc.size, tc.chunked)
			wrote := sendWhole(conn, head+body)
			r := readAnswer(t, conn, br)
			e := wantError(t, r, http.StatusRequestEntityTooLarge, "VALIDATION_ERROR")
			if d := wantObject(t, "error.details", e["details"]); d["field"] != "body" {
				t.Fatalf("413 names %v, want body", d)
			}
			if r.Header.Get("Connection") == "close" {
				t.Fatalf("the 413 closes the connection: %v", r.Header)
			}
			if err := <-wrote; err != nil {
				t.Fatalf("sending the whole body failed (the server stopped reading it): %v", err)
			}
			next := `{"name":"after ` + tc.name + `","description":"same connection"}`
			if _, err := io.WriteString(conn, request("POST /feeds/news HTTP/1.1", "Authorization: Bearer "+h.Key,
				"Content-Type: application/json", fmt.Sprintf("Content-Length: %d", len(next)))+next); err != nil {
				t.Fatalf("second request on the connection: %v", err)
			}
			created := wantDataObject(t, readAnswer(t, conn, br), http.StatusCreated)
			if created["name"] != "after "+tc.name {
				t.Fatalf("second answer %v", created)
			}
		})
	}
	t.Run("several oversized bodies in a row on one connection are each answered", func(t *testing.T) {
		conn := dial(t, addr, "")
		br := bufio.NewReader(conn)
		for i := range 3 {
			head, body := oversized(h.Key, 2<<20, i%2 == 1)
			wrote := sendWhole(conn, head+body)
			wantError(t, readAnswer(t, conn, br), http.StatusRequestEntityTooLarge, "VALIDATION_ERROR")
			if err := <-wrote; err != nil {
				t.Fatalf("body %d: %v", i, err)
			}
		}
		_, _ = io.WriteString(conn, request("GET /feeds/news HTTP/1.1", "Authorization: Bearer "+h.Key))
		readAnswer(t, conn, br).MustStatus(t, http.StatusOK)
	})
	t.Run("the 413 comes before the rest of the body is sent, which is then drained", func(t *testing.T) {
		conn := dial(t, addr, "")
		br := bufio.NewReader(conn)
		head, body := oversized(h.Key, 4<<20, false)
		if _, err := io.WriteString(conn, head+body[:64<<10]); err != nil {
			t.Fatal(err)
		}
		wantError(t, readAnswer(t, conn, br), http.StatusRequestEntityTooLarge, "VALIDATION_ERROR")
		if err := <-sendWhole(conn, body[64<<10:]); err != nil {
			t.Fatalf("the rest of the body: %v", err)
		}
		_, _ = io.WriteString(conn, request("GET /feeds/news HTTP/1.1", "Authorization: Bearer "+h.Key))
		readAnswer(t, conn, br).MustStatus(t, http.StatusOK)
	})
	t.Run("a body of exactly the limit is read and judged on its content", func(t *testing.T) {
		body := `{"name":"` + strings.Repeat("a", 1<<20-len(`{"name":"","description":"x"}`)) + `","description":"x"}`
		if len(body) != 1<<20 {
			t.Fatalf("body is %d bytes", len(body))
		}
		for _, chunked := range []bool{false, true} {
			conn := dial(t, addr, "")
			framing := fmt.Sprintf("Content-Length: %d", len(body))
			raw := body
			if chunked {
				framing, raw = "Transfer-Encoding: chunked", fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
			}
			wrote := sendWhole(conn, request("POST /feeds/news HTTP/1.1", "Authorization: Bearer "+h.Key, "Content-Type: application/json", framing)+raw)
			wantValidation(t, readAnswer(t, conn, bufio.NewReader(conn)), "name")
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("none of the oversized requests created a feed", func(t *testing.T) {
		for _, f := range wantDataList(t, c.do(t, "GET", "/feeds/news", nil)) {
			if !strings.HasPrefix(f["name"].(string), "after ") {
				t.Fatalf("unexpected feed %v", f["name"])
			}
		}
	})
}
