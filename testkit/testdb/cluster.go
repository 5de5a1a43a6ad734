package testdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/feedsvc/feedsvc/internal/database"
)

// Cluster is a private Postgres server for one test, for what the shared
// server must not be put through: running it out of connections (a tiny
// max_connections), or stopping it. It is made with the installed server
// binaries, listens on 127.0.0.1 on a free port and is removed when the
// test ends.
type Cluster struct {
	// URL is the cluster's postgres database, as superuser postgres.
	URL string
	// held are the connections Squeeze and Exhaust hold, not yet released.
	held []*pgx.Conn
}

// ClusterOptions are a private cluster's settings.
type ClusterOptions struct {
	// MaxConnections is the server's max_connections (default 20). None
	// is reserved for superusers, so a test's connections (made as
	// postgres, a superuser) count like the service's.
	MaxConnections int
}

// NewCluster starts a private Postgres server for t, stopped and removed
// when t ends. It skips t only when no Postgres server binaries are
// installed (/usr/lib/postgresql/*/bin, or POSTGRES_BIN); CI has them.
// Durability is off (fsync, synchronous_commit, full_page_writes): the
// cluster dies with the test.
func NewCluster(t testing.TB, o ClusterOptions) *Cluster {
	t.Helper()
	if o.MaxConnections == 0 {
		o.MaxConnections = 20
	}
	bin, err := serverBinaries()
	if err != nil {
		t.Skipf("no private Postgres cluster: %v", err)
	}
	// Postgres refuses to run as root: as root, the cluster belongs to the
	// postgres OS user. Its directory is made here rather than by
	// t.TempDir, whose parent is private to this user.
	cred, err := clusterOwner()
	if err != nil {
		t.Fatalf("private cluster: %v", err)
	}
	dir, err := os.MkdirTemp("", "feedsvc-pg-")
	if err != nil {
		t.Fatalf("private cluster directory: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatalf("give the private cluster directory to postgres: %v", err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		t.Fatalf("private cluster port: %v", err)
	}
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatalf("private cluster log: %v", err)
	}
	defer log.Close()
	server := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections="+strconv.Itoa(o.MaxConnections),
		"-c", "superuser_reserved_connections=0",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "shared_buffers=16MB")
	server.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	server.Stdout, server.Stderr = log, log
	if err := server.Start(); err != nil {
		t.Fatalf("start private cluster: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = server.Wait(); close(exited) }()
	t.Cleanup(func() {
		// SIGINT is a fast shutdown: sessions are ended, not waited for.
		_ = server.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = server.Process.Kill()
			<-exited
		}
	})
	c := &Cluster{URL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, c.URL)
		if err == nil {
			_ = conn.Close(ctx)
			return c
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("private cluster exited: %s", b)
		case <-ctx.Done():
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("private cluster did not accept connections within 30 s: %v\n%s", err, b)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Database is the URL of database name on the cluster (created by
// whoever opens it first, as the service does).
func (c *Cluster) Database(name string) string {
	u, err := database.WithDatabase(c.URL, name)
	if err != nil {
		panic(err) // c.URL is ours and well formed
	}
	return u
}

// Squeeze opens connections to the cluster until it refuses one with too
// many clients, and holds them until release: sessions already open (a
// service's pool) keep their connections, and a new connection is
// refused, as on a server that other clients filled.
func (c *Cluster) Squeeze(t testing.TB) (release func()) {
	t.Helper()
	return c.take(t, false)
}

// Exhaust is Squeeze, and it also ends every other client's session, so
// that a client that held connections must connect again, and is refused;
// sessions that get in between are ended and their slots taken, until
// every slot is held here.
func (c *Cluster) Exhaust(t testing.TB) (release func()) {
	t.Helper()
	return c.take(t, true)
}

func (c *Cluster) take(t testing.TB, endOthers bool) (release func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var held []*pgx.Conn
	release = func() {
		for _, conn := range held {
			_ = conn.Close(context.Background())
			c.held = slices.DeleteFunc(c.held, func(h *pgx.Conn) bool { return h == conn })
		}
		held = nil
	}
	t.Cleanup(release)
	for {
		conn, err := pgx.Connect(ctx, c.URL+"&application_name=testdb-exhaust")
		var pgErr *pgconn.PgError
		switch {
		case err == nil:
			held, c.held = append(held, conn), append(c.held, conn)
			continue
		case errors.As(err, &pgErr) && pgErr.Code == "53300": // too_many_connections
		default:
			t.Fatalf("take the private cluster's connections: %v", err)
		}
		if !endOthers {
			return release
		}
		if len(c.held) == 0 {
			t.Fatal("exhaust private cluster: refused before any connection was held")
		}
		var others int
		if err := c.held[0].QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND application_name <> 'testdb-exhaust'`).Scan(&others); err != nil {
			t.Fatalf("exhaust private cluster: end other sessions: %v", err)
		}
		if others == 0 {
			return release
		}
		// Ended sessions leave their slots a moment later.
		time.Sleep(20 * time.Millisecond)
	}
}

// serverBinaries is the directory of the newest installed Postgres server.
func serverBinaries() (string, error) {
	if dir := os.Getenv("POSTGRES_BIN"); dir != "" {
		return dir, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		if path, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(path), nil
		}
		return "", errors.New("no initdb under /usr/lib/postgresql/*/bin or on PATH")
	}
	version := func(path string) int {
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
		return n
	}
	slices.SortFunc(found, func(a, b string) int { return version(b) - version(a) })
	return filepath.Dir(found[0]), nil
}

// clusterOwner is the user the server runs as: postgres when this process
// is root (Postgres refuses root), otherwise this process's own.
func clusterOwner() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, and no postgres user to run the server as: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres gid %q: %w", u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ServerBinaries is the directory of the newest installed Postgres server
// binaries (POSTGRES_BIN overrides it), for packages that run servers of
// their own (testkit/pgstandby).
func ServerBinaries() (string, error) { return serverBinaries() }

// ClusterOwner is the OS user a private server runs as: postgres when this
// process is root, nil (this process's own) otherwise.
func ClusterOwner() (*syscall.Credential, error) { return clusterOwner() }

// FreePort is a loopback TCP port free at the time of the call.
func FreePort() (int, error) { return freePort() }
