package released_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	"github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"

	"github.com/feedsvc/feedsvc/http/openapi"
)

// changelogPath is the repository's CHANGELOG.md, from this folder.
const changelogPath = "../../../CHANGELOG.md"

// The served document keeps every promise of the released one, or says it
// breaks them: a new major info.version and a CHANGELOG.md entry for it.
// FEEDSVC_UPDATE_BASELINE=1 (make openapi-baseline) releases the served
// document as the baseline of its major, once it passes.
func TestTheServedDocumentBreaksNothingTheReleasedOneOffers(t *testing.T) {
	baselinePath, baselineMajor := newestBaseline(t)
	baseline, err := os.ReadFile(baselinePath)
	if err != nil {
		t.Fatal(err)
	}
	served, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	changelog, err := os.ReadFile(changelogPath)
	if err != nil {
		t.Fatalf("read CHANGELOG.md: %v", err)
	}
	if err := judge(baseline, served, string(changelog)); err != nil {
		t.Fatalf("the served document against the released %s:\n%v", filepath.Base(baselinePath), err)
	}
	servedMajor, err := major(served)
	if err != nil {
		t.Fatal(err)
	}
	if servedMajor < baselineMajor {
		t.Fatalf("info.version's major %d is below the released %d", servedMajor, baselineMajor)
	}
	if os.Getenv("FEEDSVC_UPDATE_BASELINE") != "" {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, served, "", "  "); err != nil {
			t.Fatal(err)
		}
		pretty.WriteByte('\n')
		name := fmt.Sprintf("openapi-%d.json", servedMajor)
		if err := os.WriteFile(name, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("released the served document as %s", name)
	}
}

// The check is only worth its keep if it fails: each breaking edit of the
// served document is reported under the rule that names it, and edits
// that break no client are not reported at all.
func TestTheCheckReportsBreakingEditsAndOnlyThem(t *testing.T) {
	served, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(t *testing.T, doc map[string]any)
		// want is the oasdiff rule id reported, or "" for nothing.
		want string
	}{
		{"renaming a path parameter (event feeds' {feedId} back to {id}) breaks", func(t *testing.T, doc map[string]any) {
			paths := obj(t, doc, "paths")
			for p, item := range paths {
				if strings.HasPrefix(p, "/feeds/events/{feedId}") {
					delete(paths, p)
					paths[strings.Replace(p, "{feedId}", "{id}", 1)] = item
				}
			}
			obj(t, doc, "components", "parameters", "EventFeedId")["name"] = "id"
		}, "api-path-removed-without-deprecation"},
		{"removing a path breaks", func(t *testing.T, doc map[string]any) {
			delete(obj(t, doc, "paths"), "/webhooks/test")
		}, "api-path-removed-without-deprecation"},
		{"removing a response property breaks", func(t *testing.T, doc map[string]any) {
			webhook := obj(t, doc, "components", "schemas", "Webhook")
			delete(obj(t, webhook, "properties"), "url")
			webhook["required"] = slices.DeleteFunc(webhook["required"].([]any), func(v any) bool { return v == "url" })
		}, "response-required-property-removed"},
		{"narrowing a query parameter's enum breaks", func(t *testing.T, doc map[string]any) {
			for _, p := range obj(t, doc, "paths", "/insights/feedback", "get")["parameters"].([]any) {
				if p := p.(map[string]any); p["name"] == "rating" {
					schema := obj(t, p, "schema")
					schema["enum"] = schema["enum"].([]any)[:1]
				}
			}
		}, "request-parameter-enum-value-removed"},
		{"narrowing a request property's type breaks", func(t *testing.T, doc map[string]any) {
			obj(t, doc, "components", "schemas", "WebhookCreate", "properties", "url")["type"] = "integer"
		}, "request-property-type-changed"},
		{"a new required request property breaks", func(t *testing.T, doc map[string]any) {
			create := obj(t, doc, "components", "schemas", "WebhookCreate")
			obj(t, create, "properties")["label"] = map[string]any{"type": "string"}
			create["required"] = append(create["required"].([]any), "label")
		}, "new-required-request-property"},
		{"a new optional property breaks nothing", func(t *testing.T, doc map[string]any) {
			obj(t, doc, "components", "schemas", "Webhook", "properties")["label"] = map[string]any{"type": "string"}
			obj(t, doc, "components", "schemas", "WebhookCreate", "properties")["label"] = map[string]any{"type": "string"}
		}, ""},
		{"a new type of history entry breaks (the entries are a closed oneOf; copy facts are apart, under include=copies)", func(t *testing.T, doc map[string]any) {
			schemas := obj(t, doc, "components", "schemas")
			raw, _ := json.Marshal(schemas["HistoryEventItemLinked"])
			var added map[string]any
			if err := json.Unmarshal(raw, &added); err != nil {
				t.Fatal(err)
			}
			added["title"] = "EventItemCopyFound"
			obj(t, added, "properties", "type")["const"] = "EventItemCopyFound"
			schemas["HistoryEventItemCopyFound"] = added
			entry := obj(t, schemas, "HistoryEntry")
			entry["oneOf"] = append(entry["oneOf"].([]any), map[string]any{"$ref": "#/components/schemas/HistoryEventItemCopyFound"})
			obj(t, entry, "discriminator", "mapping")["EventItemCopyFound"] = "#/components/schemas/HistoryEventItemCopyFound"
		}, "response-property-one-of-added"},
		{"a new path breaks nothing", func(t *testing.T, doc map[string]any) {
			var copied map[string]any
			raw, _ := json.Marshal(obj(t, doc, "paths", "/webhooks/test"))
			if err := json.Unmarshal(raw, &copied); err != nil {
				t.Fatal(err)
			}
			obj(t, copied, "post")["operationId"] = "pingWebhook"
			obj(t, doc, "paths")["/webhooks/ping"] = copied
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			edited := edit(t, served, c.edit)
			changes, err := breakingChanges(served, edited)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, ch := range changes {
				ids = append(ids, ch.GetId())
			}
			switch {
			case c.want == "" && len(ids) > 0:
				t.Fatalf("reported as breaking: %v", ids)
			case c.want != "" && !slices.Contains(ids, c.want):
				t.Fatalf("want %s reported, got %v", c.want, ids)
			}
		})
	}
}

