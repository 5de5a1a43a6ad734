package service_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/testkit/pgstandby"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// TestReadsFromAReplicaKeepReadYourWrites runs the service on a private
// primary with DATABASE_READ_URL at a real streaming standby of it, and
// stops and restarts the standby.
func TestReadsFromAReplicaKeepReadYourWrites(t *testing.T) {
	pair := pgstandby.Start(t)
	h := servicetest.StartOn(t, pair.Primary.Database("feedsvc"),
		servicetest.WithReadURL(pair.Database("feedsvc"), 2*time.Second))
	if h.Service.Replica == nil {
		t.Fatal("DATABASE_READ_URL set, and the service has no replica")
	}
	readsFrom := func() string {
		r := h.Do("GET", "/readyz", nil).MustStatus(t, 200)
		s, _ := r.Body["reads"].(string)
		return s
	}
	waitReads := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for readsFrom() != want {
			if time.Now().After(deadline) {
				t.Fatalf("readyz: reads never went to the %s: %v", want, h.Service.Replica.Status())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitReads("replica")

	// A write's answer is reflected by the next read, served by the
	// standby: the write waited for it to replay the projection.
	first := h.Do("POST", "/feeds/news", map[string]string{"name": "on the replica", "description": "d"}).MustStatus(t, 201).Data()["id"].(string)
	if !h.Service.Replica.OnReplica() {
		t.Fatalf("after a write within the bound, reads left the replica: %v", h.Service.Replica.Status())
	}
	got := h.Do("GET", "/feeds/news/"+first, nil).MustStatus(t, 200).Data()
	if got["name"] != "on the replica" {
		t.Fatalf("read from the replica after the write: %v", got)
	}

	// Reads go on all along: the standby stopped and restarted under load.
	load := readUnderLoad(t, h, "/feeds/news/"+first)

	// A stopped standby: writes still answer, reads fall back to the
	// primary and still reflect them, readyz and the metrics say so.
	pair.Stop()
	second := h.Do("POST", "/feeds/news", map[string]string{"name": "standby down", "description": "d"}).MustStatus(t, 201).Data()["id"].(string)
	if h.Service.Replica.OnReplica() {
		t.Fatal("with the standby down, reads still go to it")
	}
	if got := h.Do("GET", "/feeds/news/"+second, nil).MustStatus(t, 200).Data(); got["name"] != "standby down" {
		t.Fatalf("read after a write with the standby down: %v", got)
	}
	h.Do("GET", "/feeds/news/"+first, nil).MustStatus(t, 200)
	waitReads("primary")
	fellBack := time.Now()
	if m := metricsText(t, h); !strings.Contains(m, "feedsvc_replica_up 0") || !strings.Contains(m, "feedsvc_replica_fallback 1") {
		t.Fatalf("metrics with the standby down lack feedsvc_replica_up 0 / feedsvc_replica_fallback 1:\n%s", grepLines(m, "feedsvc_replica"))
	}

	// Restarted, the standby catches up and serves reads again, with
	// everything written while it was down.
	pair.Restart()
	waitReads("replica")
	if got := h.Do("GET", "/feeds/news/"+second, nil).MustStatus(t, 200).Data(); got["name"] != "standby down" {
		t.Fatalf("read from the restarted replica: %v", got)
	}
	third := h.Do("POST", "/feeds/news", map[string]string{"name": "back", "description": "d"}).MustStatus(t, 201).Data()["id"].(string)
	if !h.Service.Replica.OnReplica() {
		t.Fatalf("after the standby came back, a write left reads on the primary: %v", h.Service.Replica.Status())
	}
	if got := h.Do("GET", "/feeds/news/"+third, nil).MustStatus(t, 200).Data(); got["name"] != "back" {
		t.Fatalf("read from the restarted replica after a write: %v", got)
	}
	answers := load()
	var after int
	for _, a := range answers {
		switch {
		case a.status == 404:
			t.Fatalf("a read under load missed the feed written before (404 at %s)", a.at.Format(time.RFC3339Nano))
		case a.status != 200 && a.at.After(fellBack):
			t.Fatalf("a read under load answered %d after readyz showed the fallback", a.status)
		case a.status == 200 && a.at.After(fellBack):
			after++
		}
	}
	failed := 0
	for _, a := range answers {
		if a.status != 200 {
			failed++
		}
	}
	t.Logf("reads under load: %d, %d answered after the fallback, %d failed before it", len(answers), after, failed)
	if after < 10 {
		t.Fatalf("only %d reads under load were answered after the fallback, of %d", after, len(answers))
	}
	if m := metricsText(t, h); !strings.Contains(m, "feedsvc_replica_up 1") {
		t.Fatalf("metrics with the standby back lack feedsvc_replica_up 1:\n%s", grepLines(m, "feedsvc_replica"))
	}
}

// grepLines are the lines of s holding sub; a sub starting with a line
// break matches only at a line's start.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains("\n"+l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func metricsText(t *testing.T, h *servicetest.Harness) string {
	t.Helper()
	resp, err := h.Test(httptest.NewRequest("GET", "/metrics", nil))
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read /metrics: %v", err)
	}
	return string(b)
}

