// Command orglog measures reading an organization's log over HTTP beside
// `feedsvc events export`, in one run (bench/orglog/README.md): it fills
// a database of its own with -events NewsItemAdded events of one
// organization (COPY, untimed), projects the orglog read model (timed),
// starts `feedsvc serve` with the api role alone on it, then reads the
// whole log through GET /log (pages of 1,000) and through GET /log/stream
// as NDJSON, and runs `feedsvc events export --org` on the same log. For
// each: events per second, the CPU of the service (or the command) and of
// the Postgres backends serving the database.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/orglog"
	"github.com/feedsvc/feedsvc/service/schema"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "orglog:", err)
		os.Exit(1)
	}
}

func run() error {
	def := "postgres://postgres@127.0.0.1:5432/feedsvc_bench_orglog?sslmode=disable"
	dsn := flag.String("db", def, "database URL (dropped and created)")
	events := flag.Int("events", 1_000_000, "events in the organization's log")
	bin := flag.String("feedsvc", "bin/feedsvc", "the feedsvc binary (make build)")
	keep := flag.Bool("keep", false, "keep the database afterwards")
	flag.Parse()
	ctx := context.Background()
	fmt.Printf("load at start: %s\n", loadAverage())

	if err := database.DropDatabase(ctx, *dsn); err != nil {
		return err
	}
	db, err := schema.Open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if !*keep {
		defer database.DropDatabase(context.WithoutCancel(ctx), *dsn) //nolint:errcheck // scratch
	}
	key, k, err := auth.NewStore(db.Bun).CreateKey(ctx, "bench", auth.AllScopes(), nil,
		auth.WithRate(auth.Rate{Limit: 1_000_000_000, Window: time.Hour}))
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := seed(ctx, db, k.OrganizationID, *events); err != nil {
		return err
	}
	fmt.Printf("seeded %d events with COPY in %s (untimed)\n", *events, time.Since(t0).Round(time.Millisecond))

	store := eventstore.NewPostgres(db.Pool)
	t0 = time.Now()
	if err := project(ctx, db, store); err != nil {
		return err
	}
	took := time.Since(t0)
	fmt.Printf("orglog projected %d events in %s = %.0f events/s\n", *events, took.Round(time.Millisecond), float64(*events)/took.Seconds())

	dbName := (*dsn)[strings.LastIndex(*dsn, "/")+1:]
	if i := strings.IndexByte(dbName, '?'); i >= 0 {
		dbName = dbName[:i]
	}
	addr, stop, pid, err := serve(*bin, *dsn)
	if err != nil {
		return err
	}
	defer stop()

	measure := func(name string, proc func() (int, error), cpuOf func() time.Duration) error {
		pgBefore := backendsCPU(ctx, db, dbName)
		// Backends that end during the run (the export's) are read every
		// 250 ms while it lasts; the last reading of each counts.
		seen := cpuByPid{}
		sampling, stopSampling := context.WithCancel(ctx)
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			tick := time.NewTicker(250 * time.Millisecond)
			defer tick.Stop()
			for {
				for pid, t := range backendsCPU(ctx, db, dbName) {
					seen[pid] = t
				}
				select {
				case <-sampling.Done():
					return
				case <-tick.C:
				}
			}
		}()
		svcBefore := cpuOf()
		start := time.Now()
		n, err := proc()
		d := time.Since(start)
		stopSampling()
		<-sampled
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		svc := cpuOf() - svcBefore
		for pid, t := range backendsCPU(ctx, db, dbName) {
			seen[pid] = t
		}
		pg := seen.sub(pgBefore)
		if n != *events {
			return fmt.Errorf("%s read %d events, want %d", name, n, *events)
		}
		fmt.Printf("%-34s %8d events in %8s = %7.0f events/s; CPU %s %6.1f s, Postgres %6.1f s; load %s\n",
			name, n, d.Round(time.Millisecond), float64(n)/d.Seconds(), "process", svc.Seconds(), pg.Seconds(), loadAverage())
		return nil
	}
	svcCPU := func() time.Duration { return procCPU(pid) }
	if err := measure("GET /log (pages of 1,000)", func() (int, error) { return readPages(addr, key) }, svcCPU); err != nil {
		return err
	}
	if err := measure("GET /log/stream (NDJSON)", func() (int, error) { return readStream(addr, key, *events) }, svcCPU); err != nil {
		return err
	}
	var child time.Duration
	if err := measure("feedsvc events export --org", func() (int, error) {
		n, cpu, err := export(*bin, *dsn, k.OrganizationID)
		child = cpu
		return n, err
	}, func() time.Duration { return child }); err != nil {
		return err
	}
	fmt.Printf("load at end: %s\n", loadAverage())
	return nil
}

