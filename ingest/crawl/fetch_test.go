package crawl

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/internal/safehttp"
)

func TestGet(t *testing.T) {
	var sawUA, sawAcceptEncoding atomic.Value
	s := newSite(t, map[string]http.HandlerFunc{
		"/page": func(w http.ResponseWriter, r *http.Request) {
			sawUA.Store(r.Header.Get("User-Agent"))
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Last-Modified", "Fri, 03 May 2024 08:00:00 GMT")
			fmt.Fprint(w, "<html>hello</html>")
		},
		"/cond": func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("If-None-Match") == `"v1"` && r.Header.Get("If-Modified-Since") == "Fri, 03 May 2024 08:00:00 GMT" {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", `"v2"`)
			fmt.Fprint(w, "changed")
		},
		"/gzip": func(w http.ResponseWriter, r *http.Request) {
			sawAcceptEncoding.Store(r.Header.Get("Accept-Encoding"))
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			fmt.Fprint(zw, "compressed body")
			_ = zw.Close()
		},
		"/moved":  redirect("/page"),
		"/broken": status(http.StatusInternalServerError),
	})
	c := localClient(Options{})
	ctx := context.Background()

	t.Run("a 200 page returns body, content type, validators and the user agent is sent", func(t *testing.T) {
		resp, err := c.Get(ctx, s.URL+"/page", document.Validators{})
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.Body) != "<html>hello</html>" || resp.StatusCode != 200 || resp.ContentType != "text/html; charset=utf-8" {
			t.Errorf("unexpected response %+v", resp)
		}
		if resp.Validators != (document.Validators{ETag: `"v1"`, LastModified: "Fri, 03 May 2024 08:00:00 GMT"}) {
			t.Errorf("Validators = %+v", resp.Validators)
		}
		if ua := sawUA.Load(); ua != DefaultUserAgent {
			t.Errorf("User-Agent = %v, want %q", ua, DefaultUserAgent)
		}
	})
	t.Run("a conditional GET answered 304 is NotModified with an empty body and keeps the validators", func(t *testing.T) {
		cond := document.Validators{ETag: `"v1"`, LastModified: "Fri, 03 May 2024 08:00:00 GMT"}
		resp, err := c.Get(ctx, s.URL+"/cond", cond)
		if err != nil {
			t.Fatal(err)
		}
		if !resp.NotModified || resp.StatusCode != 304 || len(resp.Body) != 0 || resp.Validators != cond {
			t.Errorf("unexpected response %+v", resp)
		}
	})
	t.Run("a conditional GET for a changed resource returns the new body", func(t *testing.T) {
		resp, err := c.Get(ctx, s.URL+"/cond", document.Validators{ETag: `"old"`})
		if err != nil {
			t.Fatal(err)
		}
		if resp.NotModified || string(resp.Body) != "changed" || resp.Validators.ETag != `"v2"` {
			t.Errorf("unexpected response %+v", resp)
		}
	})
	t.Run("a gzip-encoded body is negotiated and decoded transparently", func(t *testing.T) {
		resp, err := c.Get(ctx, s.URL+"/gzip", document.Validators{})
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.Body) != "compressed body" {
			t.Errorf("Body = %q", resp.Body)
		}
		if ae, _ := sawAcceptEncoding.Load().(string); !strings.Contains(ae, "gzip") {
			t.Errorf("Accept-Encoding = %q, want gzip", ae)
		}
	})
	t.Run("a redirect is followed and the final URL reported", func(t *testing.T) {
		resp, err := c.Get(ctx, s.URL+"/moved", document.Validators{})
		if err != nil {
			t.Fatal(err)
		}
		if resp.URL != s.URL+"/page" {
			t.Errorf("URL = %q, want %q", resp.URL, s.URL+"/page")
		}
	})
	t.Run("a 500 page is a StatusError", func(t *testing.T) {
		_, err := c.Get(ctx, s.URL+"/broken", document.Validators{})
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != 500 || se.URL != s.URL+"/broken" {
			t.Fatalf("err = %v, want StatusError 500", err)
		}
	})
	t.Run("a non-http scheme is refused before any request", func(t *testing.T) {
		_, err := c.Get(ctx, "file:///etc/passwd", document.Validators{})
		if !errors.Is(err, safehttp.ErrUnsupportedScheme) {
			t.Fatalf("err = %v, want safehttp.ErrUnsupportedScheme", err)
		}
	})
}

