package logctx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/feedsvc/feedsvc/internal/logctx"
)

func TestALineLoggedWithARequestsContextNamesTheRequest(t *testing.T) {
	cases := []struct {
		name string
		ctx  context.Context
		want any
	}{
		{"a context with a request id adds request_id", logctx.WithRequestID(context.Background(), "r-1"), "r-1"},
		{"a context without one adds nothing", context.Background(), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			// Wrapping twice must not name the request twice.
			logger := slog.New(logctx.NewHandler(logctx.NewHandler(slog.NewJSONHandler(&buf, nil)))).With("component", "x")
			logger.InfoContext(c.ctx, "hello")
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("line %q: %v", buf.String(), err)
			}
			if line["request_id"] != c.want || line["component"] != "x" {
				t.Fatalf("line %v; want request_id %v", line, c.want)
			}
			if n := bytes.Count(buf.Bytes(), []byte("request_id")); c.want != nil && n != 1 {
				t.Fatalf("request_id written %d times: %s", n, buf.String())
			}
		})
	}
}
