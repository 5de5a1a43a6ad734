package clients_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/http/clients/go/feedsvc"
	"github.com/feedsvc/feedsvc/http/openapi"
)

// The TypeScript package @feedsvc/client (ts/package): its types are
// openapi-typescript's output for the document (src/feedsvc.gen.ts),
// its version is the document's, and, built with tsc and packed with
// npm pack, it installs into a project of its own and works against a
// real `feedsvc serve` (tsPackage, a subtest of
// TestAnIntegratorsFirstHourWorks).

// tsPackageDir is the package's folder.
var tsPackageDir = filepath.Join("ts", "package")

// documentVersion is the document's info.version.
func documentVersion(t *testing.T) string {
	t.Helper()
	raw, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info struct {
			Version string `json:"version"`
		} `json:"info"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Info.Version
}

// semver is a document version as npm's semantic version: "1" is 1.0.0,
// "1.2" 1.2.0, "1.2.3" itself.
func semver(v string) string {
	switch strings.Count(v, ".") {
	case 0:
		return v + ".0.0"
	case 1:
		return v + ".0"
	}
	return v
}

// Both clients say which document they speak: the npm package's version
// (package.json and the version it exports) is the document's
// info.version as a semantic version, and the Go client's Version the
// document's (checked against the document itself in go/feedsvc too).
func TestTheTypeScriptPackageIsVersionedWithTheDocument(t *testing.T) {
	want := semver(documentVersion(t))
	raw, err := os.ReadFile(filepath.Join(tsPackageDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Name, Version string }
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Version != want {
		t.Errorf("%s's version is %q, the document's %q", pkg.Name, pkg.Version, want)
	}
	index, err := os.ReadFile(filepath.Join(tsPackageDir, "src", "index.ts"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`export const version = "([^"]*)";`).FindSubmatch(index)
	if m == nil || string(m[1]) != want {
		t.Errorf("src/index.ts exports version %q, want %q", m, want)
	}
	if semver(feedsvc.Version) != want {
		t.Errorf("the Go client's Version %q is not the document's %q", feedsvc.Version, want)
	}
}

// The package's types are openapi-typescript's output for the document,
// unedited: making them again changes nothing. FEEDSVC_UPDATE_CLIENT=1
// (make client) writes them instead.
func TestTheTypeScriptPackagesTypesAreOpenapiTypescriptsOutput(t *testing.T) {
	tool := npmTool(t, "openapi-typescript")
	doc, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run(t, ctx, dir, tool, "openapi.json", "-o", "feedsvc.gen.ts")
	made, err := os.ReadFile(filepath.Join(dir, "feedsvc.gen.ts"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(tsPackageDir, "src", "feedsvc.gen.ts")
	if os.Getenv("FEEDSVC_UPDATE_CLIENT") != "" {
		if err := os.WriteFile(path, made, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, made) {
		t.Fatalf("%s is not openapi-typescript's output for the document: regenerate it with make client", path)
	}
}

// tsPackage is what an integrator does with the npm package: build it
// (tsc, declarations included), npm pack it, install the tarball into a
// project of their own (openapi-fetch comes from the registry, or npm's
// cache), and compile and run a program against the service with it
// (ts/package-check).
func tsPackage(t *testing.T, s *service, key string) {
	tsc := npmTool(t, "tsc")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pkg, err := filepath.Abs(tsPackageDir)
	if err != nil {
		t.Fatal(err)
	}
	// A dist/ left from an older build must not ride in the tarball.
	if err := os.RemoveAll(filepath.Join(pkg, "dist")); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, pkg, tsc, "-p", "tsconfig.json")
	tarballs := t.TempDir()
	run(t, ctx, pkg, "npm", "pack", "--pack-destination", tarballs, "--loglevel=error")
	packed, _ := filepath.Glob(filepath.Join(tarballs, "feedsvc-client-*.tgz"))
	if len(packed) != 1 {
		t.Fatalf("npm pack made %q, want one feedsvc-client-<version>.tgz", packed)
	}
	files := run(t, ctx, tarballs, "tar", "-tzf", packed[0])
	for _, want := range []string{"package/dist/index.js", "package/dist/index.d.ts", "package/dist/feedsvc.gen.d.ts", "package/README.md", "package/package.json"} {
		if !strings.Contains(files, want+"\n") {
			t.Fatalf("the tarball has no %s:\n%s", want, files)
		}
	}
	if strings.Contains(files, "package/src/") {
		t.Fatalf("the tarball carries the sources, not only the built output:\n%s", files)
	}

	app := t.TempDir()
	for _, name := range []string{"main.ts", "tsconfig.json"} {
		body, err := os.ReadFile(filepath.Join("ts", "package-check", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(app, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	config := "export const base = " + strconv.Quote(s.base) + ";\nexport const key = " + strconv.Quote(key) +
		";\nexport const expectedVersion = " + strconv.Quote(semver(documentVersion(t))) + ";\n"
	if err := os.WriteFile(filepath.Join(app, "config.ts"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "package.json"), []byte(`{"name": "integrator-app", "private": true, "type": "module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, app, "npm", "install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", packed[0])
	run(t, ctx, app, tsc, "-p", "tsconfig.json")
	if out := run(t, ctx, app, "node", "main.js"); !strings.Contains(out, "package works") {
		t.Fatalf("the program did not finish:\n%s", out)
	}
}