// seed writes n NewsItemAdded events of org, one stream each, with COPY.
func seed(ctx context.Context, db *database.DB, org uuid.UUID, n int) error {
	meta, _ := json.Marshal(map[string]any{"schemaVersion": domain.SchemaVersion, "organizationId": org})
	feeds := []uuid.UUID{uuid.New(), uuid.New(), uuid.New(), uuid.New()}
	source, att := uuid.New(), uuid.New()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const chunk = 10_000
	for lo := 0; lo < n; lo += chunk {
		rows := make([][]any, 0, chunk)
		for i := lo; i < min(lo+chunk, n); i++ {
			feed := feeds[i%len(feeds)]
			at := base.Add(time.Duration(i) * time.Second)
			pub := at.Add(-time.Hour)
			page := uuid.Must(uuid.NewV7())
			e := domain.NewsItemAdded{
				ItemID: uuid.Must(uuid.NewV7()), FeedID: feed, OrganizationID: org, AttachmentID: att, SourceID: source,
				SourceType: "site", NewsPageID: page, VersionID: uuid.Must(uuid.NewV7()),
				Content: domain.ArticleContent{
					URL:         fmt.Sprintf("https://news.example.com/2026/story-%d-a-reasonably-long-slug-for-a-news-article", i),
					Title:       fmt.Sprintf("Story %d: a reasonably long headline about something that happened", i),
					Description: "A paragraph-long summary of the article, as feeds and pages usually provide one, long enough to look like the real thing.",
					PublishedAt: &pub,
				},
				At: at,
			}
			data, err := domain.EncodeEvent(e)
			if err != nil {
				return err
			}
			rows = append(rows, []any{domain.NewsItemStream(feed, page), int64(0), uuid.Must(uuid.NewV7()), e.EventType(),
				json.RawMessage(data), json.RawMessage(meta)})
		}
		if _, err := db.Pool.CopyFrom(ctx, pgx.Identifier{"events"},
			[]string{"stream_id", "stream_revision", "event_id", "event_type", "data", "metadata"}, pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("copy events: %w", err)
		}
	}
	return nil
}

// project runs the orglog projector alone until it reaches the head.
func project(ctx context.Context, db *database.DB, store *eventstore.Postgres) error {
	var commit, prepare int64
	if err := db.Pool.QueryRow(ctx, `SELECT transaction_id::text::bigint, global_position FROM events
		ORDER BY transaction_id DESC, global_position DESC LIMIT 1`).Scan(&commit, &prepare); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	runner, err := projections.NewRunner(store, db.Bun, log, projections.RunnerConfig{}, orglog.Projector{})
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runner.Run(rctx) }()
	<-runner.Running()
	err = runner.Progress("orglog").WaitFor(ctx, eventstore.Position{Commit: uint64(commit), Prepare: uint64(prepare)})
	cancel()
	<-done
	return err
}

// serve starts feedsvc serve with the api role alone on a free port.
func serve(bin, dsn string) (string, func(), int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, 0, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "FEEDSVC_ADDR="+addr, "FEEDSVC_ROLES=api")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, 0, err
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return addr, stop, cmd.Process.Pid, nil
			}
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, 0, fmt.Errorf("feedsvc serve not ready: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// readPages reads the whole log through GET /log, decoding each page.
func readPages(addr, key string) (int, error) {
	n, after := 0, ""
	for {
		req, _ := http.NewRequest("GET", "http://"+addr+"/log?limit=1000&after="+after, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return n, err
		}
		var page struct {
			Data struct {
				Events     []json.RawMessage
				Pagination struct {
					NextPosition string
					HasMore      bool
				}
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			return n, fmt.Errorf("page after %q: %d %v", after, resp.StatusCode, err)
		}
		n += len(page.Data.Events)
		if !page.Data.Pagination.HasMore {
			return n, nil
		}
		after = page.Data.Pagination.NextPosition
	}
}

// readStream reads want events from GET /log/stream as NDJSON, from the
// beginning, then closes it.
func readStream(addr, key string, want int) (int, error) {
	req, _ := http.NewRequest("GET", "http://"+addr+"/log/stream?after=", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return 0, fmt.Errorf("stream: %d %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for n < want && sc.Scan() {
		if len(sc.Bytes()) > 0 {
			n++
		}
	}
	return n, sc.Err()
}

// export runs feedsvc events export --org to a file; the count is the
// trailer's.
func export(bin, dsn string, org uuid.UUID) (int, time.Duration, error) {
	f, err := os.CreateTemp("", "orglog-export-*.ndjson")
	if err != nil {
		return 0, 0, err
	}
	f.Close()
	defer os.Remove(f.Name())
	cmd := exec.Command(bin, "events", "export", "--org", org.String(), "--out", f.Name())
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return 0, 0, err
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	rf, err := os.Open(f.Name())
	if err != nil {
		return 0, cpu, err
	}
	defer rf.Close()
	sc := bufio.NewScanner(rf)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), `{"position"`) {
			n++
		}
	}
	return n, cpu, sc.Err()
}

// procCPU is a process's user and system CPU time so far.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// cpuByPid is the CPU of some Postgres backends.
type cpuByPid map[int]time.Duration

// sub is the CPU spent since before by the backends alive now (a backend
// that ended between the two is not counted).
func (c cpuByPid) sub(before cpuByPid) time.Duration {
	var d time.Duration
	for pid, t := range c {
		d += t - before[pid]
	}
	return d
}

// backendsCPU reads the CPU of the backends connected to database name.
func backendsCPU(ctx context.Context, db *database.DB, name string) cpuByPid {
	out := cpuByPid{}
	rows, err := db.Pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = $1`, name)
	if err != nil {
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			out[pid] = procCPU(pid)
		}
	}
	return out
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}
