package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/testkit/pgstandby"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// TestServeReadsFromAReplica runs `feedsvc serve` with DATABASE_URL at a
// private primary and DATABASE_READ_URL at a real standby of it: a
// write's answer is read back, readyz says reads go to the replica, and
// to the primary while the standby is stopped.
func TestServeReadsFromAReplica(t *testing.T) {
	pair := pgstandby.Start(t)
	in := &installation{url: pair.Primary.Database("feedsvc")}
	if out, err := in.run(t, "migrate"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
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
	startServe(t, []string{"DATABASE_URL=" + in.url, "DATABASE_READ_URL=" + pair.Database("feedsvc"),
		"FEEDSVC_ADDR=" + addr, "FEEDSVC_ROLES=api,projections,webhooks", "FEEDSVC_LOG_LEVEL=info"})
	api := apiClient{t: t, base: "http://" + addr, key: key}
	api.waitReady()
	readsFrom := func() string {
		resp, err := http.Get(api.base + "/readyz")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		var body struct {
			Reads string `json:"reads"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return body.Reads
	}
	if !wait.Within(20*time.Second, func() bool { return readsFrom() == "replica" }) {
		t.Fatalf("readyz never said reads go to the replica: %q", readsFrom())
	}
	id := api.post("/feeds/news", map[string]string{"name": "served by the replica", "description": "d"})["id"].(string)
	if got := api.get("/feeds/news/" + id); got["name"] != "served by the replica" {
		t.Fatalf("read after the write: %v", got)
	}
	pair.Stop()
	if !wait.Within(20*time.Second, func() bool { return readsFrom() == "primary" }) {
		t.Fatalf("standby stopped, and readyz never said reads go to the primary: %q", readsFrom())
	}
	second := api.post("/feeds/news", map[string]string{"name": "standby down", "description": "d"})["id"].(string)
	if got := api.get("/feeds/news/" + second); got["name"] != "standby down" {
		t.Fatalf("read with the standby down: %v", got)
	}
	pair.Restart()
	if !wait.Within(20*time.Second, func() bool { return readsFrom() == "replica" }) {
		t.Fatalf("standby restarted, and reads never went back to it: %q", readsFrom())
	}
	if got := api.get("/feeds/news/" + second); got["name"] != "standby down" {
		t.Fatalf("read from the restarted replica: %v", got)
	}
}

// TestTwoAPIProcessesShareOneReplica runs two `feedsvc serve` processes
// with the api role alone, both with DATABASE_READ_URL at one standby, and
// a third with the projections: what docs/operating.md ("Running with a
// read replica") promises a client of several processes. Within the
// bound, a write through either process is reflected by the next read
// through either, since the write waited for the shared standby to replay
// it. With replay paused, the writing process answers past the bound and
// reads its write from the primary at once; the other process sends its
// reads to the primary too within a measure or two after the bound.
func TestTwoAPIProcessesShareOneReplica(t *testing.T) {
	// The default bound, rather than a shorter one: the first part's
	// writes must not pass it even on a loaded machine.
	const bound = 2 * time.Second
	pair := pgstandby.Start(t)
	in := &installation{url: pair.Primary.Database("feedsvc")}
	if out, err := in.run(t, "migrate"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	out, err := in.run(t, "keys", "create", "--org", "acme")
	if err != nil {
		t.Fatalf("keys create: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := strings.TrimSpace(lines[len(lines)-1])
	startServe(t, []string{"DATABASE_URL=" + in.url, "FEEDSVC_ADDR=" + freeAddr(t),
		"FEEDSVC_ROLES=projections,webhooks", "FEEDSVC_LOG_LEVEL=info"})
	apis := map[string]apiClient{}
	for _, name := range []string{"A", "B"} {
		addr := freeAddr(t)
		startServe(t, []string{"DATABASE_URL=" + in.url, "DATABASE_READ_URL=" + pair.Database("feedsvc"),
			"FEEDSVC_REPLICA_WAIT=" + bound.String(), "FEEDSVC_ADDR=" + addr, "FEEDSVC_ROLES=api", "FEEDSVC_LOG_LEVEL=info"})
		apis[name] = apiClient{t: t, base: "http://" + addr, key: key}
	}
	a, b := apis["A"], apis["B"]
	for name, api := range apis {
		api.waitReady()
		if !wait.Within(20*time.Second, func() bool { return readsFrom(api) == "replica" }) {
			t.Fatalf("process %s: readyz never said reads go to the replica: %q", name, readsFrom(api))
		}
	}

	// Within the bound: every read right after a write, through the
	// writer or the other process, reflects it, one feed and the list.
	for i := range 10 {
		for _, c := range []struct{ write, read string }{{"A", "A"}, {"A", "B"}, {"B", "B"}, {"B", "A"}} {
			name := fmt.Sprintf("feed %d written through %s", i, c.write)
			id := apis[c.write].post("/feeds/news", map[string]string{"name": name, "description": "d"})["id"].(string)
			if status, got := getStatus(apis[c.read], "/feeds/news/"+id); status != http.StatusOK || got["name"] != name {
				t.Fatalf("read through %s right after a write through %s: %d %v", c.read, c.write, status, got)
			}
			if !listsFeed(apis[c.read], id) {
				t.Fatalf("the list read through %s right after a write through %s lacks feed %s", c.read, c.write, id)
			}
		}
	}
	for name, api := range apis {
		if got := readsFrom(api); got != "replica" {
			t.Fatalf("process %s after writes within the bound: reads go to the %q", name, got)
		}
	}

	// Replay paused: the write through A waits the bound and is answered;
	// A reads it from the primary at once, B within a measure or two.
	ctx := context.Background()
	standby, err := pgx.Connect(ctx, pair.Database("feedsvc"))
	if err != nil {
		t.Fatalf("connect to the standby: %v", err)
	}
	defer standby.Close(ctx)
	if _, err := standby.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatalf("pause replay: %v", err)
	}
	start := time.Now()
	id := a.post("/feeds/news", map[string]string{"name": "while lagging", "description": "d"})["id"].(string)
	answered := time.Now()
	if waited := answered.Sub(start); waited < bound {
		t.Fatalf("the write was answered after %s, before the bound, with replay paused", waited)
	}
	if status, got := getStatus(a, "/feeds/news/"+id); status != http.StatusOK || got["name"] != "while lagging" {
		t.Fatalf("read through the writing process past the bound: %d %v", status, got)
	}
	// The other process falls back at its first measure after the bound
	// has passed for the write's WAL: at most two measures after the
	// write's answer, plus slack for a loaded machine.
	within := 2*database.ReplicaPoll + 600*time.Millisecond
	var seenAfter time.Duration
	if !wait.Within(within, func() bool {
		status, got := getStatus(b, "/feeds/news/"+id)
		seenAfter = time.Since(answered)
		return status == http.StatusOK && got["name"] == "while lagging"
	}) {
		t.Fatalf("the other process missed the write %s after its answer, with replay paused (readyz reads %q)", within, readsFrom(b))
	}
	t.Logf("write through A answered after %s with replay paused; B reflected it %s after the answer", answered.Sub(start).Round(time.Millisecond), seenAfter.Round(time.Millisecond))
	// Once B has it, B keeps it: its reads stay on the primary until the
	// standby has replayed past the write.
	for range 20 {
		if status, _ := getStatus(b, "/feeds/news/"+id); status != http.StatusOK {
			t.Fatalf("B reflected the write, then a later read through it answered %d", status)
		}
		time.Sleep(25 * time.Millisecond)
	}
	for name, api := range apis {
		if got := readsFrom(api); got != "primary" {
			t.Fatalf("process %s with replay paused past the bound: readyz says reads go to the %q", name, got)
		}
	}

	// Replay resumed: both go back to the standby, which has the write.
	if _, err := standby.Exec(ctx, "SELECT pg_wal_replay_resume()"); err != nil {
		t.Fatalf("resume replay: %v", err)
	}
	for name, api := range apis {
		if !wait.Within(20*time.Second, func() bool { return readsFrom(api) == "replica" }) {
			t.Fatalf("process %s: replay resumed, and reads never went back to the replica: %q", name, readsFrom(api))
		}
		if status, got := getStatus(api, "/feeds/news/"+id); status != http.StatusOK || got["name"] != "while lagging" {
			t.Fatalf("process %s: read from the caught-up replica: %d %v", name, status, got)
		}
	}
}

// freeAddr is a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// readsFrom is what the process's /readyz says its reads go to.
func readsFrom(api apiClient) string {
	resp, err := http.Get(api.base + "/readyz")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var body struct {
		Reads string `json:"reads"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return body.Reads
}

// getStatus GETs path with the key: the status and, for a 200, the data.
func getStatus(api apiClient, path string) (int, map[string]any) {
	api.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, api.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+api.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		api.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	var env struct {
		Data map[string]any `json:"data"`
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
			api.t.Fatalf("GET %s: %v", path, err)
		}
	}
	return resp.StatusCode, env.Data
}

// listsFeed reports whether GET /feeds/news through api lists the feed.
func listsFeed(api apiClient, id string) bool {
	api.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, api.base+"/feeds/news", nil)
	req.Header.Set("Authorization", "Bearer "+api.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		api.t.Fatalf("GET /feeds/news: %v", err)
	}
	defer resp.Body.Close()
	var env struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || resp.StatusCode != http.StatusOK {
		api.t.Fatalf("GET /feeds/news: %d %v", resp.StatusCode, err)
	}
	for _, f := range env.Data {
		if f["id"] == id {
			return true
		}
	}
	return false
}