func TestRetryAfterIsReported(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/busy": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
		},
	})
	_, err := localClient(Options{}).Get(context.Background(), s.URL+"/busy", document.Validators{})
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 503 || se.RetryAfter != 2*time.Minute {
		t.Fatalf("err = %#v, want 503 with RetryAfter 2m", err)
	}
}

func TestLimits(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 2048)
	s := newSite(t, map[string]http.HandlerFunc{
		"/slow": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
		},
		"/trickle": func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			for i := 0; i < 30; i++ {
				if _, err := w.Write([]byte("x")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		},
		"/big": func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(big) },
		"/big-chunked": func(w http.ResponseWriter, _ *http.Request) {
			for i := 0; i < 4; i++ {
				_, _ = w.Write(big[:512])
				w.(http.Flusher).Flush()
			}
		},
		"/exact": func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(big[:1024]) },
	})
	c := localClient(Options{Timeout: 200 * time.Millisecond, MaxBodyBytes: 1024})
	tests := []struct {
		name    string
		path    string
		wantErr error
	}{
		{"a page that does not answer times out", "/slow", context.DeadlineExceeded},
		{"a page whose body trickles times out while reading", "/trickle", context.DeadlineExceeded},
		{"a body with a Content-Length over MaxBodyBytes is ErrTooLarge", "/big", safehttp.ErrTooLarge},
		{"a chunked body over MaxBodyBytes is ErrTooLarge", "/big-chunked", safehttp.ErrTooLarge},
		{"a body of exactly MaxBodyBytes is fine", "/exact", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			resp, err := c.Get(context.Background(), s.URL+tt.path, document.Validators{})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("took %v, the timeout was not enforced", elapsed)
			}
			if err == nil && len(resp.Body) != 1024 {
				t.Errorf("body is %d bytes, want 1024", len(resp.Body))
			}
		})
	}
}

func TestRedirectLimit(t *testing.T) {
	routes := map[string]http.HandlerFunc{"/end": text("text/plain", "done")}
	for i := 1; i <= 4; i++ {
		next := fmt.Sprintf("/r%d", i+1)
		if i == 4 {
			next = "/end"
		}
		routes[fmt.Sprintf("/r%d", i)] = redirect(next)
	}
	routes["/to-ftp"] = redirect("ftp://example.com/file")
	s := newSite(t, routes)
	tests := []struct {
		name         string
		maxRedirects int
		path         string
		wantErr      error
	}{
		{"four redirects are followed when five are allowed", 5, "/r1", nil},
		{"four redirects are followed when exactly four are allowed", 4, "/r1", nil},
		{"four redirects exceed a limit of three", 3, "/r1", safehttp.ErrTooManyRedirects},
		{"a negative limit follows none and reports the 302", -1, "/r4", &StatusError{}},
		{"a redirect to a non-http scheme is refused", 5, "/to-ftp", safehttp.ErrUnsupportedScheme},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := localClient(Options{MaxRedirects: tt.maxRedirects})
			resp, err := c.Get(context.Background(), s.URL+tt.path, document.Validators{})
			if se, ok := tt.wantErr.(*StatusError); ok {
				if !errors.As(err, &se) || se.StatusCode != http.StatusFound {
					t.Fatalf("err = %v, want a 302 StatusError", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && string(resp.Body) != "done" {
				t.Errorf("Body = %q", resp.Body)
			}
		})
	}
}
