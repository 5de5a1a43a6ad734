package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// settingName is how the service's environment settings are spelled in
// its source.
var settingName = regexp.MustCompile(`"(FEEDSVC_[A-Z0-9_]+)"`)

// settingsInSource lists every FEEDSVC_ setting the code reads (test files,
// the test kits only tests import (testkit, the event store's contract
// suite), and benchmarks aside).
func settingsInSource(t *testing.T) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bench" || d.Name() == "testdata" || path == filepath.Join("..", "..", "testkit") || path == filepath.Join("..", "..", "eventstore", "storetest")) && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range settingName.FindAllStringSubmatch(string(src), -1) {
			if !slices.Contains(names, m[1]) {
				names = append(names, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func TestEverySettingTheCodeReadsIsNamedInTheUsageAndTheOperatingGuide(t *testing.T) {
	readme, err := os.ReadFile("../../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	names := settingsInSource(t)
	if len(names) < 10 {
		t.Fatalf("found only %d settings in the source (%v); the scan is broken", len(names), names)
	}
	for _, name := range names {
		if !strings.Contains(usage, name) {
			t.Errorf("%s is read by the code but missing from `feedsvc -h`", name)
		}
		if !strings.Contains(string(readme), "`"+name+"`") {
			t.Errorf("%s is read by the code but not documented in docs/operating.md", name)
		}
	}
}
