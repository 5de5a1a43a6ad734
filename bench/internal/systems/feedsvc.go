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

// FeedsvcOptions start `feedsvc serve`.
type FeedsvcOptions struct {
	Bin, DSN string
	Port     int
	// Env is added to the environment every process gets (the database,
	// the address, private networks allowed for the loopback web, warn
	// logs).
	Env []string
	// Crawlers > 0 runs `serve` with the api, projections and webhooks
	// roles and that many processes with the crawler role alone.
	Crawlers int
	// PerFeed is how many sources share a news feed (500 when 0).
	PerFeed int
}

// Feedsvc is a running `feedsvc serve` with its API key.
type Feedsvc struct {
	*System
	API  *APIClient
	env  []string
	bin  string
	base string

	perFeed int
	mu      sync.Mutex
	feeds   []string // news feeds, in the order made
	count   int
}

// StartFeedsvc migrates the database, issues a key and starts the service
// (and its crawler processes), waiting until it is ready.
func StartFeedsvc(ctx context.Context, name, db string, o FeedsvcOptions) (*Feedsvc, error) {
	env := append(os.Environ(), "DATABASE_URL="+o.DSN, "FEEDSVC_ADDR=127.0.0.1:"+strconv.Itoa(o.Port),
		"FEEDSVC_ALLOW_PRIVATE_NETWORKS=true", "FEEDSVC_LOG_LEVEL=warn")
	env = append(env, o.Env...)
	f := &Feedsvc{System: newSystem(name, o.DSN, db), env: env, bin: o.Bin, perFeed: o.PerFeed, base: "http://127.0.0.1:" + strconv.Itoa(o.Port)}
	if f.perFeed <= 0 {
		f.perFeed = 500
	}
	f.Table = `SELECT source_id::text, last_crawl_at, next_at FROM crawl_state`
	f.Backfills = `SELECT count(*) FROM ingest_backfills WHERE done_at IS NOT NULL`
	f.Drained = `SELECT count(*) FROM crawl_state WHERE last_crawl_at IS NOT NULL AND NOT backlog`
	if out, err := f.run(ctx, "migrate"); err != nil {
		return nil, fmt.Errorf("migrate: %w\n%s", err, out)
	}
	key, err := f.NewKey(ctx)
	if err != nil {
		return nil, err
	}
	f.Cmd = exec.Command(o.Bin, "serve")
	f.Cmd.Env = env
	if o.Crawlers > 0 {
		f.Cmd.Env = append(env, "FEEDSVC_ROLES=api,projections,webhooks")
	}
	if err := f.start(f.Cmd); err != nil {
		return nil, err
	}
	f.AddCrawler = func() error {
		free, err := FreePort()
		if err != nil {
			return err
		}
		cmd := exec.Command(o.Bin, "serve")
		cmd.Env = append(env, "FEEDSVC_ROLES=crawler", "FEEDSVC_ADDR=127.0.0.1:"+strconv.Itoa(free))
		if err := f.start(cmd); err != nil {
			return fmt.Errorf("crawler process %d: %w", len(f.Crawlers)+1, err)
		}
		f.Crawlers = append(f.Crawlers, cmd)
		return nil
	}
	for range o.Crawlers {
		if err := f.AddCrawler(); err != nil {
			f.Stop()
			return nil, err
		}
	}
	f.API = f.Client(key)
	if err := f.API.WaitReady(ctx, "/readyz"); err != nil {
		f.Stop()
		return nil, fmt.Errorf("%w\n%s", err, f.Output())
	}
	f.Attach = func(ctx context.Context, host string) error {
		_, _, err := f.AttachSite(ctx, host)
		return err
	}
	return f, nil
}

func (f *Feedsvc) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, f.bin, args...)
	cmd.Env = f.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// NewKey issues another key of the organization, with every scope and no
// rate limit (`feedsvc keys create`).
func (f *Feedsvc) NewKey(ctx context.Context) (string, error) {
	out, err := f.run(ctx, "keys", "create", "--org", "bench", "--rate", "unlimited")
	if err != nil {
		return "", fmt.Errorf("keys create: %w\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

// Client is an API client with key.
func (f *Feedsvc) Client(key string) *APIClient {
	return &APIClient{Base: f.base, Header: map[string]string{"Authorization": "Bearer " + key}}
}

// AttachSite attaches the site at host to a news feed as a `site` source,
// PerFeed sources to a feed (made as needed), and returns the feed and the
// site's source record.
func (f *Feedsvc) AttachSite(ctx context.Context, host string) (feedID, sourceID string, err error) {
	f.mu.Lock()
	i := f.count / f.perFeed
	f.count++
	if i == len(f.feeds) {
		var feed struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := f.API.Do(ctx, "POST", "/feeds/news", map[string]any{"name": fmt.Sprintf("bench %d", i), "description": "benchmark"}, &feed); err != nil {
			f.mu.Unlock()
			return "", "", err
		}
		f.feeds = append(f.feeds, feed.Data.ID)
	}
	feedID = f.feeds[i]
	f.mu.Unlock()
	var src struct {
		Data struct {
			SourceID string `json:"sourceId"`
		} `json:"data"`
	}
	err = f.API.Do(ctx, "POST", "/feeds/news/"+feedID+"/sources", map[string]any{"sourceType": "site", "domain": host}, &src)
	return feedID, src.Data.SourceID, err
}

// Feeds are the news feeds AttachSite made.
func (f *Feedsvc) Feeds() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.feeds...)
}