// A breaking change passes only with a new major info.version and a
// CHANGELOG.md entry for that version that says it breaks.
func TestABreakingChangeNeedsANewMajorVersionAndAChangelogEntry(t *testing.T) {
	served, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	servedMajor, err := major(served)
	if err != nil {
		t.Fatal(err)
	}
	next := strconv.Itoa(servedMajor + 1)
	breaking := func(version string) []byte {
		return edit(t, served, func(t *testing.T, doc map[string]any) {
			delete(obj(t, doc, "paths"), "/webhooks/test")
			obj(t, doc, "info")["version"] = version
		})
	}
	entry := "# Changelog\n\n## [" + next + "] - 2027-01-01\n\n### Changed\n\n- **Breaking:** `POST /webhooks/test` is gone.\n"
	cases := []struct {
		name      string
		version   string
		changelog string
		pass      bool
	}{
		{"the same version is refused", fmt.Sprint(servedMajor), entry, false},
		{"a new major without a CHANGELOG entry is refused", next, "# Changelog\n", false},
		{"a new major whose entry does not say it breaks is refused", next, "# Changelog\n\n## [" + next + "] - 2027-01-01\n\n- Tidier.\n", false},
		{"a new major with a CHANGELOG entry saying it breaks passes", next, entry, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := judge(served, breaking(c.version), c.changelog)
			if (err == nil) != c.pass {
				t.Fatalf("pass %v, want %v: %v", err == nil, c.pass, err)
			}
		})
	}
}

