// Package layers holds the test that keeps the house's imports running one
// way, down: a package may import packages of its own floor or below, never
// above. The floors are the design card's: the domain and the stores at the
// bottom, then what writes (commands), what reads (projections and read
// models), what talks to the outside world (ingest, webhook), the HTTP API,
// and the wiring on top.
package layers

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/feedsvc/feedsvc"

// floors lists path prefixes (relative to the module) from the bottom up;
// the longest matching prefix decides a package's floor.
var floors = [][]string{
	{"domain", "eventstore", "internal/backoff", "internal/lease", "internal/safehttp", "internal/database", "internal/pgnotify",
		"internal/logctx", "internal/gazetteer", "internal/metrics", "internal/migrate", "internal/idempotency", "internal/auth", "internal/uuidtext",
		"http/openapi", "ingest/document",
		// The one polling helper of tests imports only the standard
		// library, so test kits of every floor (eventstore/storetest) use it.
		"testkit/wait",
		// Runs outside calendar readers on a test's calendar, with the
		// standard library alone, for the tests of every floor.
		"testkit/icaltools"},
	{"commands"},
	{"projections", "readmodel"},
	{"ingest", "webhook"},
	{"http"},
	{"service", "testkit", "internal/layers", "cmd", "bench", "docs"},
}

func floorOf(pkg string) (int, bool) {
	rel, ok := strings.CutPrefix(pkg, module+"/")
	if !ok {
		return 0, false
	}
	best, floor := -1, 0
	for i, prefixes := range floors {
		for _, p := range prefixes {
			if (rel == p || strings.HasPrefix(rel, p+"/")) && len(p) > best {
				best, floor = len(p), i
			}
		}
	}
	return floor, best >= 0
}

func TestImportsRunDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath           string
			Imports, TestImports []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		from, ok := floorOf(p.ImportPath)
		if !ok {
			t.Errorf("package %s is on no floor: add it to floors", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			to, ok := floorOf(imp)
			if ok && to > from {
				t.Errorf("%s (floor %d) imports %s (floor %d): imports must run down", p.ImportPath, from, imp, to)
			}
		}
	}
}
