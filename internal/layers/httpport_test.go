package layers

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// databaseImports are the packages that reach the database; http reaches it
// only through the query objects the wiring hands it.
var databaseImports = []string{"github.com/uptrace/bun", "github.com/jackc/pgx", "database/sql"}

// sqlStatement matches text that reads as a SQL statement.
var sqlStatement = regexp.MustCompile(`(?is)\bselect\b.+\bfrom\b|\binsert\s+into\b|\bupdate\s+\w+\s+set\b|\bdelete\s+from\b|\b(create|alter|drop|truncate)\s+table\b`)

// http is a port: the wiring (service/service.go) hands it the read models'
// queries, so none of its packages imports the database's drivers, and no
// string in them (tags included) names a table of the schema or reads as
// SQL. Tests may look at the database to check what a request did; the
// code that serves requests may not.
func TestHTTPHoldsNoDatabaseHandleAndNamesNoTable(t *testing.T) {
	tables := tableNames(schemaTables(t))
	out, err := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,Imports", module+"/http/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	packages := 0
	for dec.More() {
		var p struct {
			ImportPath, Dir string
			GoFiles         []string
			Imports         []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		packages++
		for _, imp := range p.Imports {
			for _, db := range databaseImports {
				if imp == db || strings.HasPrefix(imp, db+"/") {
					t.Errorf("%s imports %s: http reads through the query objects the wiring hands it", p.ImportPath, imp)
				}
			}
		}
		for _, name := range p.GoFiles {
			for _, lit := range stringsOf(t, filepath.Join(p.Dir, name)) {
				if m := tables.FindStringSubmatch(lit.text); m != nil {
					t.Errorf("%s/%s:%d names the table %s: %q", p.ImportPath, name, lit.line, m[1], lit.text)
				}
				if sqlStatement.MatchString(lit.text) {
					t.Errorf("%s/%s:%d reads as SQL: %q", p.ImportPath, name, lit.line, lit.text)
				}
			}
		}
	}
	if packages == 0 {
		t.Fatal("go list found no http package")
	}
}

// schemaTables are the tables the service's schema makes, read from a
// database migrated with it.
func schemaTables(t *testing.T) []string {
	t.Helper()
	db, _ := testdb.New(t)
	var tables []string
	if err := db.Bun.NewRaw("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()").
		Scan(context.Background(), &tables); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("the schema makes %d tables: %v", len(tables), tables)
	}
	return tables
}

// tableNames matches the names of tables that have an underscore
// ("news_items") anywhere in a string, as words. The tables of a plain
// word ("feeds", "sources", "webhooks") are the API's words too, in its
// paths, messages and document: a string names one of them in SQL, which
// sqlStatement finds.
func tableNames(tables []string) *regexp.Regexp {
	var names []string
	for _, table := range tables {
		if strings.Contains(table, "_") {
			names = append(names, regexp.QuoteMeta(table))
		}
	}
	return regexp.MustCompile(`(?:^|[^A-Za-z0-9_])(` + strings.Join(names, "|") + `)(?:$|[^A-Za-z0-9_])`)
}

type literal struct {
	text string
	line int
}

// stringsOf lists the string literals of a Go file, struct tags included.
func stringsOf(t *testing.T, path string) []literal {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []literal
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, literal{text: s, line: fset.Position(lit.Pos()).Line})
			}
		}
		return true
	})
	return out
}
