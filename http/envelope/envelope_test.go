package envelope_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
)

// answer renders err as a route of a group speaking d would.
func answer(t *testing.T, d envelope.Dialect, err error) (int, map[string]any) {
	t.Helper()
	app := fiber.New(fiber.Config{ErrorHandler: envelope.ErrorHandler(slog.New(slog.DiscardHandler))})
	path := "/feeds/news/x"
	if d == envelope.Events {
		path = "/feeds/events/x"
	}
	app.Get(path, func(*fiber.Ctx) error { return err })
	resp, testErr := app.Test(httptest.NewRequest("GET", path, nil))
	if testErr != nil {
		t.Fatal(testErr)
	}
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("body %q is not JSON", raw)
	}
	return resp.StatusCode, body
}

// errUnexpected is a failure the mapper knows nothing of.
var errUnexpected = errors.New("render item: the impossible happened")

func TestOneMapperSpeaksEachRouteGroupsDialect(t *testing.T) {
	cases := []struct {
		name    string
		dialect envelope.Dialect
		err     error
		status  int
		code    string
		// fields of error that must be present (and only those besides
		// code and message)
		extra []string
	}{
		{"a news 400 names its field in details", envelope.News, &domain.ValidationError{Field: "name", Issue: "is required"}, 400, "VALIDATION_ERROR", []string{"details"}},
		{"an events 400 is a BAD_REQUEST with details", envelope.Events, &domain.ValidationError{Field: "since", Issue: "too early"}, 400, "BAD_REQUEST", []string{"details"}},
		{"a news 404 names the resource and id", envelope.News, &domain.NotFoundError{Resource: "feed", ID: "f1"}, 404, "NOT_FOUND", []string{"resource", "id"}},
		{"an events 404 is plain", envelope.Events, &domain.NotFoundError{Resource: "feed", ID: "f1"}, 404, "NOT_FOUND", nil},
		{"a news failure is an INTERNAL_ERROR", envelope.News, errUnexpected, 500, "INTERNAL_ERROR", nil},
		{"an events failure is an INTERNAL_SERVER_ERROR", envelope.Events, errUnexpected, 500, "INTERNAL_SERVER_ERROR", nil},
		{"a lagging write is a retry-free 503 in the dialect", envelope.Events, commands.ErrLagging, 503, "INTERNAL_SERVER_ERROR", nil},
		{"a conflict is CONFLICT in both", envelope.Events, &domain.ConflictError{Message: "dup"}, 409, "CONFLICT", nil},
		{"a missing permission is PERMISSION_DENIED in both", envelope.Events, envelope.Forbidden("no"), 403, "PERMISSION_DENIED", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := answer(t, c.dialect, c.err)
			e, _ := body["error"].(map[string]any)
			if status != c.status || body["success"] != false || e["code"] != c.code || e["message"] == "" {
				t.Fatalf("%d %v; want %d %s", status, body, c.status, c.code)
			}
			if len(e) != 2+len(c.extra) {
				t.Fatalf("error members %v; want code, message and %v", e, c.extra)
			}
			for _, k := range c.extra {
				if _, ok := e[k]; !ok {
					t.Fatalf("error %v lacks %s", e, k)
				}
			}
		})
	}
}

func TestA401IsFlatInEveryDialect(t *testing.T) {
	for _, d := range []envelope.Dialect{envelope.News, envelope.Events} {
		status, body := answer(t, d, envelope.Unauthorized("missing Authorization header"))
		if status != 401 || body["code"] != "AUTHENTICATION_FAILED" || body["error"] != "Authentication failed (api-key): missing Authorization header" {
			t.Fatalf("%d %v", status, body)
		}
	}
}

func TestARequestThatRanOutOfTimeAnswers503NotA500(t *testing.T) {
	err := fmt.Errorf("rank sources: %w", context.DeadlineExceeded)
	if got := envelope.Classify(err); got.Status != fiber.StatusServiceUnavailable {
		t.Fatalf("a deadline answers %d (%q); want 503", got.Status, got.Message)
	}
}

func TestTheDialectIsThePathsAsTheRouterMatchesIt(t *testing.T) {
	tests := []struct {
		path string
		want envelope.Dialect
	}{
		{"/feeds/events", envelope.Events},
		{"/feeds/events/", envelope.Events},
		{"/FEEDS/Events/abc/items", envelope.Events},
		{"/v0/feeds/events/abc/items", envelope.Events},
		{"/feeds/%65vents/x", envelope.Events},
		{"//feeds//events", envelope.Events},
		{"/./feeds/events", envelope.Events},
		{"/feeds/news/../events/x", envelope.Events},
		{"/V0/FEEDS/%45VENTS/x/items", envelope.Events},
		{"/feeds/events/../news", envelope.News},
		{"/feeds/%65ventsx", envelope.News},
		{"/feeds/eventsx", envelope.News},
		{"/feeds/news/abc", envelope.News},
		{"/webhooks", envelope.News},
		{"/", envelope.News},
		{"", envelope.News},
	}
	for _, tt := range tests {
		if got := envelope.For(tt.path); got != tt.want {
			t.Errorf("For(%q) = %+v, want %+v", tt.path, got, tt.want)
		}
	}
}

// A database that refuses connections or is at its limit (issue 26.4)
// answers 503 SERVICE_UNAVAILABLE with Retry-After in either dialect,
// never 500.
func TestADatabaseThatRefusesAnswers503WithRetryAfter(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, refused := pgx.Connect(context.Background(), "postgres://postgres@"+addr+"/x?sslmode=disable&connect_timeout=1")
	if refused == nil {
		t.Fatal("a closed port accepted a connection")
	}
	cases := []struct {
		name string
		err  error
	}{
		{"a refused connection", fmt.Errorf("load feed: %w", refused)},
		{"too many clients", fmt.Errorf("load feed: %w", &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"})},
		{"a server starting up", &pgconn.PgError{Code: "57P03"}},
		{"a connection lost", &pgconn.PgError{Code: "08006"}},
		// Issue 34.4: a connection cut under the statement, as pgx passes
		// the network's word on.
		{"a broken pipe", fmt.Errorf("list items: write failed: %w",
			&net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)})},
		{"a connection reset", fmt.Errorf("list items: %w",
			&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)})},
		{"a read ended early", fmt.Errorf("read stream: %w", io.ErrUnexpectedEOF)},
		{"a connection pgx closed", fmt.Errorf("read stream: %w", pgconn.ErrConnClosed)},
	}
	for _, tc := range cases {
		for _, d := range []envelope.Dialect{envelope.News, envelope.Events} {
			app := fiber.New(fiber.Config{ErrorHandler: envelope.ErrorHandler(slog.New(slog.DiscardHandler))})
			path := "/feeds/news/x"
			if d == envelope.Events {
				path = "/feeds/events/x"
			}
			app.Get(path, func(*fiber.Ctx) error { return tc.err })
			resp, err := app.Test(httptest.NewRequest("GET", path, nil))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(raw), `"SERVICE_UNAVAILABLE"`) {
				t.Errorf("%s on %s: %d Retry-After %q %s", tc.name, path, resp.StatusCode, resp.Header.Get("Retry-After"), raw)
			}
		}
	}
}
