package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/testkit/crawltest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// importOPML posts an OPML document to a news feed.
func importOPML(t *testing.T, c caller, feedID, doc string, headers map[string]string) servicetest.Response {
	t.Helper()
	all := map[string]string{"Content-Type": "text/x-opml"}
	for k, v := range headers {
		all[k] = v
	}
	return c.doWith(t, "POST", "/feeds/news/"+feedID+"/sources.opml", doc, all)
}

// exportOPML fetches a news feed's sources as OPML, expecting 200.
func exportOPML(t *testing.T, c caller, feedID string) string {
	t.Helper()
	r := fetch(t, c.h, "/feeds/news/"+feedID+"/sources.opml", map[string]string{"Authorization": "Bearer " + c.key})
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/x-opml") {
		t.Fatalf("export answered %d %q: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	return string(r.body)
}

// sourceIdentities are a feed's sources as "type url-or-domain", sorted:
// what a round trip must keep (ids of site records differ by nothing, since
// records are shared within the organization).
func sourceIdentities(t *testing.T, c caller, feedID string) []string {
	t.Helper()
	var out []string
	for _, a := range wantDataList(t, c.do(t, "GET", "/feeds/news/"+feedID+"/sources", nil)) {
		rec := wantDataObject(t, c.do(t, "GET", "/sources/"+a["sourceId"].(string), nil), http.StatusOK)
		id, _ := rec["domain"].(string)
		if u, ok := rec["url"].(string); ok {
			id = u
		}
		out = append(out, a["sourceType"].(string)+" "+id)
	}
	sort.Strings(out)
	return out
}

// outlineStatuses are the statuses of an import's outlines, in order.
func outlineStatuses(t *testing.T, r servicetest.Response) []string {
	t.Helper()
	d := wantDataObject(t, r, http.StatusOK)
	var out []string
	for _, o := range d["outlines"].([]any) {
		out = append(out, o.(map[string]any)["status"].(string))
	}
	return out
}

// opmlFeed is a feed holding a source of each site kind.
func opmlFeed(t *testing.T, c caller) (feedID string, want []string) {
	t.Helper()
	feedID = createFeed(t, c, "Exported", "sources to export")["id"].(string)
	a := attach(t, c, feedID, site("a.example"))
	attach(t, c, feedID, site("b.example:8080"))
	attach(t, c, feedID, map[string]any{"sourceType": "sitemap", "url": "https://a.example/news-sitemap.xml", "siteId": a["sourceId"]})
	attach(t, c, feedID, map[string]any{"sourceType": "siteIndexPage", "url": "https://a.example/latest", "siteId": a["sourceId"]})
	want = []string{"site a.example", "site b.example:8080", "siteIndexPage https://a.example/latest", "sitemap https://a.example/news-sitemap.xml"}
	if got := sourceIdentities(t, c, feedID); !slices.Equal(got, want) {
		t.Fatalf("the exported feed holds %v, want %v", got, want)
	}
	return feedID, want
}

func TestAFeedsSourcesExportedAsOPMLAndImportedIntoAnotherFeedAreTheSameSources(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	from, want := opmlFeed(t, c)
	doc := exportOPML(t, c, from)
	if n := strings.Count(doc, "<outline "); n != 4 {
		t.Fatalf("the export holds %d outlines, want 4:\n%s", n, doc)
	}

	to := createFeed(t, c, "Imported", "from OPML")["id"].(string)
	first := importOPML(t, c, to, doc, nil)
	if got := outlineStatuses(t, first); !slices.Equal(got, []string{"attached", "attached", "attached", "attached"}) {
		t.Fatalf("the import answered %v: %s", got, first.Raw)
	}
	if got := sourceIdentities(t, c, to); !slices.Equal(got, want) {
		t.Fatalf("the imported feed holds %v, want %v", got, want)
	}
	t.Run("importing it again attaches nothing and says each is already there", func(t *testing.T) {
		again := importOPML(t, c, to, doc, nil)
		if got := outlineStatuses(t, again); !slices.Equal(got, []string{"alreadyAttached", "alreadyAttached", "alreadyAttached", "alreadyAttached"}) {
			t.Fatalf("the second import answered %v: %s", got, again.Raw)
		}
		if got := sourceIdentities(t, c, to); !slices.Equal(got, want) {
			t.Fatalf("after a second import the feed holds %v, want %v", got, want)
		}
	})
}

func TestAnOPMLImportAnswersEachOutlineAndRefusesOnlyTheBadOnes(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID := createFeed(t, c, "Mixed", "good and bad outlines")["id"].(string)
	// Categories nest; a category outline without an address is no source.
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<opml version="1.0"><head><title>Reader export</title></head><body>
  <outline text="Tech">
    <outline type="rss" text="Blog" xmlUrl="https://blog.example/feed.xml" htmlUrl="https://blog.example/"/>
    <outline text="Deeper"><outline type="rss" text="Maps" xmlUrl="https://maps.example/sitemap_news.xml"/></outline>
  </outline>
  <outline type="rss" text="Files" xmlUrl="ftp://files.example/list"/>
  <outline type="link" text="Only a page" htmlUrl="https://page.example/"/>
</body></opml>`
	r := importOPML(t, c, feedID, doc, nil)
	if got := outlineStatuses(t, r); !slices.Equal(got, []string{"attached", "attached", "refused", "attached"}) {
		t.Fatalf("the import answered %v: %s", got, r.Raw)
	}
	d := r.Data()
	refused := d["outlines"].([]any)[2].(map[string]any)
	if refused["field"] != "xmlUrl" || refused["reason"] == "" || d["attached"] != float64(3) || d["refused"] != float64(1) {
		t.Fatalf("the answer's counts or refusal are wrong: %s", r.Raw)
	}
	want := []string{"site blog.example", "site page.example", "sitemap https://maps.example/sitemap_news.xml"}
	if got := sourceIdentities(t, c, feedID); !slices.Equal(got, want) {
		t.Fatalf("the feed holds %v, want %v", got, want)
	}
}

func TestAnOPMLImportWithAnIdempotencyKeyReplaysItsAnswer(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID := createFeed(t, c, "Replayed", "one import, twice")["id"].(string)
	doc := `<opml version="2.0"><body><outline xmlUrl="https://one.example/rss"/><outline xmlUrl="https://two.example/rss"/></body></opml>`
	key := map[string]string{"Idempotency-Key": "opml-import-1"}
	first := importOPML(t, c, feedID, doc, key)
	if got := outlineStatuses(t, first); !slices.Equal(got, []string{"attached", "attached"}) {
		t.Fatalf("the import answered %v: %s", got, first.Raw)
	}
	wantReplayOf(t, first, importOPML(t, c, feedID, doc, key))
	// Each outline minted its own attachment, not one id for both.
	var d struct {
		Data struct {
			Outlines []struct{ AttachmentID string }
		}
	}
	if err := json.Unmarshal([]byte(first.Raw), &d); err != nil || d.Data.Outlines[0].AttachmentID == d.Data.Outlines[1].AttachmentID {
		t.Fatalf("the outlines share an attachment id: %s (%v)", first.Raw, err)
	}
	if n := len(wantDataList(t, c.do(t, "GET", "/feeds/news/"+feedID+"/sources", nil))); n != 2 {
		t.Fatalf("the feed holds %d sources after an import and its replay, want 2", n)
	}
}

func TestHostileOrMalformedOPMLIsRefusedAndChangesNothing(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID := createFeed(t, c, "Target", "hostile imports")["id"].(string)
	attach(t, c, feedID, site("kept.example"))
	before := sourceIdentities(t, c, feedID)
	recordsBefore := len(wantDataList(t, c.do(t, "GET", "/sources", nil)))

	laughs := `<?xml version="1.0"?><!DOCTYPE opml [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>` +
		`<opml version="2.0"><body><outline text="&c;" xmlUrl="https://laughs.example/"/></body></opml>`
	deep := `<opml version="2.0"><body>` + strings.Repeat(`<outline text="x">`, 10000) + `<outline xmlUrl="https://deep.example/"/>` +
		strings.Repeat(`</outline>`, 10000) + `</body></opml>`
	many := `<opml version="2.0"><body>` + strings.Repeat(`<outline xmlUrl="https://many.example/"/>`, 1001) + `</body></opml>`
	huge := `<opml version="2.0"><body><outline xmlUrl="https://huge.example/" text="` + strings.Repeat("x", 2<<20) + `"/></body></opml>`
	cases := []struct {
		name, doc, contentType string
		status                 int
	}{
		{"entity declarations (billion laughs) are 400", laughs, "text/x-opml", http.StatusBadRequest},
		{"an undeclared entity is 400", `<opml version="2.0"><body><outline xmlUrl="https://e.example/" text="&lol;"/></body></opml>`, "text/x-opml", http.StatusBadRequest},
		{"10,000 nested outlines are 400", deep, "text/x-opml", http.StatusBadRequest},
		{"more than 1,000 outlines are 400", many, "text/x-opml", http.StatusBadRequest},
		{"a body over the limit is 413", huge, "text/x-opml", http.StatusRequestEntityTooLarge},
		{"text that is not XML is 400", "this is not xml at all", "text/x-opml", http.StatusBadRequest},
		{"XML that is not OPML is 400", `<rss version="2.0"><channel><link>https://rss.example/</link></channel></rss>`, "application/xml", http.StatusBadRequest},
		{"an OPML document naming no address is 400", `<opml version="2.0"><body><outline text="empty"/></body></opml>`, "text/xml", http.StatusBadRequest},
		{"an encoding other than UTF-8 is 400", `<?xml version="1.0" encoding="ISO-8859-1"?><opml version="2.0"><body><outline xmlUrl="https://latin.example/"/></body></opml>`, "text/x-opml", http.StatusBadRequest},
		{"a JSON body is 415", `{"xmlUrl":"https://json.example/"}`, "application/json", http.StatusUnsupportedMediaType},
	}
	// A 100 MB document on a real socket: the 413 comes from its
	// Content-Length, before the body is read.
	t.Run("a 100 MB body is 413 on a real socket", func(t *testing.T) {
		conn, err := net.Dial("tcp", h.Listen())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		head := "POST /feeds/news/" + feedID + "/sources.opml HTTP/1.1\r\nHost: feedsvc\r\nAuthorization: Bearer " + c.key +
			"\r\nContent-Type: text/x-opml\r\nContent-Length: 104857600\r\n\r\n<opml version=\"2.0\"><body>"
		// The rest is sent in the background, as a client that sends its
		// whole request before reading does; past 64 MiB the server stops
		// reading and closes, so how the write ends does not matter.
		go func() {
			_ = conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(conn, head); err != nil {
				return
			}
			chunk := strings.Repeat(`<outline text="x"/>`, 1<<15)
			for sent := 0; sent < 100<<20; sent += len(chunk) {
				if _, err := io.WriteString(conn, chunk); err != nil {
					return
				}
			}
		}()
		_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		status := make([]byte, len("HTTP/1.1 413"))
		if _, err := io.ReadFull(conn, status); err != nil || string(status) != "HTTP/1.1 413" {
			t.Fatalf("a 100 MB OPML body answered %q (%v), want 413", status, err)
		}
		if got := sourceIdentities(t, c, feedID); !slices.Equal(got, before) {
			t.Fatalf("the feed holds %v after a refused import, want %v", got, before)
		}
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := importOPML(t, c, feedID, tc.doc, map[string]string{"Content-Type": tc.contentType})
			if r.Status != tc.status {
				t.Fatalf("answered %d, want %d: %.300s", r.Status, tc.status, r.Raw)
			}
			if got := sourceIdentities(t, c, feedID); !slices.Equal(got, before) {
				t.Fatalf("the feed holds %v after a refused import, want %v", got, before)
			}
			if n := len(wantDataList(t, c.do(t, "GET", "/sources", nil))); n != recordsBefore {
				t.Fatalf("the organization has %d source records after a refused import, want %d", n, recordsBefore)
			}
		})
	}
}

