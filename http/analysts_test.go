package http_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// recipe is the DuckDB statement of docs/analysts.md, between its markers.
func recipe(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "analysts.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- recipe:begin -->")
	body, _, ok2 := strings.Cut(rest, "<!-- recipe:end -->")
	if !ok || !ok2 {
		t.Fatal("docs/analysts.md has no recipe between its markers")
	}
	body = strings.TrimSpace(body)
	body = strings.TrimPrefix(body, "```sql")
	return strings.TrimSuffix(strings.TrimSpace(body), "```")
}

func TestTheAnalystsRecipeRebuildsTheFeedInsightsFromTheLog(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	servicetest.WriteFeedbackHistory(h, 5)
	logCaughtUp(t, h)

	// The log, read through GET /log as the recipe's loop reads it.
	var lines []string
	for _, e := range readLogOver(t, h, h.Key, nil, 1000) {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	file := filepath.Join(t.TempDir(), "log.ndjson")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sql := recipe(t)
	if !strings.Contains(sql, "'log.ndjson'") {
		t.Fatalf("the recipe does not read log.ndjson:\n%s", sql)
	}
	got := duckDB(t, strings.Replace(sql, "'log.ndjson'", "'"+file+"'", 1)).Rows

	data := wantDataObject(t, as(h, h.Key).do(t, "GET", "/insights/feedback?groupBy=feed&limit=100", nil), 200)
	want := data["groups"].([]any)
	if len(want) < 2 {
		t.Fatalf("the insights have %d groups: too few to tell", len(want))
	}
	if len(got) != len(want) {
		t.Fatalf("the recipe gives %d groups, the insights %d:\n%v\n%v", len(got), len(want), got, want)
	}
	for i, w := range want {
		g := w.(map[string]any)
		for _, k := range []string{"key", "positive", "negative", "neutral", "total", "itemsRated", "items"} {
			if jsonNum(got[i][k]) != jsonNum(g[k]) {
				t.Errorf("group %d %s: the recipe says %v, the insights %v", i, k, got[i][k], g[k])
			}
		}
	}
}
