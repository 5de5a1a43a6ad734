// Command gen writes service/projectors/projectors_gen.go, the list of
// every projector the service runs: each exported struct type of the module
// (outside tests) that declares the four methods of projections.Projector
// on its value. `go generate ./service/projectors` runs it; the test
// beside it fails when the written list is stale.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// out is where the list is written, relative to the module root.
const out = "service/projectors/projectors_gen.go"

func main() {
	root, err := moduleRoot()
	if err == nil {
		var src []byte
		if src, err = generate(root); err == nil {
			err = os.WriteFile(filepath.Join(root, out), src, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// moduleRoot is the nearest directory at or above the working directory
// with a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find the module root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// projector is one found projector type.
type projector struct {
	importPath, pkg, typ string
}

// methods a projector declares (projections.Projector).
var methods = []string{"Name", "Version", "Tables", "Handlers"}

// generate returns the source of the list for the module at root.
func generate(root string) ([]byte, error) {
	mod, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	var found []projector
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		ps, err := projectorsIn(path, mod+"/"+filepath.ToSlash(rel))
		found = append(found, ps...)
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(found, func(a, b projector) int {
		return strings.Compare(a.importPath+"."+a.typ, b.importPath+"."+b.typ)
	})
	return render(found)
}

func modulePath(root string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("read go.mod: %w", err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.TrimSpace(p), nil
		}
	}
	return "", errors.New("read go.mod: no module line")
}

// projectorsIn finds the projector types of the package in dir (its files
// for the default build, tests excluded).
func projectorsIn(dir, importPath string) ([]projector, error) {
	bp, err := build.Default.ImportDir(dir, 0)
	var noGo *build.NoGoError
	if errors.As(err, &noGo) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read package %s: %w", importPath, err)
	}
	if bp.Name == "main" {
		return nil, nil
	}
	fset := token.NewFileSet()
	structs := map[string]bool{}
	declared := map[string]map[string]bool{} // type -> value-receiver methods
	for _, f := range bp.GoFiles {
		file, err := parser.ParseFile(fset, filepath.Join(dir, f), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", filepath.Join(importPath, f), err)
		}
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok && ts.Name.IsExported() && ts.TypeParams == nil {
						_, isStruct := ts.Type.(*ast.StructType)
						structs[ts.Name.Name] = isStruct
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) != 1 || !slices.Contains(methods, d.Name.Name) {
					continue
				}
				// Only value receivers: a zero value of the type is then a
				// projector.
				if recv, ok := d.Recv.List[0].Type.(*ast.Ident); ok {
					if declared[recv.Name] == nil {
						declared[recv.Name] = map[string]bool{}
					}
					declared[recv.Name][d.Name.Name] = true
				}
			}
		}
	}
	var out []projector
	for typ, ms := range declared {
		isStruct, exported := structs[typ]
		if !exported || len(ms) != len(methods) {
			continue
		}
		if !isStruct {
			return nil, fmt.Errorf("%s.%s declares a projector's methods but is no struct: the list builds projectors as %[2]s{}", importPath, typ)
		}
		out = append(out, projector{importPath: importPath, pkg: bp.Name, typ: typ})
	}
	return out, nil
}

// render writes the list, naming each package by its own name (with a
// number when two share one).
func render(found []projector) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`// Code generated by go run ./gen; DO NOT EDIT.

package projectors

import (
	"github.com/feedsvc/feedsvc/projections"
`)
	alias := map[string]string{} // import path -> name in the file
	taken := map[string]bool{"projections": true}
	for _, p := range found {
		if _, ok := alias[p.importPath]; ok {
			continue
		}
		name := p.pkg
		for n := 2; taken[name]; n++ {
			name = fmt.Sprintf("%s%d", p.pkg, n)
		}
		taken[name], alias[p.importPath] = true, name
		if name == p.pkg {
			fmt.Fprintf(&b, "\t%q\n", p.importPath)
		} else {
			fmt.Fprintf(&b, "\t%s %q\n", name, p.importPath)
		}
	}
	b.WriteString(`)

// All returns every projector the service runs: the projector types the
// module declares, found by go generate (gen).
func All() []projections.Projector {
	return []projections.Projector{
`)
	for _, p := range found {
		fmt.Fprintf(&b, "\t\t%s.%s{},\n", alias[p.importPath], p.typ)
	}
	b.WriteString("\t}\n}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format the list: %w", err)
	}
	return src, nil
}
