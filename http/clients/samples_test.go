package clients_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/feedsvc/feedsvc/http/openapi"
)

// samplesPath is where the document's code samples live (embedded by
// http/openapi, which adds them to the operations as x-codeSamples).
var samplesPath = filepath.Join("..", "openapi", "samples.json")

// exchange is one request the Go walkthrough sent, and its status.
type exchange struct {
	method, path, query string
	body                []byte
	status              int
}

// recorder keeps the requests the Go client sends, for the curl samples.
type recorder struct {
	mu   sync.Mutex
	seen []exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.seen = append(r.seen, exchange{req.Method, req.URL.Path, req.URL.RawQuery, body, resp.StatusCode})
		r.mu.Unlock()
	}
	return resp, err
}

// operation is a documented operation: its method, path template and id.
type operation struct {
	method, template, id string
	match                *regexp.Regexp
}

func operations(t *testing.T, doc []byte) []operation {
	t.Helper()
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	var ops []operation
	param := regexp.MustCompile(`\\\{[^}]+\\\}`)
	for template, item := range d.Paths {
		for method, raw := range item {
			var op struct {
				OperationID string `json:"operationId"`
			}
			if json.Unmarshal(raw, &op) != nil || op.OperationID == "" {
				continue
			}
			re := regexp.MustCompile("^" + param.ReplaceAllString(regexp.QuoteMeta(template), "[^/]+") + "$")
			ops = append(ops, operation{strings.ToUpper(method), template, op.OperationID, re})
		}
	}
	return ops
}

var (
	uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	pathParam   = regexp.MustCompile(`\{([^}]+)\}`)
)

// curlSample is the request as a curl command against localhost:8080,
// with the walkthrough's ids and addresses made placeholders.
func curlSample(s *service, op operation, ex exchange) string {
	path := pathParam.ReplaceAllStringFunc(op.template, func(p string) string {
		return "$" + strings.ToUpper(regexp.MustCompile(`([a-z])([A-Z])`).ReplaceAllString(strings.Trim(p, "{}"), "${1}_${2}"))
	})
	url := "localhost:8080" + path
	if ex.query != "" {
		url += "?" + ex.query
	}
	var b strings.Builder
	b.WriteString("curl -s")
	if ex.method != http.MethodGet {
		b.WriteString(" -X " + ex.method)
	}
	b.WriteString(` "` + url + `" -H "Authorization: Bearer $KEY"`)
	if len(ex.body) > 0 {
		body := strings.ReplaceAll(string(ex.body), s.siteHost(), "example.com")
		body = strings.ReplaceAll(body, s.site.URL, "https://example.com")
		body = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`).ReplaceAllString(body, "https://receiver.example")
		body = uuidPattern.ReplaceAllString(body, "<id>")
		b.WriteString(" \\\n  -H 'Content-Type: application/json' -d '" + strings.TrimSpace(body) + "'")
	}
	return b.String()
}

// markedSamples are the blocks between `// sample:<lang>:<name>` and
// `// end sample` in file, by name.
func markedSamples(t *testing.T, file, lang string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	var name string
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "// sample:"+lang+":"):
			name, lines = strings.TrimPrefix(trimmed, "// sample:"+lang+":"), nil
		case trimmed == "// end sample" && name != "":
			out[name] = dedent(lines)
			name = ""
		case name != "":
			lines = append(lines, line)
		}
	}
	return out
}

func dedent(lines []string) string {
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, "\t ")); indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			lines[i] = l[indent:]
		}
		lines[i] = strings.ReplaceAll(lines[i], "\t", "  ")
	}
	return strings.Join(lines, "\n")
}

// checkSamples builds every operation's samples from what the walkthroughs
// ran and holds samples.json to them (FEEDSVC_UPDATE_SAMPLES=1 writes it).
func checkSamples(t *testing.T, s *service, doc []byte, rec *recorder) {
	t.Helper()
	goSamples := markedSamples(t, "walkthrough_go_test.go", "go")
	tsSamples := markedSamples(t, filepath.Join("ts", "walkthrough.ts"), "ts")
	samples := map[string][]openapi.Sample{}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, op := range operations(t, doc) {
		var curl string
		for _, ex := range rec.seen {
			if ex.method == op.method && op.match.MatchString(ex.path) && ex.status < 300 {
				curl = curlSample(s, op, ex)
				break
			}
		}
		if curl == "" || goSamples[op.id] == "" || tsSamples[op.id] == "" {
			continue
		}
		samples[op.id] = []openapi.Sample{
			{Lang: "Shell", Label: "curl", Source: curl},
			{Lang: "Go", Label: "Go (oapi-codegen)", Source: goSamples[op.id]},
			{Lang: "TypeScript", Label: "TypeScript (openapi-fetch)", Source: tsSamples[op.id]},
		}
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range goSamples {
			if !yield(k) {
				return
			}
		}
	}) {
		if _, ok := samples[name]; !ok && name != "client" && name != "errors" {
			t.Errorf("the sample %q names no operation the walkthroughs ran in both languages", name)
		}
	}
	want, err := json.MarshalIndent(samples, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if os.Getenv("FEEDSVC_UPDATE_SAMPLES") != "" {
		if err := os.WriteFile(samplesPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(samplesPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Fatalf("%s is not what the walkthroughs give: write it with FEEDSVC_UPDATE_SAMPLES=1 go test -run TestAnIntegratorsFirstHourWorks . in http/clients", samplesPath)
	}
}
