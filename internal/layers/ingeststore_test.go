package layers

import (
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// sqlOwners are the packages under ingest that may hold SQL, each with
// why: the crawler's store and the read models and stores of their own
// tables. Every other package under ingest asks them.
var sqlOwners = map[string]string{
	"ingest/crawlstate":  "the crawler's store: every statement on its tables",
	"ingest/attachments": "the attachments read model: its projector and queries",
	"ingest/websub":      "the WebSub subscriber: its subscriptions and pushes, and the condition it answers the scheduler with",
}

// The crawler's state has one owner: no file of package ingest, nor of its
// subpackages other than those in sqlOwners, holds SQL. A file holds SQL
// when it calls into the database's drivers (bun, pgx, database/sql) to
// run a statement, or when a string in it reads as SQL or names a table
// of the schema. Tests may look at the database; the crawl may not.
func TestNoIngestFileOutsideItsStoreAndReadModelsHoldsSQL(t *testing.T) {
	tables := tableNames(schemaTables(t))
	pkgs, err := packages.Load(&packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
	}, module+"/ingest/...")
	if err != nil {
		t.Fatalf("load the ingest packages: %v", err)
	}
	checked := 0
	for _, pkg := range pkgs {
		if len(pkg.Errors) > 0 {
			t.Fatalf("load %s: %v", pkg.PkgPath, pkg.Errors)
		}
		rel := strings.TrimPrefix(pkg.PkgPath, module+"/")
		if _, ok := sqlOwners[rel]; ok || strings.HasSuffix(rel, "/migrations") || rel == "ingest/migrations" {
			continue // an owner of tables, or its schema
		}
		checked++
		for _, f := range pkg.Syntax {
			name := filepath.Base(pkg.Fset.Position(f.Pos()).Filename)
			for _, found := range sqlIn(pkg.Fset, pkg.TypesInfo, f, tables.MatchString) {
				t.Errorf("%s/%s:%d %s: ask the crawler's store (ingest/crawlstate) or a read model's queries", rel, name, found.line, found.what)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d ingest packages: the scan is broken", checked)
	}
}

// databasePackages run statements: a call of a function or method of
// theirs runs SQL.
var databasePackages = []string{"github.com/uptrace/bun", "github.com/jackc/pgx", "database/sql"}

type sqlUse struct {
	what string
	line int
}

// sqlIn lists what holds SQL in a file: calls into databasePackages, and
// strings that read as SQL or that namesTable says name a table.
func sqlIn(fset *token.FileSet, info *types.Info, f *ast.File, namesTable func(string) bool) []sqlUse {
	var out []sqlUse
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			return false // import paths are no SQL
		case *ast.CallExpr:
			var id *ast.Ident
			switch fun := n.Fun.(type) {
			case *ast.SelectorExpr:
				id = fun.Sel
			case *ast.Ident:
				id = fun
			}
			if id == nil {
				return true
			}
			fn, ok := info.Uses[id].(*types.Func)
			if !ok || fn.Pkg() == nil {
				return true
			}
			for _, db := range databasePackages {
				if p := fn.Pkg().Path(); p == db || strings.HasPrefix(p, db+"/") {
					out = append(out, sqlUse{what: "calls " + p + "." + fn.Name(), line: fset.Position(n.Pos()).Line})
				}
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(n.Value)
			if err != nil {
				return true
			}
			switch {
			case sqlStatement.MatchString(s):
				out = append(out, sqlUse{what: "holds SQL " + strconv.Quote(s), line: fset.Position(n.Pos()).Line})
			case namesTable(s):
				out = append(out, sqlUse{what: "names a table in " + strconv.Quote(s), line: fset.Position(n.Pos()).Line})
			}
		}
		return true
	})
	return out
}