// TestALaggingReplicaSendsReadsToThePrimary pauses the standby's replay:
// a write waits the bound, is answered, and is read back from the
// primary; readyz and the lag metric show it until replay resumes.
func TestALaggingReplicaSendsReadsToThePrimary(t *testing.T) {
	pair := pgstandby.Start(t)
	h := servicetest.StartOn(t, pair.Primary.Database("feedsvc"),
		servicetest.WithReadURL(pair.Database("feedsvc"), 300*time.Millisecond))
	replica := h.Service.Replica
	deadline := time.Now().Add(20 * time.Second)
	for !replica.OnReplica() {
		if time.Now().After(deadline) {
			t.Fatalf("reads never went to the replica: %v", replica.Status())
		}
		time.Sleep(50 * time.Millisecond)
	}
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
	id := h.Do("POST", "/feeds/news", map[string]string{"name": "while lagging", "description": "d"}).MustStatus(t, 201).Data()["id"].(string)
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Fatalf("the write was answered after %s, before the bound, with replay paused", waited)
	}
	if replica.OnReplica() {
		t.Fatal("a write past the bound left reads on the lagging replica")
	}
	if got := h.Do("GET", "/feeds/news/"+id, nil).MustStatus(t, 200).Data(); got["name"] != "while lagging" {
		t.Fatalf("read after a write past the bound: %v", got)
	}
	if r := h.Do("GET", "/readyz", nil).MustStatus(t, 200); r.Body["reads"] != "primary" {
		t.Fatalf("readyz with a lagging replica: %v", r.Body)
	}
	time.Sleep(time.Second)
	m := metricsText(t, h)
	var lag float64
	if _, err := fmt.Sscanf(grepLines(m, "\nfeedsvc_replica_replay_lag_seconds "), "feedsvc_replica_replay_lag_seconds %g", &lag); err != nil || lag < 0.5 {
		t.Fatalf("replay paused for over a second, and the lag reads %g (%v):\n%s", lag, err, grepLines(m, "feedsvc_replica"))
	}

	if _, err := standby.Exec(ctx, "SELECT pg_wal_replay_resume()"); err != nil {
		t.Fatalf("resume replay: %v", err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for !replica.OnReplica() {
		if time.Now().After(deadline) {
			t.Fatalf("replay resumed, and reads never went back to the replica: %v", replica.Status())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := h.Do("GET", "/feeds/news/"+id, nil).MustStatus(t, 200).Data(); got["name"] != "while lagging" {
		t.Fatalf("read from the caught-up replica: %v", got)
	}
}

type answer struct {
	at     time.Time
	status int
}

// readUnderLoad GETs path in a loop until the returned stop is called,
// which gives every answer's status and time (0: no answer).
func readUnderLoad(t *testing.T, h *servicetest.Harness, path string) (stop func() []answer) {
	t.Helper()
	done := make(chan struct{})
	out := make(chan []answer)
	go func() {
		var answers []answer
		for {
			select {
			case <-done:
				out <- answers
				return
			default:
			}
			// An answer counts at the time its read began: one begun after
			// the fallback was noticed must have gone to the primary.
			began := time.Now()
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("Authorization", "Bearer "+h.Key)
			status := 0
			if resp, err := h.Test(req); err == nil {
				status = resp.StatusCode
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			answers = append(answers, answer{at: began, status: status})
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return func() []answer {
		close(done)
		return <-out
	}
}
