package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/http/openapi"
	"github.com/feedsvc/feedsvc/http/openapi/openapitest"
	"github.com/feedsvc/feedsvc/ingest/websub"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// The OpenAPI document is held to the service here (every route is in it,
// and only those) and by every other test of the package, whose requests
// and answers servicetest checks against it.

// routeParam is a Fiber path parameter, written {name} in OpenAPI.
var routeParam = regexp.MustCompile(`:(\w+)`)

// servedOperations are the app's routes as "METHOD /path" in OpenAPI's
// spelling; HEAD, which Fiber adds for every GET, is left out, and so is
// CONNECT, which only the catch-all routes of capabilities not offered
// take and OpenAPI 3.1 has no field for. A trailing wildcard (every path
// below) is the document's `{path}` of an item marked x-any-depth.
func servedOperations(app *fiber.App) []string {
	var out []string
	for _, r := range app.GetRoutes(true) {
		if r.Method == fiber.MethodHead || r.Method == fiber.MethodConnect {
			continue
		}
		path := routeParam.ReplaceAllString(r.Path, "{$1}")
		if p, ok := strings.CutSuffix(path, "/*"); ok {
			path = p + "/{path}"
		}
		if len(path) > 1 {
			path = strings.TrimSuffix(path, "/")
		}
		out = append(out, r.Method+" "+path)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// unnamed is ops with each path parameter written {}.
func unnamed(ops []string) []string {
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = pathParamName.ReplaceAllString(op, "{}")
	}
	return out
}

var pathParamName = regexp.MustCompile(`\{[^}/]+\}`)

func TestEveryRouteIsInTheOpenAPIDocumentAndEveryDocumentedRouteIsServed(t *testing.T) {
	h := servicetest.Start(t)
	checker, err := openapitest.Default()
	if err != nil {
		t.Fatal(err)
	}
	// Parameters are compared by position, not name: the document names
	// one concept one way ({feedId} on both feed kinds' routes, {sourceId}
	// for a source record) where the routes keep their own names, which
	// are not on the wire.
	served, documented := unnamed(servedOperations(h.Service.App)), unnamed(checker.Operations())
	for _, op := range served {
		if !slices.Contains(documented, op) {
			t.Errorf("%s is served but not in the OpenAPI document: add it to http/openapi/spec", op)
		}
	}
	for _, op := range documented {
		if !slices.Contains(served, op) {
			t.Errorf("%s is in the OpenAPI document but no route serves it", op)
		}
	}
	if len(served) < 40 {
		t.Fatalf("only %d routes found; the comparison saw too little: %v", len(served), served)
	}
}

func TestTheDocumentAndItsPageAreServedWithoutAKey(t *testing.T) {
	h := servicetest.Start(t)
	get := func(t *testing.T, path string) (*http.Response, []byte) {
		t.Helper()
		hh := *h
		hh.T = t
		resp, err := hh.Test(httptest.NewRequest("GET", path, nil))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s answered %d: %.300s", path, resp.StatusCode, body)
		}
		return resp, body
	}
	t.Run("the document is the one the tests check against", func(t *testing.T) {
		resp, body := get(t, openapi.DocumentPath)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("Content-Type %q", ct)
		}
		doc, err := openapi.JSON()
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != string(doc) {
			t.Fatalf("served a different document")
		}
		var d map[string]any
		if err := json.Unmarshal(body, &d); err != nil || d["openapi"] != "3.1.0" {
			t.Fatalf("not an OpenAPI 3.1 document: %v", err)
		}
	})
	t.Run("the page loads its renderer and the document from this origin only", func(t *testing.T) {
		resp, body := get(t, openapi.DocsPath)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Fatalf("Content-Type %q", ct)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "img-src 'self' data:", "connect-src 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
			}
		}
		page := string(body)
		if !strings.Contains(page, `spec-url="openapi.json"`) || !strings.Contains(page, `src="docs/redoc.standalone.js"`) {
			t.Fatalf("the page does not load the document and the renderer from here:\n%s", page)
		}
		if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
			t.Fatalf("the page names an outside address:\n%s", page)
		}
	})
	t.Run("the renderer is served from the binary", func(t *testing.T) {
		resp, body := get(t, openapi.ScriptPath)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
			t.Fatalf("Content-Type %q", ct)
		}
		if len(body) < 500_000 || !strings.Contains(string(body[:200]), "redoc") {
			t.Fatalf("not Redoc's bundle: %d bytes starting %.100q", len(body), body)
		}
	})
}

