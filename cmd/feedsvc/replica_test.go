package main

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

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