func TestAnotherOrganizationsFeedIsNotFoundToOPMLExportAndImport(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	owner := as(h, h.Key)
	feedID := createFeed(t, owner, "Private", "acme's")["id"].(string)
	attach(t, owner, feedID, site("acme.example"))
	other := as(h, h.NewKey("globex"))
	doc := `<opml version="2.0"><body><outline xmlUrl="https://globex.example/"/></body></opml>`

	wantError(t, importOPML(t, other, feedID, doc, nil), http.StatusNotFound, "NOT_FOUND")
	r := fetch(t, h, "/feeds/news/"+feedID+"/sources.opml", map[string]string{"Authorization": "Bearer " + other.key})
	if r.status != http.StatusNotFound || strings.Contains(string(r.body), "acme.example") {
		t.Fatalf("another organization's export answered %d: %s", r.status, r.body)
	}
	if got := sourceIdentities(t, owner, feedID); !slices.Equal(got, []string{"site acme.example"}) {
		t.Fatalf("the feed holds %v after another organization's import", got)
	}
}

// listparser is the OPML parser of Python's feed tools (Debian's
// python3-listparser): the export must read as the subscriptions it names.
func TestTheOPMLExportReadsAsItsSubscriptionsInListparser(t *testing.T) {
	t.Parallel()
	// Debian's package is for Debian's python3, which may not be the
	// first on the PATH.
	python := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import listparser").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Skip("no python3 here imports listparser (Debian: python3-listparser; .ci/run installs it)")
	}
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID, _ := opmlFeed(t, c)
	doc := exportOPML(t, c, feedID)
	script := `import json, sys, listparser
r = listparser.parse(sys.stdin.read())
print(json.dumps({"bozo": bool(r.bozo), "version": r.version, "title": r.meta.title, "feeds": sorted(f.url for f in r.feeds)}))`
	cmd := exec.Command(python, "-c", script)
	cmd.Stdin = strings.NewReader(doc)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("listparser: %v", err)
	}
	var got struct {
		Bozo    bool
		Version string
		Title   string
		Feeds   []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("listparser's answer %s: %v", out, err)
	}
	want := []string{"https://a.example/", "https://a.example/latest", "https://a.example/news-sitemap.xml", "https://b.example:8080/"}
	if got.Bozo || got.Version != "opml2" || got.Title != "Exported" || !slices.Equal(got.Feeds, want) {
		t.Fatalf("listparser reads %+v, want a well-formed opml2 titled Exported with feeds %v\n%s", got, want, doc)
	}
}

