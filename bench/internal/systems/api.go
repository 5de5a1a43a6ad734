package systems

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
)

// APIClient calls a system's HTTP API with a bearer key (feedsvc) or
// basic credentials (Miniflux).
type APIClient struct {
	Base       string
	Header     map[string]string
	User, Pass string
	// Client, when set, sends the requests instead of the shared client
	// (whose timeout is a minute): for a request that does a long job
	// before it answers, such as Miniflux's subscription with its crawler.
	Client *http.Client
}

var httpClient = &http.Client{Timeout: 60 * time.Second}

// WaitReady waits up to 2 minutes for path to answer 200.
func (c *APIClient) WaitReady(ctx context.Context, path string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp, err := httpClient.Get(c.Base + path)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready within 2 min", c.Base)
}

// Do sends body (JSON-encoded, or as is when []byte) and decodes a 2xx
// answer into into (when not nil). A write carries an Idempotency-Key, the
// same on each attempt, so a 503 is repeated as feedsvc asks: one that
// changed nothing, or one that saved the change but could not show it yet
// (a loaded machine's projections behind), which the repeat answers once
// visible without making it again.
func (c *APIClient) Do(ctx context.Context, method, path string, body, into any) error {
	key := ""
	if method != "GET" {
		key = uuid.NewString()
	}
	var r io.Reader
	if _, raw := body.([]byte); body != nil && !raw {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		body = b // re-read on each attempt
	}
	for attempt := 0; ; attempt++ {
		if b, ok := body.([]byte); ok {
			r = bytes.NewReader(b)
		}
		req, err := http.NewRequestWithContext(ctx, method, c.Base+path, r)
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		for k, v := range c.Header {
			req.Header.Set(k, v)
		}
		if c.User != "" {
			req.SetBasicAuth(c.User, c.Pass)
		}
		client := httpClient
		if c.Client != nil {
			client = c.Client
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// A 503 (many attaches to one feed at once, a read model still
		// catching up) is repeated: a write with its key.
		if resp.StatusCode == http.StatusServiceUnavailable && attempt < 30 {
			time.Sleep(time.Second)
			continue
		}
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		if into != nil {
			return json.Unmarshal(raw, into)
		}
		return nil
	}
}

// LockedWriter serializes writes (a process's stdout and stderr into one
// buffer).
type LockedWriter struct {
	mu sync.Mutex
	W  io.Writer
}

func (l *LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(p)
}

// FreePort is a loopback port free now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Tail is the end of a process's output, for an error message.
func Tail(s string) string {
	if len(s) > 4000 {
		return s[len(s)-4000:]
	}
	return s
}
