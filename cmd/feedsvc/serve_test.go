package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/testkit/testdb"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// Tests that need `feedsvc serve` as a real process (its own listener, a
// SIGKILL, several processes on one database) start this test binary
// again as a child: TestMain turns it into `feedsvc serve` when
// serveChildEnv is set, configured like any deployment, by environment.

const serveChildEnv = "FEEDSVC_SERVE_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(serveChildEnv) != "" {
		// As main does: SIGTERM shuts the service down gracefully.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := execute(ctx, []string{"serve"}, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// process is a `feedsvc serve` child process.
type process struct {
	cmd    *exec.Cmd
	output bytes.Buffer
	done   chan struct{}
}

// startServe starts `feedsvc serve` with env on top of the test's own
// environment; it is stopped when the test ends, and its output logged
// if the test failed.
func startServe(t *testing.T, env []string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(os.Args[0], "-test.run=^$"), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), append([]string{serveChildEnv + "=1"}, env...)...)
	p.cmd.Stdout, p.cmd.Stderr = &p.output, &p.output
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("feedsvc serve %d:\n%s", p.cmd.Process.Pid, p.output.String())
		}
	})
	return p
}

// kill ends the process with SIGKILL: nothing of its shutdown runs.
func (p *process) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop shuts the process down with SIGTERM, as an orchestrator would, and
// kills it if it has not ended within 15 s.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.kill()
	}
}

// owner is the lease owner prefix of the process (lease.DefaultOwner).
func (p *process) owner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-", host, p.cmd.Process.Pid)
}

// served is a `feedsvc serve` process with every role on a new migrated
// database, listening on a loopback port that is also its
// FEEDSVC_PUBLIC_URL (as hubs reach it), reading local sites
// (FEEDSVC_ALLOW_PRIVATE_NETWORKS), and a client of its API with a key of
// organization acme.
type served struct {
	*process
	api    apiClient
	public string
}

// startServed starts it with env on top of those settings (an empty
// FEEDSVC_PUBLIC_URL= unsets the public URL).
func startServed(t *testing.T, env ...string) *served {
	t.Helper()
	in := &installation{url: testdb.NewMigratedURL(t)}
	out, err := in.run(t, "keys", "create", "--org", "acme")
	if err != nil {
		t.Fatalf("keys create: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := strings.TrimSpace(lines[len(lines)-1])
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	public := "http://" + addr
	p := startServe(t, append([]string{"DATABASE_URL=" + in.url, "FEEDSVC_ADDR=" + addr, "FEEDSVC_PUBLIC_URL=" + public,
		"FEEDSVC_ALLOW_PRIVATE_NETWORKS=true", "FEEDSVC_ROLES=api,projections,crawler,webhooks", "FEEDSVC_LOG_LEVEL=info"}, env...))
	s := &served{process: p, api: apiClient{t: t, base: public, key: key}, public: public}
	s.api.waitReady()
	return s
}

// apiClient calls the API of a `feedsvc serve`.
type apiClient struct {
	t         *testing.T
	base, key string
}

func (a apiClient) waitReady() {
	a.t.Helper()
	var err error
	if !wait.Within(60*time.Second, func() bool {
		var resp *http.Response
		if resp, err = http.Get(a.base + "/readyz"); err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) {
		a.t.Fatalf("serve not ready within a minute: %v", err)
	}
}

func (a apiClient) post(path string, body any) map[string]any {
	a.t.Helper()
	return a.do(http.MethodPost, path, body)
}

func (a apiClient) get(path string) map[string]any {
	a.t.Helper()
	return a.do(http.MethodGet, path, nil)
}

// do sends the request with the key and returns the answer's data; any
// status but 200 and 201 fails the test.
func (a apiClient) do(method, path string, body any) map[string]any {
	a.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.base+path, r)
	req.Header.Set("Authorization", "Bearer "+a.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		a.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	var env struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	return env.Data
}

// lists reports whether a news feed lists every one of the URLs.
func (a apiClient) lists(feed string, urls ...string) bool {
	a.t.Helper()
	items, _ := a.get("/feeds/news/" + feed + "/items?limit=100")["items"].([]any)
	have := map[string]int{}
	for _, v := range items {
		u, _ := v.(map[string]any)["url"].(string)
		have[u]++
		if have[u] > 1 {
			a.t.Errorf("feed %s lists %s twice", feed, u)
		}
	}
	for _, u := range urls {
		if have[u] == 0 {
			return false
		}
	}
	return true
}

// polling is the polling block of a source's detail, nil until the
// crawler scheduled it.
func (a apiClient) polling(source string) map[string]any {
	a.t.Helper()
	p, _ := a.get("/sources/" + source)["polling"].(map[string]any)
	return p
}

// metric is the value of one sample of the process's /metrics (name with
// its labels, as exposed), 0 when absent.
func (a apiClient) metric(sample string) float64 {
	a.t.Helper()
	resp, err := http.Get(a.base + "/metrics")
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), sample+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				a.t.Fatalf("metric %s: %v", sample, err)
			}
			return f
		}
	}
	return 0
}
