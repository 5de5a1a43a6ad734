package http_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/http/openapi"
	"github.com/feedsvc/feedsvc/http/openapi/openapitest"
	"github.com/feedsvc/feedsvc/internal/servicetest"
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