// Every operation is sent what the middleware in front of every route
// refuses (a repeated parameter, a body over the limit, no key, a key
// without the operation's scopes, a key past its rate, an
// Idempotency-Key reused for another write), built from the document's
// own list of operations, so a route added later is tried too; the
// harness holds each answer to the document. The statuses no request can
// provoke here (a 500, a database that is away, an Idempotency-Key still
// running) must be listed all the same.
func TestEveryOperationDocumentsWhatTheMiddlewareInFrontOfItAnswers(t *testing.T) {
	h := servicetest.Start(t)
	checker, err := openapitest.Default()
	if err != nil {
		t.Fatal(err)
	}
	// A key per set of scopes, made once.
	keys := map[string]string{}
	keyWith := func(scopes []auth.Scope) string {
		name := fmt.Sprint(scopes)
		if keys[name] == "" {
			keys[name] = h.NewKey("acme", scopes...)
		}
		return keys[name]
	}
	spent, _, err := h.Service.Keys.CreateKey(context.Background(), "acme", auth.AllScopes(), nil, auth.WithRate(auth.Rate{Limit: 1, Window: time.Hour}))
	if err != nil {
		t.Fatal(err)
	}
	h.DoWith("GET", "/feeds/news", nil, map[string]string{"Authorization": "Bearer " + spent}).MustStatus(t, http.StatusOK)
	ops := checker.Described()
	if len(ops) < 40 {
		t.Fatalf("only %d operations described", len(ops))
	}
	for _, op := range ops {
		t.Run(op.Method+" "+op.Path, func(t *testing.T) {
			hh := *h
			hh.T = t
			target := concretePath(op.Path)
			send := func(target string, body []byte, header map[string]string) int {
				t.Helper()
				var rd io.Reader
				if body != nil {
					rd = bytes.NewReader(body)
				}
				req := httptest.NewRequest(op.Method, target, rd)
				if body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				for k, v := range header {
					req.Header.Set(k, v)
				}
				resp, err := hh.Test(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			bearer := func(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }
			want := func(what string, got, status int) {
				t.Helper()
				if got != status {
					t.Errorf("%s answered %d, want %d", what, got, status)
				}
			}
			ways, keyed := op.Keyed()
			keyed = keyed && !op.Open()
			write := keyed && slices.Contains([]string{"POST", "PATCH", "DELETE"}, op.Method)
			if op.Path == "/metrics" {
				return // served before the middleware: it takes nothing to refuse
			}
			want("a query parameter given twice", send(target+"?x=1&x=2", nil, bearer(h.Key)), http.StatusBadRequest)
			limit := 1 << 20 // the API's (http.New's default)
			if strings.HasPrefix(op.Path, websub.CallbackPath) {
				limit = h.Service.WebSub.MaxBodyBytes()
			}
			want("a body over the limit", send(target, bytes.Repeat([]byte(" "), limit+1), bearer(h.Key)), http.StatusRequestEntityTooLarge)
			if !keyed {
				return
			}
			want("no key", send(target, nil, nil), http.StatusUnauthorized)
			want("a key past its rate", send(target, nil, bearer(spent)), http.StatusTooManyRequests)
			// Keys holding each scope alone, each way's scopes, and all
			// scopes but one of a way's: refused exactly when no way of the
			// document is within the key's scopes.
			tried := [][]auth.Scope{}
			for _, s := range auth.AllScopes() {
				tried = append(tried, []auth.Scope{s})
			}
			for _, way := range ways {
				scopes := make([]auth.Scope, len(way))
				for i, s := range way {
					scopes[i] = auth.Scope(s)
				}
				tried = append(tried, scopes)
				for _, missing := range scopes {
					tried = append(tried, slices.DeleteFunc(auth.AllScopes(), func(s auth.Scope) bool { return s == missing }))
				}
			}
			for _, scopes := range tried {
				allowed := slices.ContainsFunc(ways, func(way []string) bool {
					return !slices.ContainsFunc(way, func(s string) bool { return !slices.Contains(scopes, auth.Scope(s)) })
				})
				got := send(target, nil, bearer(keyWith(scopes)))
				if (got == http.StatusForbidden) == allowed {
					t.Errorf("a key with scopes %v answered %d; the document lets it in: %v", scopes, got, allowed)
				}
			}
			for _, status := range []int{http.StatusForbidden, http.StatusInternalServerError, http.StatusServiceUnavailable} {
				if !op.Documents(status) {
					t.Errorf("the document does not list %d, which every operation that takes a key may answer", status)
				}
			}
			if !write {
				return
			}
			idem := map[string]string{"Authorization": "Bearer " + h.Key, "Idempotency-Key": uuid.NewString()}
			// A first answer of 500 or above is not kept (the request runs
			// again), so only a kept one makes the second a mismatch.
			if first := send(target, []byte(`{"first":1}`), idem); first < 500 {
				want("an Idempotency-Key reused for another body", send(target, []byte(`{"second":2}`), idem), http.StatusUnprocessableEntity)
			}
			if !op.Documents(http.StatusConflict) {
				t.Errorf("the document does not list 409, which a write answers while its Idempotency-Key is in use")
			}
		})
	}
}

// concretePath fills a documented path's parameters with values of their
// form (ids no one holds).
func concretePath(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		switch {
		case !strings.HasPrefix(p, "{"):
		case p == "{path}":
			parts[i] = "anything"
		case "/"+parts[1]+"/" == websub.CallbackPath:
			parts[i] = strings.Repeat("A", 43) // a callback id's form
		default:
			parts[i] = uuid.NewString()
		}
	}
	return strings.Join(parts, "/")
}
