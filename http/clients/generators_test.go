package clients_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/oapi-codegen/oapi-codegen/v2/pkg/codegen"
	"github.com/oapi-codegen/oapi-codegen/v2/pkg/util"
	"golang.org/x/mod/modfile"

	"github.com/feedsvc/feedsvc/http/openapi"
)

// An integrator who knows nothing of this repository runs
//
//	oapi-codegen -generate types,client -package feedsvcapi -o feedsvcapi/api.gen.go openapi.json
//
// on the served document, in a module of their own, and builds it. With
// no configuration file, oapi-codegen prunes every component the paths do
// not reach (the project's own client turns that off; an integrator does
// not know to): the document has to build anyway. This does what the
// command does (its flags become this configuration, its loader reads the
// file) and builds the output with `go build` in a fresh module.
func TestOapiCodegensDefaultsBuildFromTheServedDocument(t *testing.T) {
	doc, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	specPath := filepath.Join(mod, "openapi.json")
	if err := os.WriteFile(specPath, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	// The command's loader, with the options it passes when no overlay is
	// configured.
	spec, err := util.LoadSwaggerWithOverlay(specPath, util.LoadSwaggerWithOverlayOpts{Strict: true})
	if err != nil {
		t.Fatalf("oapi-codegen cannot load the document: %v", err)
	}
	// `-generate types,client -package feedsvcapi` and nothing else: the
	// command starts from an empty GenerateOptions, sets these two, and
	// fills in its defaults (pruning stays on).
	cfg := codegen.Configuration{
		PackageName: "feedsvcapi",
		Generate:    codegen.GenerateOptions{Models: true, Client: true},
	}.UpdateDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.OutputOptions.SkipPrune {
		t.Fatal("the configuration under test must prune, as oapi-codegen's defaults do")
	}
	start := time.Now()
	code, err := codegen.Generate(spec, cfg)
	t.Logf("oapi-codegen: %d bytes in %v", len(code), time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("oapi-codegen -generate types,client: %v", err)
	}

	// The integrator's module needs oapi-codegen's runtime: the version this
	// module pins, and this module's go.sum, so that the build checks the
	// same hashes.
	raw, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	ours, err := modfile.Parse("go.mod", raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	gomod := &modfile.File{}
	if err := gomod.AddModuleStmt("example.com/integrator"); err != nil {
		t.Fatal(err)
	}
	if err := gomod.AddGoStmt(ours.Go.Version); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range ours.Require {
		if r.Mod.Path == "github.com/oapi-codegen/runtime" {
			if err := gomod.AddRequire(r.Mod.Path, r.Mod.Version); err != nil {
				t.Fatal(err)
			}
			found = true
		}
	}
	if !found {
		t.Fatal("go.mod does not require github.com/oapi-codegen/runtime, which the generated code imports")
	}
	out, err := gomod.Format()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(mod, "feedsvcapi")
	for name, data := range map[string][]byte{
		filepath.Join(mod, "go.mod"):     out,
		filepath.Join(mod, "go.sum"):     sum,
		filepath.Join(pkg, "api.gen.go"): []byte(code),
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// -mod=mod lets go add the runtime's own requirements to the fresh
	// go.mod, as `go mod tidy` would for the integrator. -trimpath keeps
	// the temporary directory out of the build cache's keys: the output
	// (several MB; the compile takes most of this test's time) is compiled
	// again only when the document changed.
	start = time.Now()
	cmd := exec.CommandContext(ctx, goTool(t), "build", "-mod=mod", "-trimpath", "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of oapi-codegen's default output: %v\n%s", err, b)
	}
	t.Logf("go build: %v", time.Since(start).Round(time.Millisecond))
}

// goTool is the go command on PATH, the one that runs `make test`.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command: %v", err)
	}
	return p
}
