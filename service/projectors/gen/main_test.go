package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The list is derived: adding a read model's folder, or removing one,
// leaves it stale until go generate runs, and this test says so.
func TestTheWrittenListOfProjectorsIsTheGeneratedOne(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, out))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate ./service/projectors\nwant:\n%s", out, want)
	}
}

func TestAnExportedStructDeclaringTheFourMethodsOnItsValueIsAProjector(t *testing.T) {
	dir := t.TempDir()
	src := `package probe

type Projector struct{}
func (Projector) Name() string { return "" }
func (Projector) Version() int { return 1 }
func (Projector) Tables() []string { return nil }
func (Projector) Handlers() []int { return nil }

type pointer struct{}
func (*pointer) Name() string { return "" }
func (*pointer) Version() int { return 1 }
func (*pointer) Tables() []string { return nil }
func (*pointer) Handlers() []int { return nil }

type Partial struct{}
func (Partial) Name() string { return "" }
`
	if err := os.WriteFile(filepath.Join(dir, "probe.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	found, err := projectorsIn(dir, "example.com/probe")
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].typ != "Projector" || found[0].pkg != "probe" {
		t.Errorf("found %v, want only probe.Projector", found)
	}
	out, err := render(found)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "probe.Projector{},") {
		t.Errorf("the list does not build it:\n%s", out)
	}
}