// Miniflux's OPML importer and exporter, run as the reader runs them (its
// binary, on a database of its own, through its API): the export imports
// as the subscriptions it names, and Miniflux's own export of them imports
// back. FEEDSVC_MINIFLUX names the binary (bench/ builds one from source);
// without it the test is skipped, and CI does not set it.
func TestMinifluxImportsTheOPMLExportAndItsOwnExportImportsBack(t *testing.T) {
	bin := os.Getenv("FEEDSVC_MINIFLUX")
	if bin == "" {
		t.Skip("FEEDSVC_MINIFLUX names no Miniflux binary (built from github.com/miniflux/v2); CI does not run this test")
	}
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	from, _ := opmlFeed(t, c)
	doc := exportOPML(t, c, from)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.Env = append(os.Environ(), "DATABASE_URL="+testdb.NewURL(t), "RUN_MIGRATIONS=1", "CREATE_ADMIN=1",
		"ADMIN_USERNAME=opml", "ADMIN_PASSWORD=opml-password", "LISTEN_ADDR="+addr, "POLLING_FREQUENCY=1440", "LOG_LEVEL=warning")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start Miniflux: %v", err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	mini := func(method, path, body string) (int, string) {
		req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("opml", "opml-password")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	wait.Until(t, 60*time.Second, "Miniflux answers its health check", func() bool {
		status, _ := mini("GET", "/healthcheck", "")
		return status == http.StatusOK
	})

	if status, body := mini("POST", "/v1/import", doc); status != http.StatusCreated {
		t.Fatalf("Miniflux refused the export: %d %s\n%s\n%s", status, body, doc, logs.String())
	}
	status, body := mini("GET", "/v1/feeds", "")
	var feeds []struct {
		FeedURL string `json:"feed_url"`
		SiteURL string `json:"site_url"`
	}
	if err := json.Unmarshal([]byte(body), &feeds); status != http.StatusOK || err != nil {
		t.Fatalf("Miniflux's feeds: %d %s (%v)", status, body, err)
	}
	var got []string
	for _, f := range feeds {
		got = append(got, f.FeedURL+" "+f.SiteURL)
	}
	sort.Strings(got)
	want := []string{"https://a.example/ https://a.example/", "https://a.example/latest https://a.example/",
		"https://a.example/news-sitemap.xml https://a.example/", "https://b.example:8080/ https://b.example:8080/"}
	if !slices.Equal(got, want) {
		t.Fatalf("Miniflux subscribed to %v, want %v", got, want)
	}

	status, back := mini("GET", "/v1/export", "")
	if status != http.StatusOK {
		t.Fatalf("Miniflux's export: %d %s", status, back)
	}
	to := createFeed(t, c, "Back from Miniflux", "its export")["id"].(string)
	r := importOPML(t, c, to, back, map[string]string{"Content-Type": "application/xml"})
	d := wantDataObject(t, r, http.StatusOK)
	// Miniflux keeps no attribute of ours, so the index page comes back as
	// its site, which another outline attached already.
	if d["attached"] != float64(3) || d["alreadyAttached"] != float64(1) {
		t.Fatalf("importing Miniflux's export answered %s\n%s", r.Raw, back)
	}
	wantBack := []string{"site a.example", "site b.example:8080", "sitemap https://a.example/news-sitemap.xml"}
	if got := sourceIdentities(t, c, to); !slices.Equal(got, wantBack) {
		t.Fatalf("the feed imported from Miniflux holds %v, want %v", got, wantBack)
	}
}

func TestTheOPMLExportNamesTheFeedTheCrawlerFoundOnASite(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t, servicetest.WithCrawler())
	c := as(h, h.Key)
	site := crawltest.NewSite(t, "", false, "First story")
	feedID := createFeed(t, c, "Crawled", "a site with a feed")["id"].(string)
	attach(t, c, feedID, map[string]any{"sourceType": "site", "domain": site.Domain()})
	// Before the crawler's first poll the site's home page stands in.
	wait.Until(t, 30*time.Second, "the export to name the feed the crawler found", func() bool {
		return strings.Contains(exportOPML(t, c, feedID), `xmlUrl="`+site.FeedURL()+`"`)
	})
	doc := exportOPML(t, c, feedID)
	if !strings.Contains(doc, `htmlUrl="https://`+site.Domain()+`/"`) || strings.Count(doc, "<outline ") != 1 {
		t.Fatalf("the export is not the one site's outline:\n%s", doc)
	}
}
