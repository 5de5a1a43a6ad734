package http_test

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// duckDB runs sql with the DuckDB engine of the npm package
// @duckdb/node-api, installed in http/clients (`npm ci` there), through
// http/clients/duckdb/query.mjs. Without node or the package the test
// skips, unless FEEDSVC_REQUIRE_NODE=1 (CI) makes that a failure.
func duckDB(t *testing.T, sql string) duckResult {
	t.Helper()
	node, err := exec.LookPath("node")
	script, _ := filepath.Abs(filepath.Join("clients", "duckdb", "query.mjs"))
	if _, statErr := os.Stat(filepath.Join("clients", "node_modules", "@duckdb", "node-api")); err != nil || statErr != nil {
		if os.Getenv("FEEDSVC_REQUIRE_NODE") == "1" {
			t.Fatalf("node or @duckdb/node-api is missing (run npm ci in http/clients): %v %v", err, statErr)
		}
		t.Skip("node or @duckdb/node-api is missing (run npm ci in http/clients)")
	}
	out, err := exec.Command(node, script, sql).CombinedOutput()
	if err != nil {
		t.Fatalf("duckdb %q: %v\n%s", sql, err, out)
	}
	var r duckResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("duckdb's answer is not JSON: %v\n%s", err, out)
	}
	return r
}

type duckResult struct {
	Columns []struct{ Name, Type string }
	Rows    []map[string]any
}

func (r duckResult) types() map[string]string {
	out := map[string]string{}
	for _, c := range r.Columns {
		out[c.Name] = c.Type
	}
	return out
}

// download writes the answer to path of key to a file and returns it.
func download(t *testing.T, h *servicetest.Harness, key, path, name string) string {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := h.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v: %.300s", path, resp.StatusCode, err, body)
	}
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// feedCounts are the insights' counts per feed, "positive/negative/neutral".
func insightCountsByFeed(t *testing.T, h *servicetest.Harness, key, query string) map[string]string {
	t.Helper()
	data := wantDataObject(t, as(h, key).do(t, "GET", "/insights/feedback?groupBy=feed&limit=100"+query, nil), 200)
	out := map[string]string{}
	for _, g := range data["groups"].([]any) {
		m := g.(map[string]any)
		out[m["key"].(string)] = jsonNum(m["positive"]) + "/" + jsonNum(m["negative"]) + "/" + jsonNum(m["neutral"])
	}
	return out
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}

// duckCountsByFeed are the same counts made by DuckDB over an extract.
func duckCountsByFeed(t *testing.T, from string) map[string]string {
	t.Helper()
	r := duckDB(t, `SELECT feed_id::VARCHAR AS feed, count(*) FILTER (rating = 'positive') AS p, count(*) FILTER (rating = 'negative') AS n,
		count(*) FILTER (rating = 'neutral') AS u FROM `+from+` GROUP BY feed_id`)
	out := map[string]string{}
	for _, row := range r.Rows {
		out[row["feed"].(string)] = jsonNum(row["p"]) + "/" + jsonNum(row["n"]) + "/" + jsonNum(row["u"])
	}
	return out
}

func sameCounts(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(want) < 2 {
		t.Fatalf("%s: the insights have %d feeds: too few to tell", what, len(want))
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d feeds, the insights %d: %v / %v", what, len(got), len(want), got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: feed %s counts %s, the insights %s", what, k, got[k], w)
		}
	}
}