// judge says whether revision may replace baseline: it breaks nothing, or
// its info.version has a new major and the changelog's entry for that
// version says it breaks.
func judge(baseline, revision []byte, changelog string) error {
	changes, err := breakingChanges(baseline, revision)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	l := checker.NewDefaultLocalizer()
	var list strings.Builder
	for _, c := range changes {
		fmt.Fprintf(&list, "  %s %s: %s (%s)\n", c.GetOperation(), c.GetPath(), c.GetUncolorizedText(l), c.GetId())
	}
	baseMajor, err := major(baseline)
	if err != nil {
		return err
	}
	revMajor, err := major(revision)
	if err != nil {
		return err
	}
	if revMajor <= baseMajor {
		return fmt.Errorf("%d breaking changes, and info.version stays at major %d: keep what clients rely on, or release a new major (info.version, CHANGELOG.md; docs/clients.md):\n%s", len(changes), baseMajor, list.String())
	}
	version := infoVersion(revision)
	if !changelogSaysBreaking(changelog, version) {
		return fmt.Errorf("%d breaking changes for info.version %s, and CHANGELOG.md has no \"## [%s]\" entry that says \"Breaking\":\n%s", len(changes), version, version, list.String())
	}
	return nil
}

// breakingChanges are oasdiff's ERR-level findings: what breaks a client
// built against base. Path parameter names count: a generated client
// names its paths with them.
func breakingChanges(base, revision []byte) (checker.Changes, error) {
	s1, err := load.NewSpecInfoFromData(openapi3.NewLoader(), base, "released.json")
	if err != nil {
		return nil, fmt.Errorf("load the released document: %w", err)
	}
	s2, err := load.NewSpecInfoFromData(openapi3.NewLoader(), revision, "served.json")
	if err != nil {
		return nil, fmt.Errorf("load the served document: %w", err)
	}
	cfg := diff.NewConfig()
	cfg.IncludePathParams = true
	d, sources, err := diff.GetWithOperationsSourcesMap(cfg, s1, s2)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	return checker.CheckBackwardCompatibilityUntilLevel(checker.NewConfig(checker.GetAllChecks()), d, sources, checker.ERR), nil
}

// changelogSaysBreaking: the changelog has a "## [version]" section (Keep a
// Changelog's form) whose text says "breaking".
func changelogSaysBreaking(changelog, version string) bool {
	heading := regexp.MustCompile(`(?m)^## \[` + regexp.QuoteMeta(version) + `\]`)
	loc := heading.FindStringIndex(changelog)
	if loc == nil {
		return false
	}
	section := changelog[loc[1]:]
	if next := regexp.MustCompile(`(?m)^## `).FindStringIndex(section); next != nil {
		section = section[:next[0]]
	}
	return strings.Contains(strings.ToLower(section), "breaking")
}

func infoVersion(doc []byte) string {
	var d struct {
		Info struct {
			Version string `json:"version"`
		} `json:"info"`
	}
	_ = json.Unmarshal(doc, &d)
	return d.Info.Version
}

// major is info.version's leading number ("1", "2.3.0" -> 2).
func major(doc []byte) (int, error) {
	v := infoVersion(doc)
	m := regexp.MustCompile(`^v?(\d+)`).FindStringSubmatch(v)
	if m == nil {
		return 0, fmt.Errorf("info.version %q does not start with a major version number", v)
	}
	return strconv.Atoi(m[1])
}

// newestBaseline is the openapi-<major>.json with the highest major.
func newestBaseline(t *testing.T) (string, int) {
	t.Helper()
	names, err := filepath.Glob("openapi-*.json")
	if err != nil {
		t.Fatal(err)
	}
	best, bestMajor := "", -1
	for _, name := range names {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "openapi-"), ".json"))
		if err == nil && n > bestMajor {
			best, bestMajor = name, n
		}
	}
	if best == "" {
		t.Fatal("no released document (openapi-<major>.json) here: release one with make openapi-baseline")
	}
	return best, bestMajor
}

// edit applies fn to a copy of doc.
func edit(t *testing.T, doc []byte, fn func(*testing.T, map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	fn(t, m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// obj walks m by keys to an object, failing the test if one is missing.
func obj(t *testing.T, m map[string]any, keys ...string) map[string]any {
	t.Helper()
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			t.Fatalf("the document has no object at %q", strings.Join(keys, "/"))
		}
		m = next
	}
	return m
}
