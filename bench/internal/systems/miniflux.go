package systems

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// MinifluxOptions start Miniflux (built from its source, outside the
// repository).
type MinifluxOptions struct {
	Bin, DSN string
	Port     int
	// Env is added to its environment: the scheduler's settings. Its
	// own are the database, migrations, an admin user (bench,
	// bench-password), the address, private networks allowed for the
	// loopback web, warning logs.
	Env []string
}

// Miniflux is a running Miniflux with its API client.
type Miniflux struct {
	*System
	API *APIClient
}

// StartMiniflux starts Miniflux on its database (migrating it), waits until
// it is ready, and readies the attaching: sites' feeds are imported as
// OPML (POST /v1/import, which creates them without fetching them: its
// scheduler polls them first), 500 to a document: subscribing them one by
// one (POST /v1/feeds) fetches each feed before answering, half an hour
// for 10,000 on this machine.
func StartMiniflux(ctx context.Context, name, db string, o MinifluxOptions) (*Miniflux, error) {
	env := append(os.Environ(), "DATABASE_URL="+o.DSN, "RUN_MIGRATIONS=1", "CREATE_ADMIN=1", "ADMIN_USERNAME=bench", "ADMIN_PASSWORD=bench-password",
		"LISTEN_ADDR=127.0.0.1:"+strconv.Itoa(o.Port), "FETCHER_ALLOW_PRIVATE_NETWORKS=1", "LOG_LEVEL=warning")
	env = append(env, o.Env...)
	m := &Miniflux{System: newSystem(name, o.DSN, db)}
	// A feed counts as polled once it has an ETag (imported feeds are
	// created with checked_at = now()).
	m.Table = `SELECT id::text, CASE WHEN etag_header <> '' THEN checked_at END, next_check_at FROM feeds`
	m.Cmd = exec.Command(o.Bin)
	m.Cmd.Env = env
	if err := m.start(m.Cmd); err != nil {
		return nil, err
	}
	m.API = &APIClient{Base: "http://127.0.0.1:" + strconv.Itoa(o.Port), User: "bench", Pass: "bench-password"}
	if err := m.API.WaitReady(ctx, "/healthcheck"); err != nil {
		m.Stop()
		return nil, fmt.Errorf("%w\n%s", err, m.Output())
	}
	var mu sync.Mutex
	var batch []string
	flush := func(ctx context.Context) error {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><opml version="2.0"><head><title>bench</title></head><body><outline text="All">`)
		for _, h := range batch {
			fmt.Fprintf(&b, `<outline type="rss" text="%[1]s" title="%[1]s" xmlUrl="http://%[1]s/feed.xml" htmlUrl="http://%[1]s/"/>`, h)
		}
		b.WriteString(`</outline></body></opml>`)
		batch = nil
		return m.API.Do(ctx, "POST", "/v1/import", []byte(b.String()), nil)
	}
	m.Attach = func(ctx context.Context, host string) error {
		mu.Lock()
		defer mu.Unlock()
		batch = append(batch, host)
		if len(batch) < 500 {
			return nil
		}
		return flush(ctx)
	}
	m.Flush = func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if len(batch) == 0 {
			return nil
		}
		return flush(ctx)
	}
	return m, nil
}