func TestExtractsReadBackInDuckDBWithTheirTypesAndTheInsightsCounts(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	hist := servicetest.WriteFeedbackHistory(h, 9)

	feedback := download(t, h, h.Key, "/log/extracts/feedback?format=parquet", "feedback.parquet")
	t.Run("the feedback Parquet keeps UUIDs, zoned timestamps and every documented column", func(t *testing.T) {
		types := duckDB(t, "DESCRIBE SELECT * FROM read_parquet('"+feedback+"')").Rows
		got := map[string]string{}
		for _, r := range types {
			got[r["column_name"].(string)] = r["column_type"].(string)
		}
		want := map[string]string{
			"feedback_id": "UUID", "given_at": "TIMESTAMP WITH TIME ZONE", "rating": "VARCHAR", "comment": "VARCHAR",
			"item_id": "UUID", "feed_kind": "VARCHAR", "item_title": "VARCHAR", "item_url": "VARCHAR",
			"item_added_at": "TIMESTAMP WITH TIME ZONE", "item_published_at": "TIMESTAMP WITH TIME ZONE", "feed_id": "UUID",
			"feed_name": "VARCHAR", "source_id": "UUID", "source_type": "VARCHAR",
		}
		if len(got) != len(want) {
			t.Errorf("columns %v, want %v", got, want)
		}
		for c, ty := range want {
			if got[c] != ty {
				t.Errorf("column %s is %q, want %q", c, got[c], ty)
			}
		}
		r := duckDB(t, "SELECT count(*) FILTER (item_title = '' OR item_url = '') AS blank, count(*) AS n FROM read_parquet('"+feedback+"')")
		if jsonNum(r.Rows[0]["blank"]) != "0" || jsonNum(r.Rows[0]["n"]) == "0" {
			t.Errorf("entries without their item's title or address: %v", r.Rows)
		}
	})
	t.Run("its counts per feed equal GET /insights/feedback's", func(t *testing.T) {
		sameCounts(t, "parquet", duckCountsByFeed(t, "read_parquet('"+feedback+"')"), insightCountsByFeed(t, h, h.Key, ""))
	})
	t.Run("as CSV it reads back with the same counts", func(t *testing.T) {
		file := download(t, h, h.Key, "/log/extracts/feedback?format=csv", "feedback.csv")
		sameCounts(t, "csv", duckCountsByFeed(t, "read_csv('"+file+"')"), insightCountsByFeed(t, h, h.Key, ""))
		types := duckDB(t, "SELECT * FROM read_csv('"+file+"') LIMIT 1").types()
		if types["given_at"] != "TIMESTAMP WITH TIME ZONE" {
			t.Errorf("given_at reads from CSV as %s", types["given_at"])
		}
	})
	t.Run("a time range keeps what the insights keep for it", func(t *testing.T) {
		since, until := hist.Start.Add(36*3600e9).Format("2006-01-02T15:04:05Z"), hist.Start.Add(6*24*3600e9).Format("2006-01-02")
		q := url.Values{"since": {since}, "until": {until}}
		file := download(t, h, h.Key, "/log/extracts/feedback?format=parquet&"+q.Encode(), "range.parquet")
		sameCounts(t, "range", duckCountsByFeed(t, "read_parquet('"+file+"')"), insightCountsByFeed(t, h, h.Key, "&"+q.Encode()))
	})
	t.Run("the items Parquet lists each item's sources", func(t *testing.T) {
		file := download(t, h, h.Key, "/log/extracts/items?format=parquet", "items.parquet")
		r := duckDB(t, "SELECT * FROM read_parquet('"+file+"')")
		types := r.types()
		for c, ty := range map[string]string{"item_id": "UUID", "added_at": "TIMESTAMP WITH TIME ZONE", "source_ids": "UUID[]", "source_types": "VARCHAR[]"} {
			if types[c] != ty {
				t.Errorf("column %s is %q, want %q", c, types[c], ty)
			}
		}
		if len(r.Rows) < 10 {
			t.Fatalf("%d items", len(r.Rows))
		}
		for _, row := range r.Rows {
			if ids, _ := row["source_ids"].([]any); len(ids) == 0 || row["title"] == "" {
				t.Errorf("item without sources or title: %v", row)
			}
		}
		csvFile := download(t, h, h.Key, "/log/extracts/items?format=csv", "items.csv")
		n := duckDB(t, "SELECT count(*) AS n FROM read_csv('"+csvFile+"')")
		if jsonNum(n.Rows[0]["n"]) != jsonNum(len(r.Rows)) {
			t.Errorf("the CSV holds %v items, the Parquet %d", n.Rows[0]["n"], len(r.Rows))
		}
	})
	t.Run("another organization's extract holds only its own feedback", func(t *testing.T) {
		file := download(t, h, hist.OtherKey, "/log/extracts/feedback?format=parquet", "other.parquet")
		r := duckDB(t, "SELECT DISTINCT feed_id::VARCHAR AS f FROM read_parquet('"+file+"')")
		if len(r.Rows) != 1 || r.Rows[0]["f"] != hist.OtherFeed.String() {
			t.Errorf("globex's extract names feeds %v, want only %s", r.Rows, hist.OtherFeed)
		}
	})
	t.Run("bad requests answer 400 naming the parameter", func(t *testing.T) {
		c := as(h, h.Key)
		for _, tc := range []struct{ query, field string }{
			{"", "format"}, {"format=xlsx", "format"}, {"format=csv&since=yesterday", "since"},
			{"format=csv&since=2026-11-05&until=2026-11-04", "until"},
		} {
			for _, p := range []string{"/log/extracts/feedback?", "/log/extracts/items?"} {
				wantValidation(t, c.do(t, "GET", p+tc.query, nil), tc.field)
			}
		}
	})
}

