package crawl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
	"golang.org/x/sync/singleflight"

	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/internal/safehttp"
)

const (
	// robotsTTL is how long a fetched robots.txt is trusted, as suggested by
	// Google's guidance of caching up to a day; an hour keeps rule changes
	// effective quickly.
	robotsTTL = time.Hour
	// robotsRetryTTL is how long a failure (5xx, 429, network) keeps the
	// host disallowed before robots.txt is tried again.
	robotsRetryTTL = 5 * time.Minute
	// maxRobotsBytes is the part of a robots.txt that is parsed; Google
	// likewise ignores content past 500 KiB.
	maxRobotsBytes = 500 << 10
	// maxRobotsEntries bounds the cache; expired entries are swept when it
	// is reached.
	maxRobotsEntries = 10_000
)

// Rules that apply when robots.txt gives none or cannot be read.
var (
	allowAll, _    = robotstxt.FromStatusAndBytes(http.StatusNotFound, nil)
	disallowAll, _ = robotstxt.FromStatusAndBytes(http.StatusServiceUnavailable, nil)
)

// robotsEntry is the cached outcome of fetching one origin's robots.txt.
type robotsEntry struct {
	data     *robotstxt.RobotsData
	sitemaps []string
	// err is set when robots.txt could not be read (network error, 5xx,
	// 429): the origin is then disallowed until the entry expires.
	err     error
	expires time.Time
	// delay is the Crawl-delay of the group that applies to our user
	// agent; zero when none.
	delay time.Duration
}

type robotsCache struct {
	mu      sync.Mutex
	entries map[string]*robotsEntry
	flights singleflight.Group
	now     func() time.Time
}

func newRobotsCache() *robotsCache {
	return &robotsCache{entries: map[string]*robotsEntry{}, now: time.Now}
}

func (rc *robotsCache) get(origin string) *robotsEntry {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	e := rc.entries[origin]
	if e == nil || !rc.now().Before(e.expires) {
		return nil
	}
	return e
}

func (rc *robotsCache) put(origin string, e *robotsEntry) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.entries) >= maxRobotsEntries {
		now := rc.now()
		for k, old := range rc.entries {
			if !now.Before(old.expires) {
				delete(rc.entries, k)
			}
		}
	}
	if len(rc.entries) >= maxRobotsEntries {
		clear(rc.entries)
	}
	rc.entries[origin] = e
}

// checkRobots reports whether robots.txt lets our user agent fetch rawURL:
// nil, ErrDisallowed, or ErrRobotsUnavailable wrapping why robots.txt could
// not be read. The file is fetched once per scheme and host and cached;
// concurrent callers share one fetch. A 4xx robots.txt allows everything; a
// 5xx, 429 or network failure disallows everything for a few minutes, as
// Google does, since the site may be struggling. Invalid URLs are not
// allowed.
func (c *Client) checkRobots(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("parse URL: %w", err)
	}
	if err := safehttp.CheckURL(u); err != nil {
		return err
	}
	if u.Path == "/robots.txt" {
		return nil
	}
	e := c.robotsFor(ctx, origin(u))
	if e.err != nil {
		return fmt.Errorf("%w: %w", ErrRobotsUnavailable, e.err)
	}
	if !e.data.TestAgent(u.RequestURI(), c.agent) {
		return ErrDisallowed
	}
	return nil
}

func origin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// robotsFor returns the cached entry for origin, fetching it when missing
// or expired. The fetch runs detached from ctx so that one impatient caller
// does not fail it for the others waiting on it; it is still bounded by the
// client's request timeout.
func (c *Client) robotsFor(ctx context.Context, origin string) *robotsEntry {
	if e := c.robots.get(origin); e != nil {
		return e
	}
	ch := c.robots.flights.DoChan(origin, func() (any, error) {
		e := c.fetchRobots(context.WithoutCancel(ctx), origin)
		c.robots.put(origin, e)
		return e, nil
	})
	select {
	case r := <-ch:
		return r.Val.(*robotsEntry)
	case <-ctx.Done():
		return &robotsEntry{data: disallowAll, err: ctx.Err()}
	}
}

