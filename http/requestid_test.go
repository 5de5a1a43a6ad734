package http_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/internal/logctx"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// Contract tests of X-Request-Id: every answer has one, the client's own
// when it is sane, and the request's log lines carry it.

func TestEveryAnswerCarriesARequestIDTheClientsWhenItIsSane(t *testing.T) {
	h := servicetest.Start(t)
	c := as(h, h.Key)
	t.Run("a sane id sent by the client is echoed", func(t *testing.T) {
		for _, id := range []string{"req-42", "0198c3a2-7f00-7000-8000-000000000001", "trace:abc/def+g==@edge_1.2", strings.Repeat("a", 128)} {
			r := c.doWith(t, "GET", "/feeds/news", nil, map[string]string{"X-Request-Id": id})
			r.MustStatus(t, http.StatusOK)
			if got := r.Header.Get("X-Request-Id"); got != id {
				t.Fatalf("sent X-Request-Id %q, answer has %q", id, got)
			}
		}
	})
	t.Run("without one each answer gets a fresh UUID", func(t *testing.T) {
		a := c.do(t, "GET", "/feeds/news", nil).Header.Get("X-Request-Id")
		b := c.do(t, "GET", "/feeds/news", nil).Header.Get("X-Request-Id")
		if _, err := uuid.Parse(a); err != nil || a == b {
			t.Fatalf("generated ids %q and %q: want two different UUIDs", a, b)
		}
	})
	insane := []struct{ name, id string }{
		{"129 characters", strings.Repeat("a", 129)},
		{"a space", "a b"},
		{"a quote", `a"b`},
		{"a semicolon", "a;b"},
		{"non-ASCII letters", "réquête"},
		{"a log-injection attempt", `x" level=ERROR msg="forged`},
	}
	for _, tc := range insane {
		t.Run("an id with "+tc.name+" is replaced by a generated one", func(t *testing.T) {
			r := c.doWith(t, "GET", "/feeds/news", nil, map[string]string{"X-Request-Id": tc.id})
			got := r.Header.Get("X-Request-Id")
			if _, err := uuid.Parse(got); err != nil {
				t.Fatalf("sent %q, answer has %q; want a generated UUID", tc.id, got)
			}
		})
	}
	t.Run("error answers carry one too", func(t *testing.T) {
		for _, r := range []servicetest.Response{
			send(t, h, "GET", "/feeds/news", nil, map[string]string{"X-Request-Id": "err-1"}),
			c.doWith(t, "GET", "/no/such/route", nil, map[string]string{"X-Request-Id": "err-1"}),
			c.doWith(t, "POST", "/feeds/news", `{"name":`, map[string]string{"X-Request-Id": "err-1"}),
		} {
			if r.Status < 400 || r.Header.Get("X-Request-Id") != "err-1" {
				t.Fatalf("answer %d has X-Request-Id %q; want err-1", r.Status, r.Header.Get("X-Request-Id"))
			}
		}
	})
	t.Run("answers of the transport carry one", func(t *testing.T) {
		addr := h.Listen()
		for _, raw := range []string{
			request("GET /feeds/news HTTP/1.1", "X-Bad : 1"),                                              // malformed: 400
			request("GET /feeds/news HTTP/1.1", "X-Long: "+strings.Repeat("a", 20_000)),                   // 431
			request("PROPFIND /feeds/news HTTP/1.1", "Authorization: Bearer "+h.Key, "X-Request-Id: t-7"), // 405
		} {
			r, _, _ := exchange(t, addr, raw)
			if id := r.Header.Get("X-Request-Id"); r.Status < 400 || id == "" {
				t.Fatalf("transport answer %d has no X-Request-Id: %v", r.Status, r.Header)
			}
		}
	})
}

// lockedBuffer collects log output written from several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		out = append(out, line)
	}
	return out
}

func TestTheLogLinesOfARequestNameItsID(t *testing.T) {
	var logs lockedBuffer
	logger := logctx.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := servicetest.StartLogged(t, logger)
	c := as(h, h.Key)
	c.doWith(t, "GET", "/feeds/news", nil, map[string]string{"X-Request-Id": "log-me-1"}).MustStatus(t, http.StatusOK)
	c.doWith(t, "GET", "/no/such/route", nil, map[string]string{"X-Request-Id": "log-me-2"}).MustStatus(t, http.StatusNotFound)

	named := map[string]int{}
	for _, line := range logs.lines(t) {
		if line["msg"] != "request" {
			continue
		}
		id, _ := line["request_id"].(string)
		if id == "" {
			t.Fatalf("request log line without request_id: %v", line)
		}
		named[id]++
	}
	if named["log-me-1"] != 1 || named["log-me-2"] != 1 {
		t.Fatalf("request lines by id %v; want one each for log-me-1 and log-me-2", named)
	}
}