// pandasPython is a python3 that imports pandas (Debian's python3-pandas is
// for Debian's python3, which may not be the first on the PATH). Without
// one the test skips, unless FEEDSVC_REQUIRE_PANDAS=1 (CI, whose .ci/run
// installs it) makes that a failure.
func pandasPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import pandas").Run() == nil {
			return p
		}
	}
	if os.Getenv("FEEDSVC_REQUIRE_PANDAS") == "1" {
		t.Fatal("no python3 here imports pandas (Debian: python3-pandas)")
	}
	t.Skip("no python3 here imports pandas (Debian: python3-pandas; .ci/run installs it)")
	return ""
}

// pandasRecipe is the Python block of docs/analysts.md, between its markers.
func pandasRecipe(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "analysts.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- pandas:begin -->")
	body, _, ok2 := strings.Cut(rest, "<!-- pandas:end -->")
	if !ok || !ok2 {
		t.Fatal("docs/analysts.md has no pandas block between its markers")
	}
	body = strings.TrimPrefix(strings.TrimSpace(body), "```python")
	return strings.TrimSuffix(strings.TrimSpace(body), "```")
}

// The CSV extracts read in pandas as docs/analysts.md reads them (its
// block, run as written): ids as strings, times with their zone, the
// sources as lists, and the feedback's counts per feed those of
// GET /insights/feedback. (pandas reads Parquet only with pyarrow, which
// CI cannot install here: DuckDB reads the Parquet above.)
func TestTheCSVExtractsReadInPandasWithTheirTypesAndTheInsightsCounts(t *testing.T) {
	t.Parallel()
	python := pandasPython(t)
	h := servicetest.Start(t)
	servicetest.WriteFeedbackHistory(h, 9)
	dir := t.TempDir()
	for name, path := range map[string]string{"feedback.csv": "/log/extracts/feedback?format=csv", "items.csv": "/log/extracts/items?format=csv"} {
		file := download(t, h, h.Key, path, name)
		if err := os.Rename(file, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	check := `
out = {
    "feedback": {c: str(t) for c, t in feedback.dtypes.items()},
    "items": {c: str(t) for c, t in items.dtypes.items()},
    "rows": len(feedback), "item_rows": len(items),
    "lists": bool(len(items)) and all(isinstance(v, list) and len(v) > 0 for v in items["source_ids"])
        and all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in items["source_types"]),
    "feeds": {str(f): "%d/%d/%d" % tuple(int(r.get(k, 0)) for k in ("positive", "negative", "neutral"))
              for f, r in by_feed.to_dict("index").items()},
}
print(json.dumps(out))
`
	cmd := exec.Command(python, "-c", pandasRecipe(t)+"\n"+check)
	cmd.Dir = dir
	raw, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("pandas: %v\n%s", err, stderr)
	}
	var got struct {
		Feedback, Items map[string]string
		Rows            int
		ItemRows        int `json:"item_rows"`
		Lists           bool
		Feeds           map[string]string
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("the script's answer %s: %v", raw, err)
	}
	for c, want := range map[string]string{
		"feedback_id": "string", "item_id": "string", "feed_id": "string", "source_id": "string", "rating": "string",
		"given_at": "datetime64[ns, UTC]", "item_added_at": "datetime64[ns, UTC]", "item_published_at": "datetime64[ns, UTC]",
	} {
		if got.Feedback[c] != want {
			t.Errorf("feedback column %s reads as %q, want %q", c, got.Feedback[c], want)
		}
	}
	for c, want := range map[string]string{
		"item_id": "string", "feed_id": "string", "added_at": "datetime64[ns, UTC]", "source_ids": "object", "source_types": "object",
	} {
		if got.Items[c] != want {
			t.Errorf("items column %s reads as %q, want %q", c, got.Items[c], want)
		}
	}
	if !got.Lists {
		t.Errorf("the items' sources do not read as lists of strings (%d items)", got.ItemRows)
	}
	sameCounts(t, "pandas", got.Feeds, insightCountsByFeed(t, h, h.Key, ""))
}
