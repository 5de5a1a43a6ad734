package clients_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// An integrator's first hour, against one real `feedsvc serve`: the
// served document lints clean, and the walkthrough runs with a generated
// Go client and a generated TypeScript client, each as its own
// organization.
func TestAnIntegratorsFirstHourWorks(t *testing.T) {
	s := serve(t)
	resp, err := http.Get(s.base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %v", resp.StatusCode, err)
	}
	// The linters' configurations name the file by this path.
	if err := os.MkdirAll("build", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("build", "openapi.json"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	goKey, tsKey := s.key(t, "go-client"), s.key(t, "ts-client")

	t.Run("the served document lints clean under Redocly and Spectral", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out := run(t, ctx, ".", npmTool(t, "redocly"), "lint", "--config", "redocly.yaml", "build/openapi.json")
		if regexp.MustCompile(`You have \d+ warnings?`).MatchString(out) {
			t.Fatalf("redocly lint warns (fix it, or list it with its reason in .redocly.lint-ignore.yaml):\n%s", out)
		}
		run(t, ctx, ".", npmTool(t, "spectral"), "lint", "--ruleset", ".spectral.yaml", "--fail-severity", "warn", "build/openapi.json")
	})
	t.Run("the generated Go client runs the walkthrough", func(t *testing.T) {
		t.Parallel()
		rec := &recorder{}
		goWalkthrough(t, s, goKey, rec)
		checkSamples(t, s, doc, rec)
	})
	t.Run("the generated TypeScript client runs the walkthrough under tsc --strict", func(t *testing.T) {
		t.Parallel()
		tsWalkthrough(t, s, tsKey)
	})
	t.Run("the npm package @feedsvc/client, packed and installed, works against the service", func(t *testing.T) {
		t.Parallel()
		tsPackage(t, s, s.key(t, "ts-package"))
	})
}
