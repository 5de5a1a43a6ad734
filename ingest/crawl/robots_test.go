package crawl

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/document"
)

const robotsTxt = `# comment
User-agent: *
Disallow: /private

User-agent: feedsvc
Disallow: /nofeedsvc
Allow: /

Sitemap: https://cdn.example.com/sitemap-news.xml
Sitemap: /sitemap.xml
Sitemap: /sitemap.xml
`

func TestAllowed(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{"/robots.txt": text("text/plain", robotsTxt)})
	c := localClient(Options{})
	tests := []struct {
		name string
		path string
		want bool
	}{
		{"a path disallowed for our agent is refused", "/nofeedsvc/story", false},
		{"a path disallowed only for other agents is allowed, as the most specific group wins", "/private/story", true},
		{"an ordinary path is allowed", "/news/story", true},
		{"robots.txt itself is always allowed", "/robots.txt", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Allowed(context.Background(), s.URL+tt.path); got != tt.want {
				t.Errorf("Allowed(%s) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
	if n := s.hitCount("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want once (cached)", n)
	}
}

func TestAllowedMatchesTheUserAgentProductToken(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{"/robots.txt": text("text/plain", "User-agent: OtherBot\nDisallow: /\n\nUser-agent: MyCrawler\nDisallow: /x\n")})
	c := localClient(Options{UserAgent: "MyCrawler/2.0 (+https://example.com/bot)"})
	if c.Allowed(context.Background(), s.URL+"/x/1") {
		t.Error("/x/1 should be disallowed for MyCrawler")
	}
	if !c.Allowed(context.Background(), s.URL+"/y") {
		t.Error("/y should be allowed: OtherBot's rules do not apply to us")
	}
}

func TestRobotsFailureModes(t *testing.T) {
	tests := []struct {
		name      string
		robots    http.HandlerFunc
		wantAllow bool
	}{
		{"a missing robots.txt (404) allows everything", status(http.StatusNotFound), true},
		{"a forbidden robots.txt (403) allows everything, as for Google", status(http.StatusForbidden), true},
		{"a 500 robots.txt disallows everything for now", status(http.StatusInternalServerError), false},
		{"a 429 robots.txt disallows everything for now", status(http.StatusTooManyRequests), false},
		{"an empty robots.txt allows everything", text("text/plain", ""), true},
		{"a rule before any User-agent line is ignored, not fatal", text("text/plain", "Disallow: /\nUser-agent: *\nDisallow: /secret\n"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, map[string]http.HandlerFunc{"/robots.txt": tt.robots})
			c := localClient(Options{})
			if got := c.Allowed(context.Background(), s.URL+"/news/story"); got != tt.wantAllow {
				t.Errorf("Allowed = %v, want %v", got, tt.wantAllow)
			}
		})
	}
}

func TestRepairedRobotsStillApplyTheirRules(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{"/robots.txt": text("text/plain", "Disallow: /\nUser-agent: *\nDisallow: /secret\nCrawl-delay: soon\nSitemap: /s.xml\n")})
	c := localClient(Options{})
	if c.Allowed(context.Background(), s.URL+"/secret/a") {
		t.Error("/secret/a should stay disallowed after repair")
	}
	maps, err := c.RobotsSitemaps(context.Background(), s.URL)
	if err != nil || !slices.Equal(maps, []string{s.URL + "/s.xml"}) {
		t.Errorf("RobotsSitemaps = %v, %v", maps, err)
	}
}

func TestUnreachableRobotsDisallows(t *testing.T) {
	s := newSite(t, nil)
	url := s.URL
	s.Close()
	c := localClient(Options{})
	if c.Allowed(context.Background(), url+"/news/story") {
		t.Error("an unreachable host must not be allowed")
	}
	if _, err := c.RobotsSitemaps(context.Background(), url); err == nil {
		t.Error("RobotsSitemaps should report the failure")
	}
}

