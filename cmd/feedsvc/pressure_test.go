package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/testkit/testdb"
	"github.com/feedsvc/feedsvc/testkit/wait"
	"github.com/feedsvc/feedsvc/webhook"
)

// Issue 26, findings 3 and 4, through `feedsvc serve` against a Postgres
// of its own with a tiny max_connections, whose every slot the test takes:
// the service answers 503 with Retry-After in each route's dialect, never
// 500; a key with a rate of its own gets no more than its rate through
// while the database refuses, and neither does a key on the service's
// rate (issue 34.3: counted in Postgres while it could and in the process
// apart when it could not, it passed its rate twice over); and once the
// slots are free it serves again.

// pressured is a running service on a private cluster.
type pressured struct {
	cluster *testdb.Cluster
	base    string
	client  *http.Client
}

// servePressured starts `feedsvc serve` with roles on a private cluster of
// maxConns connections.
func servePressured(t *testing.T, maxConns int, roles string) (*pressured, *installation) {
	t.Helper()
	t.Setenv("FEEDSVC_LOG_LEVEL", "error")
	t.Setenv("FEEDSVC_ROLES", roles)
	t.Setenv("FEEDSVC_ALLOW_PRIVATE_NETWORKS", "true") // receivers are local
	t.Setenv("FEEDSVC_WEBHOOK_BACKOFF_BASE", "50ms")
	c := testdb.NewCluster(t, testdb.ClusterOptions{MaxConnections: maxConns})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("FEEDSVC_ADDR", addr)
	in := &installation{url: c.Database("feedsvc")}
	if out, err := in.run(t, "migrate"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	in.serve(t)
	p := &pressured{cluster: c, base: "http://" + addr, client: &http.Client{Timeout: 30 * time.Second}}
	if strings.Contains(roles, "api") {
		var err error
		if !wait.Within(60*time.Second, func() bool {
			var resp *http.Response
			if resp, err = p.client.Get(p.base + "/readyz"); err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}) {
			t.Fatalf("serve not ready within a minute: %v", err)
		}
	}
	return p, in
}

// answer is one request's answer as the checks need it.
type answer struct {
	method, path string
	limited      bool // made with the key that has a rate of its own
	open         bool // made with the key on the service's rate
	status       int
	retryAfter   string
	code         string
	counted      bool      // the rate limit counted it (RateLimit-* headers)
	windowEnd    time.Time // when its rate window ends
}

// letThrough reports whether the rate limiter let the request through to
// its handler: anything but a 429 and the 503 of a count that could not
// be taken (which has no RateLimit headers).
func (a answer) letThrough() bool {
	return a.status != http.StatusTooManyRequests && !(a.status == http.StatusServiceUnavailable && !a.counted)
}

func (p *pressured) do(t *testing.T, key, method, path string, body any) (answer, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		t.Errorf("%s %s: no answer: %v", method, path, err)
		return answer{method: method, path: path}, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{method: method, path: path, status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	// Windows are fixed minutes: an answer the limiter counted says when
	// its window ends; one it did not is put in the minute it came back in.
	a.windowEnd = time.Now().Truncate(time.Minute).Add(time.Minute)
	if reset, err := strconv.Atoi(resp.Header.Get("RateLimit-Reset")); err == nil {
		a.counted, a.windowEnd = true, time.Now().Add(time.Duration(reset)*time.Second).Round(time.Minute)
	}
	var env struct {
		Data  map[string]any `json:"data"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &env)
	a.code = env.Error.Code
	return a, env.Data
}

// problem says what is wrong with an answer made under pressure, or "".
func (a answer) problem() string {
	events := strings.HasPrefix(a.path, "/feeds/events")
	switch {
	case a.status >= 200 && a.status < 300:
		return ""
	case a.status != http.StatusTooManyRequests && a.status != http.StatusServiceUnavailable:
		return fmt.Sprintf("answered %d %s; want 2xx, 429 or 503", a.status, a.code)
	case a.retryAfter == "":
		return fmt.Sprintf("answered %d without Retry-After", a.status)
	case a.status == http.StatusTooManyRequests && a.code != "TOO_MANY_REQUESTS",
		a.status == http.StatusServiceUnavailable && a.code != "SERVICE_UNAVAILABLE" &&
			!(events && a.code == "INTERNAL_SERVER_ERROR") && !(!events && a.code == "INTERNAL_ERROR"):
		return fmt.Sprintf("answered %d with code %q, not in the path's dialect", a.status, a.code)
	}
	return ""
}

func TestUnderDatabasePressureTheAPIAnswers503AndTheRateHolds(t *testing.T) {
	t.Setenv("FEEDSVC_RATE_LIMIT", "100/min")
	p, in := servePressured(t, 30, "api,projections")
	key := func(args ...string) string {
		out, err := in.run(t, append([]string{"keys", "create", "--org", "acme"}, args...)...)
		if err != nil {
			t.Fatalf("keys create %v: %v\n%s", args, err, out)
		}
		return lastLine(out)
	}
	// limited has a rate of its own, open the service's (both 100/min);
	// free, unlimited, sets up, checks the recovery, and makes most of
	// the requests that reach the database under pressure.
	limited, open, free := key("--rate", "100/min"), key(), key("--rate", "unlimited")

	a, feed := p.do(t, free, "POST", "/feeds/news", map[string]any{"name": "News", "description": "d"})
	if a.status != http.StatusCreated {
		t.Fatalf("create news feed: %d %s", a.status, a.code)
	}
	a, efeed := p.do(t, free, "POST", "/feeds/events", map[string]any{"name": "Events", "description": "d"})
	if a.status != http.StatusCreated {
		t.Fatalf("create event feed: %d %s", a.status, a.code)
	}
	news, events := "/feeds/news/"+feed["id"].(string), "/feeds/events/"+efeed["id"].(string)
	type request struct {
		key          string
		method, path string
		body         any
	}
	requests := []request{
		{limited, "GET", news, nil},
		{limited, "GET", events + "/items", nil},
		{open, "GET", news + "/items", nil},
		{open, "GET", events, nil},
		{free, "GET", news + "/items", nil},
		{free, "GET", events, nil},
		{free, "POST", "/feeds/news", map[string]any{"name": "Under pressure", "description": "d"}},
		{free, "POST", "/feeds/events", map[string]any{"name": "Under pressure", "description": "d"}},
	}

	// hammer makes requests from 24 clients for d and returns the answers.
	hammer := func(d time.Duration) []answer {
		var (
			mu      sync.Mutex
			answers []answer
			wg      sync.WaitGroup
		)
		stop := time.Now().Add(d)
		for w := range 24 {
			wg.Go(func() {
				for i := w; time.Now().Before(stop); i++ {
					r := requests[i%len(requests)]
					a, _ := p.do(t, r.key, r.method, r.path, r.body)
					a.limited, a.open = r.key == limited, r.key == open
					mu.Lock()
					answers = append(answers, a)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return answers
	}
	warm := hammer(time.Second) // the service's pool grows to what the load needs

	// Squeezed, the service keeps the connections it has and is refused
	// new ones; exhausted, it has none.
	release := p.cluster.Squeeze(t)
	answers := hammer(3 * time.Second)
	p.cluster.Exhaust(t)
	answers = append(answers, hammer(2*time.Second)...)
	byStatus := map[int]int{}
	// The answers let through, by key and rate window.
	passed, passedOpen := map[time.Time]int{}, map[time.Time]int{}
	count := func(a answer) {
		switch {
		case !a.letThrough():
		case a.limited:
			passed[a.windowEnd]++
		case a.open:
			passedOpen[a.windowEnd]++
		}
	}
	for _, a := range warm {
		count(a)
	}
	for _, a := range answers {
		byStatus[a.status]++
		if pr := a.problem(); pr != "" {
			t.Errorf("%s %s %s", a.method, a.path, pr)
		}
		count(a)
	}
	t.Logf("%d answers under pressure by status: %v; let through by window: own rate %v, service's rate %v", len(answers), byStatus, passed, passedOpen)
	for end, n := range passed {
		if n > 100 {
			t.Errorf("the 100/min key had %d requests let through in the window ending %s", n, end.Format(time.TimeOnly))
		}
	}
	for end, n := range passedOpen {
		if n > 100 {
			t.Errorf("the key on the service's 100/min had %d requests let through in the window ending %s", n, end.Format(time.TimeOnly))
		}
	}
	if byStatus[http.StatusServiceUnavailable] == 0 {
		t.Fatalf("no request was answered 503: the database was never short of connections (%v)", byStatus)
	}

	release()
	var b answer
	if !wait.Within(30*time.Second, func() bool {
		a, _ = p.do(t, free, "GET", events, nil)
		b, _ = p.do(t, free, "POST", "/feeds/news", map[string]any{"name": "After", "description": "d"})
		return a.status == http.StatusOK && b.status == http.StatusCreated
	}) {
		t.Fatalf("30 s after the connections were released: read %d %s, write %d %s", a.status, a.code, b.status, b.code)
	}
}

// A delivery whose attempt record the database refuses is POSTed once:
// the receiver's first POST takes every connection of the service's
// database (ending the sender's sessions) before it answers, and gives
// them back 3 s later, within the 15 s the sender retries the record for
// (issue 26: a refused attempt record caused 5 duplicate POSTs).
func TestADeliveryWhoseRecordIsRefusedIsPostedOnce(t *testing.T) {
	p, in := servePressured(t, 30, "webhooks")
	ctx := context.Background()
	db, err := database.Open(ctx, in.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	in.db, in.store, in.org = db, eventstore.NewPostgres(db.Pool), uuid.New()

	var (
		mu    sync.Mutex
		posts = map[string]int{}
	)
	first, answer := make(chan struct{}), make(chan struct{})
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts[r.Header.Get(webhook.HeaderEventID)]++
		n := len(posts)
		mu.Unlock()
		if n == 1 {
			select {
			case first <- struct{}{}:
				<-answer
			default:
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)
	in.subscribe(t, recv.URL+"/hooks")
	event := in.addItem(t, uuid.New(), "Jazz night")

	select {
	case <-first:
	case <-time.After(60 * time.Second):
		t.Fatal("no POST within a minute")
	}
	release := p.cluster.Exhaust(t)
	close(answer)
	time.Sleep(3 * time.Second) // the database stays full for a while: a span the test chooses
	release()

	var status string
	if !wait.Within(30*time.Second, func() bool {
		err = db.Pool.QueryRow(ctx, "SELECT status FROM webhook_deliveries").Scan(&status)
		return err == nil && status == webhook.StatusDelivered
	}) {
		t.Fatalf("the delivery is %q (%v) 30 s after the database took connections again; want delivered", status, err)
	}
	// Retries come 50 ms apart (FEEDSVC_WEBHOOK_BACKOFF_BASE): give a wrong
	// second POST the time to arrive.
	time.Sleep(2 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	if posts[event] != 1 || len(posts) != 1 {
		t.Fatalf("the receiver got POSTs %v; want one of %s", posts, event)
	}
}
