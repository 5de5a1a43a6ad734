package safehttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"code.dny.dev/ssrf"

	"github.com/feedsvc/feedsvc/internal/safehttp"
)

func server(t *testing.T, hits *atomic.Int32) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat("x", 2048)))
		case "/trickle":
			w.(http.Flusher).Flush()
			time.Sleep(600 * time.Millisecond)
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func get(c *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

func TestTheClientNeverReachesAPrivateAddressUnlessAllowed(t *testing.T) {
	var hits atomic.Int32
	s := server(t, &hits)
	if _, err := get(safehttp.New(safehttp.Options{}), s.URL+"/"); !errors.Is(err, ssrf.ErrProhibitedIP) || !safehttp.Refused(err) {
		t.Fatalf("err = %v, want a refused dial", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback server was reached")
	}
	resp, err := get(safehttp.New(safehttp.Options{AllowPrivateNetworks: true}), s.URL+"/")
	if err != nil {
		t.Fatalf("allowed: %v", err)
	}
	resp.Body.Close()
}

func TestRedirectsAreBoundedAndStayOnHTTP(t *testing.T) {
	var hits atomic.Int32
	s := server(t, &hits)
	c := safehttp.New(safehttp.Options{AllowPrivateNetworks: true, MaxRedirects: 3})
	tests := []struct {
		name string
		path string
		want error
	}{
		{"a redirect loop stops at the limit", "/loop", safehttp.ErrTooManyRedirects},
		{"a redirect to another scheme is refused", "/to-file", safehttp.ErrUnsupportedScheme},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := get(c, s.URL+tt.path); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestBodiesAndTimeAreBounded(t *testing.T) {
	var hits atomic.Int32
	s := server(t, &hits)
	c := safehttp.New(safehttp.Options{AllowPrivateNetworks: true, Timeout: 100 * time.Millisecond})
	t.Run("a body over the limit is ErrTooLarge, never cut short", func(t *testing.T) {
		resp, err := get(c, s.URL+"/big")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := safehttp.ReadBody(resp, 1024); !errors.Is(err, safehttp.ErrTooLarge) {
			t.Errorf("err = %v, want ErrTooLarge", err)
		}
	})
	t.Run("a body that trickles times out while it is read", func(t *testing.T) {
		resp, err := get(c, s.URL+"/trickle")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		start := time.Now()
		if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want a deadline", err)
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("reading took %s; the timeout did not apply", d)
		}
	})
}
