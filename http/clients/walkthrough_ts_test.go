package clients_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The README's walkthrough with the TypeScript client: openapi-typescript
// types the served document (build/feedsvc.d.ts), tsc --strict compiles
// ts/ against them and openapi-fetch, and node runs it.
func tsWalkthrough(t *testing.T, s *service, key string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run(t, ctx, ".", npmTool(t, "openapi-typescript"), "build/openapi.json", "-o", "build/feedsvc.d.ts")
	run(t, ctx, ".", npmTool(t, "tsc"), "-p", "ts/tsconfig.json")
	out := run(t, ctx, ".", "node", "build/ts/ts/walkthrough.js", s.base, key, s.siteHost())
	if !strings.Contains(out, "walkthrough done") {
		t.Fatalf("the walkthrough did not finish:\n%s", out)
	}
}