func (c *Client) fetchRobots(ctx context.Context, origin string) *robotsEntry {
	// robots.txt redirects are followed without consulting robots.txt again.
	ctx = context.WithValue(ctx, robotsKey{}, false)
	now := c.robots.now()
	resp, err := c.Get(ctx, origin+"/robots.txt", document.Validators{})
	if err != nil {
		if robotsMissing(err) {
			return &robotsEntry{data: allowAll, expires: now.Add(robotsTTL)}
		}
		return &robotsEntry{data: disallowAll, err: err, expires: now.Add(robotsRetryTTL)}
	}
	data, sitemaps := parseRobots(resp.Body)
	e := &robotsEntry{data: data, sitemaps: absoluteSitemaps(resp.URL, sitemaps), expires: now.Add(robotsTTL)}
	if g := data.FindGroup(c.agent); g != nil {
		e.delay = max(g.CrawlDelay, 0)
	}
	return e
}

// robotsMissing tells errors that mean "there is no robots.txt" (any 4xx but
// 429, or a redirect loop, both treated by Google as a 404) from errors
// that mean "robots.txt is temporarily unreadable".
func robotsMissing(err error) bool {
	if errors.Is(err, safehttp.ErrTooManyRedirects) {
		return true
	}
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	return se.StatusCode >= 400 && se.StatusCode < 500 && se.StatusCode != http.StatusTooManyRequests
}

// parseRobots parses the first maxRobotsBytes of a robots.txt. The library
// rejects a whole file for a rule before any User-agent line or a bad
// Crawl-delay; Google ignores such lines instead, so they are dropped and
// the file parsed again. A file that still fails gives no rules.
func parseRobots(body []byte) (*robotstxt.RobotsData, []string) {
	if len(body) > maxRobotsBytes {
		body = body[:maxRobotsBytes]
	}
	if data, err := robotstxt.FromBytes(body); err == nil {
		return data, data.Sitemaps
	}
	repaired, sitemaps := repairRobots(body)
	if data, err := robotstxt.FromBytes(repaired); err == nil {
		return data, data.Sitemaps
	}
	return allowAll, sitemaps
}

// repairRobots drops the lines the parser rejects and collects Sitemap
// lines on the way, for when the file cannot be parsed at all.
func repairRobots(body []byte) ([]byte, []string) {
	var out bytes.Buffer
	var sitemaps []string
	seenAgent := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), maxRobotsBytes)
	for sc.Scan() {
		line := sc.Text()
		key, value, _ := strings.Cut(line, ":")
		key = strings.ToLower(strings.TrimSpace(key))
		value = strings.TrimSpace(strings.SplitN(value, "#", 2)[0])
		switch {
		case key == "sitemap":
			sitemaps = append(sitemaps, value)
		case key == "user-agent":
			seenAgent = true
		case key == "crawl-delay" && !validDelay(value):
			continue
		case !seenAgent && (key == "allow" || key == "disallow" || key == "crawl-delay"):
			continue
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	return out.Bytes(), sitemaps
}

func validDelay(v string) bool {
	_, err := strconv.ParseFloat(v, 64)
	return err == nil
}

// absoluteSitemaps resolves Sitemap: values against the robots.txt URL (they
// should be absolute, but are not always) and deduplicates them.
func absoluteSitemaps(robotsURL string, sitemaps []string) []string {
	base, err := url.Parse(robotsURL)
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range sitemaps {
		ref, err := url.Parse(strings.TrimSpace(s))
		if err != nil || s == "" {
			continue
		}
		abs := base.ResolveReference(ref)
		if safehttp.CheckURL(abs) != nil || seen[abs.String()] {
			continue
		}
		seen[abs.String()] = true
		out = append(out, abs.String())
	}
	return out
}