func TestRobotsCacheExpires(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{"/robots.txt": text("text/plain", "User-agent: *\nDisallow: /x\n")})
	c := localClient(Options{})
	now := time.Now()
	c.robots.now = func() time.Time { return now }
	c.Allowed(context.Background(), s.URL+"/a")
	now = now.Add(robotsTTL - time.Second)
	c.Allowed(context.Background(), s.URL+"/a")
	if n := s.hitCount("/robots.txt"); n != 1 {
		t.Fatalf("fetched %d times within the TTL, want 1", n)
	}
	now = now.Add(2 * time.Second)
	c.Allowed(context.Background(), s.URL+"/a")
	if n := s.hitCount("/robots.txt"); n != 2 {
		t.Errorf("fetched %d times after the TTL, want 2", n)
	}
}

func TestRobotsSitemaps(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{"/robots.txt": text("text/plain", robotsTxt)})
	got, err := localClient(Options{}).RobotsSitemaps(context.Background(), s.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://cdn.example.com/sitemap-news.xml", s.URL + "/sitemap.xml"}
	if !slices.Equal(got, want) {
		t.Errorf("RobotsSitemaps = %v, want %v", got, want)
	}
}

func TestGetAllowed(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/robots.txt":        text("text/plain", "User-agent: *\nDisallow: /private\n"),
		"/private/page":      text("text/html", "secret"),
		"/public/page":       text("text/html", "public"),
		"/public/to-private": redirect("/private/page"),
	})
	// PerHost 1 also proves that checking robots.txt on a redirect does not
	// deadlock on the slot the redirecting response held.
	c := localClient(Options{PerHost: 1, Timeout: 2 * time.Second})
	tests := []struct {
		name    string
		path    string
		wantErr error
	}{
		{"an allowed page is fetched", "/public/page", nil},
		{"a disallowed page is refused without being requested", "/private/page", ErrDisallowed},
		{"a redirect into a disallowed path is refused without being requested", "/public/to-private", ErrDisallowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.GetAllowed(context.Background(), s.URL+tt.path, document.Validators{})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
	if n := s.hitCount("/private/page"); n != 0 {
		t.Errorf("the disallowed page was requested %d times", n)
	}
	if _, err := c.Get(context.Background(), s.URL+"/private/page", document.Validators{}); err != nil {
		t.Errorf("plain Get does not consult robots.txt, but failed: %v", err)
	}
}

// TestRobotsCheckOnRedirectDoesNotDeadlock covers a redirect to another
// origin on the same host whose robots.txt is not cached yet: fetching it
// needs the host's only slot, which the redirect response still holds
// unless it is released first.
func TestRobotsCheckOnRedirectDoesNotDeadlock(t *testing.T) {
	target := newSite(t, map[string]http.HandlerFunc{
		"/robots.txt": text("text/plain", "User-agent: *\nAllow: /\n"),
		"/story":      text("text/html", "<title>t</title>"),
	})
	origin := newSite(t, map[string]http.HandlerFunc{"/moved": redirect(target.URL + "/story")})
	c := localClient(Options{PerHost: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := c.GetAllowed(ctx, origin.URL+"/moved", document.Validators{})
	if err != nil {
		t.Fatalf("GetAllowed: %v", err)
	}
	if resp.URL != target.URL+"/story" || target.hitCount("/robots.txt") != 1 {
		t.Errorf("URL = %q, target robots.txt fetched %d times", resp.URL, target.hitCount("/robots.txt"))
	}
}

func TestGetAllowedTellsUnavailableRobotsFromDisallowed(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/robots.txt": status(http.StatusServiceUnavailable),
		"/page":       text("text/html", "<title>t</title>"),
	})
	_, err := localClient(Options{}).GetAllowed(context.Background(), s.URL+"/page", document.Validators{})
	if !errors.Is(err, ErrRobotsUnavailable) || errors.Is(err, ErrDisallowed) {
		t.Fatalf("err = %v, want ErrRobotsUnavailable and not ErrDisallowed", err)
	}
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("the robots.txt status should be inspectable, got %v", err)
	}
	if n := s.hitCount("/page"); n != 0 {
		t.Errorf("the page was fetched %d times", n)
	}
}
