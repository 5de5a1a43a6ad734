// Package pgstandby starts, for one test, a private Postgres primary and a
// streaming standby of it (pg_basebackup -R) on ports of their own, so
// tests can read from a real replica and stop and restart it. The shared
// server is never touched.
package pgstandby

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// Pair is a primary and its streaming standby.
type Pair struct {
	// Primary is the primary's postgres database URL.
	Primary *testdb.Cluster
	// StandbyURL is the standby's postgres database URL.
	StandbyURL string

	t       testing.TB
	bin     string
	cred    *syscall.Credential
	data    string
	logPath string
	port    int
	server  *exec.Cmd
	exited  chan struct{}
}

// Start makes a primary (testdb.NewCluster, wal_level replica by
// default), copies it with pg_basebackup -R and starts the copy as a hot
// standby streaming from it. Both stop when t ends. It skips t only when
// no Postgres server binaries are installed.
func Start(t testing.TB) *Pair {
	t.Helper()
	bin, err := testdb.ServerBinaries()
	if err != nil {
		t.Skipf("no Postgres server binaries for a standby: %v", err)
	}
	primary := testdb.NewCluster(t, testdb.ClusterOptions{MaxConnections: 80})
	cred, err := testdb.ClusterOwner()
	if err != nil {
		t.Fatalf("standby: %v", err)
	}
	dir, err := os.MkdirTemp("", "feedsvc-standby-")
	if err != nil {
		t.Fatalf("standby directory: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatalf("give the standby directory to postgres: %v", err)
		}
	}
	port, err := testdb.FreePort()
	if err != nil {
		t.Fatalf("standby port: %v", err)
	}
	p := &Pair{Primary: primary, t: t, bin: bin, cred: cred, data: filepath.Join(dir, "data"),
		logPath: filepath.Join(dir, "server.log"), port: port,
		StandbyURL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)}
	primaryPort, err := portOf(primary.URL)
	if err != nil {
		t.Fatalf("primary port: %v", err)
	}
	backup := exec.Command(filepath.Join(bin, "pg_basebackup"), "-D", p.data, "-R", "-X", "stream",
		"-h", "127.0.0.1", "-p", strconv.Itoa(primaryPort), "-U", "postgres", "--checkpoint=fast", "--no-sync")
	backup.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := backup.CombinedOutput(); err != nil {
		t.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	t.Cleanup(p.Stop)
	p.Restart()
	return p
}

// Database is the standby's URL of database name (the primary's
// p.Primary.Database(name) is the same database, replicated).
func (p *Pair) Database(name string) string {
	u, err := database.WithDatabase(p.StandbyURL, name)
	if err != nil {
		panic(err) // the URL is ours and well formed
	}
	return u
}

// Stop shuts the standby down (fast shutdown); stopping a stopped
// standby is harmless.
func (p *Pair) Stop() {
	if p.server == nil {
		return
	}
	_ = p.server.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.server.Process.Kill()
		<-p.exited
	}
	p.server = nil
}

// Restart starts the standby (again) on its port and waits until it
// accepts connections; it resumes streaming from the primary.
func (p *Pair) Restart() {
	p.t.Helper()
	if p.server != nil {
		return
	}
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		p.t.Fatalf("standby log: %v", err)
	}
	defer log.Close()
	server := exec.Command(filepath.Join(p.bin, "postgres"), "-D", p.data, "-p", strconv.Itoa(p.port), "-k", filepath.Dir(p.data),
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=80", "-c", "superuser_reserved_connections=0",
		"-c", "fsync=off", "-c", "shared_buffers=16MB", "-c", "hot_standby=on")
	server.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	server.Stdout, server.Stderr = log, log
	if err := server.Start(); err != nil {
		p.t.Fatalf("start standby: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = server.Wait(); close(exited) }()
	p.server, p.exited = server, exited
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, p.StandbyURL)
		if err == nil {
			_ = conn.Close(ctx)
			return
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(p.logPath)
			p.t.Fatalf("standby exited: %s", b)
		case <-ctx.Done():
			b, _ := os.ReadFile(p.logPath)
			p.t.Fatalf("standby did not accept connections within 30 s: %v\n%s", err, b)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func portOf(dsn string) (int, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return 0, fmt.Errorf("parse %q: %w", dsn, err)
	}
	return int(cfg.Port), nil
}
