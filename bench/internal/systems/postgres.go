package systems

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
)

// Postgres is a Postgres cluster of the benchmark's own: the machine's
// binaries and settings, its own data directory and port. Nothing but the
// measured system connects to it, so the CPU of every backend that exits
// (read through its postmaster, cpu.go) is the system's, and no other
// session's transaction holds the event store's readers back; the
// machine's shared server gives neither while other sessions run tests.
type Postgres struct {
	Admin string // DSN of its postgres database
	dir   string
	bin   string
	as    string // user to run as when root (Postgres refuses root)
}

// StartPostgres makes a new cluster in dir (emptied first) with the
// binaries in bin and starts it on 127.0.0.1:port with settings (-c
// name=value each), waiting until it accepts connections.
func StartPostgres(ctx context.Context, bin, dir string, port int, settings ...string) (*Postgres, error) {
	p := &Postgres{dir: dir, bin: bin, Admin: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)}
	if os.Geteuid() == 0 {
		p.as = "postgres"
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("empty %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if p.as != "" {
		u, err := user.Lookup(p.as)
		if err != nil {
			return nil, fmt.Errorf("the user Postgres runs as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	if out, err := p.command(ctx, "initdb", "-D", filepath.Join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	opts := fmt.Sprintf("-c port=%d -c listen_addresses=127.0.0.1 -c unix_socket_directories=%s", port, dir)
	for _, s := range settings {
		opts += " -c " + s
	}
	if out, err := p.command(ctx, "pg_ctl", "-D", filepath.Join(dir, "data"), "-l", filepath.Join(dir, "log"), "-w", "-o", opts, "start").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pg_ctl start: %w\n%s", err, out)
	}
	return p, nil
}

func (p *Postgres) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	path := filepath.Join(p.bin, name)
	if p.as != "" {
		return exec.CommandContext(ctx, "runuser", append([]string{"-u", p.as, "--", path}, args...)...)
	}
	return exec.CommandContext(ctx, path, args...)
}

// Stop stops the cluster and removes its directory.
func (p *Postgres) Stop() {
	if out, err := p.command(context.Background(), "pg_ctl", "-D", filepath.Join(p.dir, "data"), "-m", "fast", "-w", "stop").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "pg_ctl stop: %v\n%s", err, out)
		return
	}
	_ = os.RemoveAll(p.dir)
}
