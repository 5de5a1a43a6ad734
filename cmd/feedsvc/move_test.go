package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/eventstore/storetest"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/testkit/testdb"
	"github.com/feedsvc/feedsvc/testkit/wait"
	"github.com/feedsvc/feedsvc/webhook"
)

// installation is a database with a log as the service writes it: two
// organizations' feeds, renamed a few times, so that streams have several
// revisions.
type installation struct {
	db    *database.DB
	url   string
	store *eventstore.Postgres
	org   uuid.UUID
}

func newInstallation(t *testing.T) *installation {
	t.Helper()
	db, url := testdb.New(t)
	return &installation{db: db, url: url, store: eventstore.NewPostgres(db.Pool), org: uuid.New()}
}

// append records e in stream for org, as commands do.
func (in *installation) append(t *testing.T, stream string, org uuid.UUID, e domain.Event) {
	t.Helper()
	data, err := domain.EncodeEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	in.appendRaw(t, stream, org, e.EventType(), data)
}

func (in *installation) appendRaw(t *testing.T, stream string, org uuid.UUID, typ string, data []byte) {
	t.Helper()
	meta := fmt.Appendf(nil, `{"schemaVersion":1,"organizationId":%q}`, org)
	if _, err := in.store.AppendToStream(context.Background(), stream, eventstore.Any(),
		eventstore.EventData{ID: uuid.New(), Type: typ, Data: data, Metadata: meta}); err != nil {
		t.Fatal(err)
	}
}

// seedFeeds appends n feeds of two organizations, each created and
// renamed twice: 3n events.
func (in *installation) seedFeeds(t *testing.T, n int) {
	t.Helper()
	other := uuid.New()
	for i := range n {
		org := in.org
		if i%2 == 1 {
			org = other
		}
		id := uuid.New()
		stream := domain.FeedStream(domain.FeedNews, id)
		at := time.Date(2026, 11, 1, 0, 0, i, 0, time.UTC)
		in.append(t, stream, org, domain.FeedCreated{Kind: domain.FeedNews, FeedID: id, OrganizationID: org, Name: fmt.Sprint("feed ", i), At: at})
		for r := range 2 {
			in.append(t, stream, org, domain.FeedRenamed{Kind: domain.FeedNews, FeedID: id, Name: fmt.Sprint("feed ", i, " ", r), At: at})
		}
	}
}

func (in *installation) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := in.db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// run runs a feedsvc command against the installation's database.
func (in *installation) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	t.Setenv("DATABASE_URL", in.url)
	var out, errOut bytes.Buffer
	err := execute(context.Background(), args, &out, &errOut)
	return out.String() + errOut.String(), err
}

// exportFile exports the installation's log with args to a file.
func (in *installation) exportFile(t *testing.T, args ...string) []byte {
	t.Helper()
	file := filepath.Join(t.TempDir(), "log.ndjson")
	if out, err := in.run(t, append([]string{"events", "export", "--out", file}, args...)...); err != nil {
		t.Fatalf("export %v: %v\n%s", args, err, out)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sealKeyFile writes the installation's seal key to a file, as an
// operator keeps it (`feedsvc events seal-key --out`), and returns its path.
func (in *installation) sealKeyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seal.key")
	if out, err := in.run(t, "events", "seal-key", "--out", path); err != nil {
		t.Fatalf("seal-key: %v\n%s", err, out)
	}
	return path
}

func writeFile(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "import.ndjson")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEventsImportRefusesWithNothingWrittenAFileThatIsNot(t *testing.T) {
	t.Setenv("FEEDSVC_LOG_LEVEL", "error")
	src := newInstallation(t)
	src.seedFeeds(t, 40) // 120 events
	src.appendRaw(t, "gadget-1", src.org, "GadgetInvented", []byte(`{"name":"from a newer feedsvc"}`))
	storetest.ReadAllVisible(t, src.store, eventstore.Start, 121)
	whole := src.exportFile(t)
	lines := bytes.SplitAfter(whole, []byte("\n"))
	lines = lines[:len(lines)-1] // after the last newline
	if len(lines) != 123 {
		t.Fatalf("the export has %d lines, want a header, 121 events and a trailer", len(lines))
	}
	header, events, trailer := lines[0], lines[1:122], lines[122]
	// A feed's second rename: removing it leaves no gap in its stream, only
	// the count and checksum tell.
	removed := slices.Concat(header, bytes.Join(events[:5], nil), bytes.Join(events[6:], nil), trailer)
	if !bytes.Contains(events[5], []byte(`"revision":2`)) {
		t.Fatalf("line 7 is not a stream's last revision: %s", events[5])
	}
	cases := []struct {
		name string
		file []byte
		args []string
		want string
	}{
		{"empty", nil, nil, "the file is empty"},
		{"cut at a line boundary, half its events gone, no trailer", bytes.Join(lines[:61], nil), nil, "ends after line 61 (60 events) without its trailer: it was cut short"},
		{"missing one event", removed, []string{"--allow-unknown-types"}, "the trailer counts 121 events, the file holds 120"},
		{"changed after the export", bytes.Replace(whole, []byte(`"feed 3 1"`), []byte(`"feed 3 X"`), 1), []string{"--allow-unknown-types"}, "checksum in the trailer does not match"},
		{"holding an event of a type this feedsvc does not know", whole, nil, `unknown event type "GadgetInvented"`},
		{"an export of format version 1 (event lines only)", bytes.Join(events, nil), nil, "export the log again with this feedsvc"},
		{"exported with --type", src.exportFile(t, "--type", "NewsFeedCreated"), []string{"--allow-unknown-types"}, `partial export (filters {"types":["NewsFeedCreated"]})`},
		{"exported with --stream-prefix", src.exportFile(t, "--stream-prefix", "newsfeed-"), []string{"--allow-unknown-types"}, `partial export (filters {"streamPrefix":"newsfeed-"})`},
		{"exported with --org", src.exportFile(t, "--org", src.org.String()), []string{"--allow-unknown-types"}, "partial export (filters {\"organization\":\"" + src.org.String()},
		{"exported with --until", src.exportFile(t, "--until", "2100-01-01"), []string{"--allow-unknown-types"}, `partial export (filters {"until":"2100-01-01T00:00:00Z"})`},
		{"exported with --since", src.exportFile(t, "--since", "2000-01-01"), []string{"--allow-unknown-types"}, `partial export (filters {"since":`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := newInstallation(t)
			out, err := dst.run(t, append(append([]string{"events", "import"}, c.args...), writeFile(t, c.file))...)
			if err == nil {
				t.Fatalf("the import succeeded:\n%s", out)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nothing was imported") {
				t.Fatalf("the import answered %q, want it to say %q and that nothing was imported", err, c.want)
			}
			for _, table := range []string{"events", "event_store", "webhook_delivered_through"} {
				if n := dst.count(t, table); n != 0 {
					t.Fatalf("the refused import left %d rows in %s", n, table)
				}
			}
		})
	}

	t.Run("whole, with unknown types kept as asked", func(t *testing.T) {
		dst := newInstallation(t)
		if out, err := dst.run(t, "events", "import", "--seal-key-file", src.sealKeyFile(t), "--allow-unknown-types", writeFile(t, whole)); err != nil {
			t.Fatalf("import: %v\n%s", err, out)
		}
		if n := dst.count(t, "events"); n != 121 {
			t.Fatalf("imported %d events, want 121", n)
		}
	})
}

func TestAPartialImportIsAnAnalysisCopyThatServeRefuses(t *testing.T) {
	t.Setenv("FEEDSVC_LOG_LEVEL", "error")
	src := newInstallation(t)
	src.seedFeeds(t, 6)
	storetest.ReadAllVisible(t, src.store, eventstore.Start, 18)
	file := writeFile(t, src.exportFile(t, "--org", src.org.String()))

	dst := newInstallation(t)
	if out, err := dst.run(t, "events", "import", "--seal-key-file", src.sealKeyFile(t), "--partial", file); err != nil {
		t.Fatalf("a partial import with --partial: %v\n%s", err, out)
	}
	if n := dst.count(t, "events"); n != 9 {
		t.Fatalf("imported %d events, want the organization's 9", n)
	}
	t.Setenv("FEEDSVC_ROLES", "api")
	t.Setenv("FEEDSVC_ADDR", "127.0.0.1:0")
	_, err := dst.run(t, "serve")
	if err == nil || !strings.Contains(err.Error(), "partial log") || !strings.Contains(err.Error(), src.org.String()) {
		t.Fatalf("serve on a partial copy answered %v, want a refusal naming the partial log and its filters", err)
	}
}

// receiver is a webhook endpoint that counts the deliveries of each event.
type receiver struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string]int
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{got: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.got[req.Header.Get(webhook.HeaderEventID)]++
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

// counts returns the deliveries of each event so far, and their total.
func (r *receiver) counts() (map[string]int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	total := 0
	for _, n := range r.got {
		total += n
	}
	return maps.Clone(r.got), total
}

// await waits until cond holds of the deliveries.
func (r *receiver) await(t *testing.T, what string, cond func(map[string]int) bool) {
	t.Helper()
	var got map[string]int
	if !wait.Within(60*time.Second, func() bool { got, _ = r.counts(); return cond(got) }) {
		t.Fatalf("waited a minute for %s; deliveries %v", what, got)
	}
}

// serve runs `feedsvc serve` on the installation until the returned stop.
func (in *installation) serve(t *testing.T) (stop func()) {
	t.Helper()
	t.Setenv("DATABASE_URL", in.url)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	log, err := os.Create(filepath.Join(t.TempDir(), "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		err := execute(ctx, []string{"serve"}, log, log)
		log.Close()
		if err != nil {
			b, _ := os.ReadFile(log.Name())
			err = fmt.Errorf("%w\n%s", err, b)
		}
		done <- err
	}()
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("serve's log:\n%s", b)
		}
	})
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// subscribe records a webhook of the installation's organization to url,
// with its signing secret, as the API does.
func (in *installation) subscribe(t *testing.T, url string) {
	t.Helper()
	secretID, _, err := webhook.NewSecrets(in.db.Bun).Create(context.Background(), in.org, uuid.Must(uuid.NewV7()))
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.New()
	created, err := (&domain.Webhook{}).Create(id, in.org, domain.WebhookConfig{URL: url, Events: []string{domain.WebhookItemAdded}, EventFeedIDs: []uuid.UUID{}},
		secretID, domain.Now())
	if err != nil {
		t.Fatal(err)
	}
	in.append(t, domain.WebhookStream(id), in.org, created[0])
}

// addItem records a calendar event and its addition to an event feed of
// the organization, as ingestion does, and returns the id its deliveries
// carry.
func (in *installation) addItem(t *testing.T, feed uuid.UUID, title string) string {
	t.Helper()
	details, err := domain.NewHappeningDetails(domain.HappeningDetails{
		Identity: "https://example.com/events/" + uuid.NewString(), Title: title,
		Instances: []domain.HappeningInstance{{Key: "1", Status: domain.StatusScheduled,
			Occurrences: []domain.Occurrence{{Start: time.Date(2030, 5, 1, 18, 0, 0, 0, time.UTC)}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	now := domain.Now()
	var found domain.Happening
	discovered := found.Discover(uuid.New(), details, now)[0].(domain.HappeningDiscovered)
	in.append(t, domain.HappeningStream(discovered.HappeningID), uuid.Nil, discovered)
	var it domain.HappeningItem
	added := it.Add(domain.ItemTarget{FeedID: feed, OrganizationID: in.org, AttachmentID: uuid.New(), SourceID: uuid.New(), SourceType: domain.SourceSite},
		discovered.HappeningID, now)[0]
	data, err := domain.EncodeEvent(added)
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.New()
	if _, err := in.store.AppendToStream(context.Background(), domain.HappeningItemStream(feed, discovered.HappeningID), eventstore.Any(),
		eventstore.EventData{ID: id, Type: added.EventType(), Data: data, Metadata: fmt.Appendf(nil, `{"schemaVersion":1,"organizationId":%q}`, in.org)}); err != nil {
		t.Fatal(err)
	}
	return id.String()
}

func TestAMovedInstallationDeliversOnlyWhatHappensAfterTheMove(t *testing.T) {
	t.Setenv("FEEDSVC_LOG_LEVEL", "error")
	t.Setenv("FEEDSVC_ROLES", "webhooks")
	t.Setenv("FEEDSVC_ALLOW_PRIVATE_NETWORKS", "true") // the receiver is local
	t.Setenv("FEEDSVC_WEBHOOK_BACKOFF_BASE", "50ms")
	ctx := context.Background()
	recv := newReceiver(t)
	src := newInstallation(t)
	src.subscribe(t, recv.URL)
	feed := uuid.New()
	const old = 25
	for i := range old {
		src.addItem(t, feed, fmt.Sprint("before the move ", i))
	}

	// The old installation delivers its items, once each.
	stop := src.serve(t)
	recv.await(t, "the old installation's deliveries", func(got map[string]int) bool { return len(got) == old })
	stop()

	// The move, as docs/operating.md says: export, keep the seal key,
	// import into an empty database with it, copy the webhook secrets,
	// serve.
	file := writeFile(t, src.exportFile(t))
	key := src.sealKeyFile(t)
	dst := newInstallation(t)
	dst.org = src.org
	if out, err := dst.run(t, "events", "import", "--seal-key-file", key, file); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	rows, err := src.db.Pool.Query(ctx, "SELECT id, organization_id, secret, created_at FROM webhook_secrets")
	if err != nil {
		t.Fatal(err)
	}
	var secrets [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, v)
	}
	if err := rows.Err(); err != nil || len(secrets) != 1 {
		t.Fatalf("webhook secrets %d (err %v), want 1", len(secrets), err)
	}
	if _, err := dst.db.Pool.Exec(ctx, "INSERT INTO webhook_secrets (id, organization_id, secret, created_at) VALUES ($1, $2, $3, $4)", secrets[0]...); err != nil {
		t.Fatal(err)
	}
	stop = dst.serve(t)
	after := dst.addItem(t, feed, "after the move")
	recv.await(t, "the new item's delivery", func(got map[string]int) bool { return got[after] > 0 })
	// The dispatcher reads the log in order: by the time the new item is
	// delivered it has passed every old one, and anything it queued for
	// them is in the delivery log.
	if n := dst.count(t, "webhook_deliveries"); n != 1 {
		t.Fatalf("the moved installation queued %d deliveries, want the new item's alone", n)
	}
	stop()
	got, total := recv.counts()
	if total != old+1 || got[after] != 1 {
		t.Fatalf("the receiver got %d deliveries (%d of the new item), want %d: each old item once, before the move, and the new one once", total, got[after], old+1)
	}

	// Asked to, a move delivers again from a position of the file: here
	// the last old item's.
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var last struct {
		ID       string `json:"id"`
		Position struct{ Commit, Prepare uint64 }
	}
	for line := range bytes.Lines(b) {
		if bytes.Contains(line, []byte(`"type":"EventItemAdded"`)) {
			if err := json.Unmarshal(line, &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	again := newInstallation(t)
	from := fmt.Sprintf("%d/%d", last.Position.Commit, last.Position.Prepare)
	if out, err := again.run(t, "events", "import", "--seal-key-file", key, "--redeliver-from", from, file); err != nil {
		t.Fatalf("import --redeliver-from %s: %v\n%s", from, err, out)
	}
	if _, err := again.db.Pool.Exec(ctx, "INSERT INTO webhook_secrets (id, organization_id, secret, created_at) VALUES ($1, $2, $3, $4)", secrets[0]...); err != nil {
		t.Fatal(err)
	}
	again.serve(t)
	recv.await(t, "the redelivery of the last old item", func(got map[string]int) bool { return got[last.ID] == 2 })
	if n := again.count(t, "webhook_deliveries"); n != 1 {
		t.Fatalf("redelivering from the last old item queued %d deliveries, want 1", n)
	}
}

// An export carries a seal of the installation's key; an import checks it
// with the key the operator kept (`events seal-key`), so a file edited
// and given a new checksum is refused, and one whose key it was not given
// is refused unless --unverified, which says so.
func TestEventsImportChecksTheSealOfTheInstallationThatExported(t *testing.T) {
	t.Setenv("FEEDSVC_LOG_LEVEL", "warn")
	src := newInstallation(t)
	src.seedFeeds(t, 4) // 12 events
	storetest.ReadAllVisible(t, src.store, eventstore.Start, 12)
	whole := src.exportFile(t)
	key := src.sealKeyFile(t)
	lines := bytes.SplitAfter(whole, []byte("\n"))
	lines = lines[:len(lines)-1]
	header, events, trailer := lines[0], lines[1:len(lines)-1], lines[len(lines)-1]
	// A feed's last rename removed, the count and checksum computed again,
	// the seal copied: all an editor without the key can do.
	if !bytes.Contains(events[2], []byte(`"revision":2`)) {
		t.Fatalf("line 4 is not a stream's last revision: %s", events[2])
	}
	kept := slices.Concat(events[:2], events[3:])
	body := slices.Concat(header, bytes.Join(kept, nil))
	var end struct {
		End struct {
			Seal json.RawMessage `json:"seal"`
		} `json:"feedsvcExportEnd"`
	}
	if err := json.Unmarshal(trailer, &end); err != nil || end.End.Seal == nil {
		t.Fatalf("the trailer %s has no seal (%v)", trailer, err)
	}
	tampered := fmt.Appendf(body, `{"feedsvcExportEnd":{"events":%d,"sha256":"%x","seal":%s}}`+"\n", len(kept), sha256.Sum256(body), end.End.Seal)

	refused := []struct {
		name string
		file []byte
		args []string
		want []string
	}{
		{"an edited file with its checksum computed again", tampered, []string{"--seal-key-file", key}, []string{"seal does not match", "changed after its export"}},
		{"the same with --unverified", tampered, []string{"--seal-key-file", key, "--unverified"}, []string{"seal does not match"}},
		{"a whole file without its key", whole, nil, []string{"cannot be checked", "--seal-key-file", "--unverified"}},
	}
	for _, c := range refused {
		t.Run(c.name+" is refused", func(t *testing.T) {
			dst := newInstallation(t)
			out, err := dst.run(t, append(append([]string{"events", "import"}, c.args...), writeFile(t, c.file))...)
			if err == nil {
				t.Fatalf("the import succeeded:\n%s", out)
			}
			for _, w := range append(c.want, "nothing was imported") {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("the import answered %q, want it to say %q", err, w)
				}
			}
			if n := dst.count(t, "events"); n != 0 {
				t.Fatalf("the refused import left %d events", n)
			}
		})
	}
	t.Run("a whole file with --unverified imports and warns", func(t *testing.T) {
		dst := newInstallation(t)
		out, err := dst.run(t, "events", "import", "--unverified", writeFile(t, whole))
		if err != nil {
			t.Fatalf("import: %v\n%s", err, out)
		}
		if !strings.Contains(out, "without checking the file's seal") {
			t.Fatalf("the unchecked import did not say so:\n%s", out)
		}
		if n := dst.count(t, "events"); n != 12 {
			t.Fatalf("imported %d events, want 12", n)
		}
	})
	t.Run("a whole file with the installation's key imports, and the new installation keeps the key", func(t *testing.T) {
		dst := newInstallation(t)
		if out, err := dst.run(t, "events", "import", "--seal-key-file", key, writeFile(t, whole)); err != nil {
			t.Fatalf("import: %v\n%s", err, out)
		}
		want, _ := os.ReadFile(key)
		if got, _ := os.ReadFile(dst.sealKeyFile(t)); !bytes.Equal(got, want) {
			t.Fatalf("the moved installation's seal key differs from the one it was moved with")
		}
	})
	t.Run("seal-key prints the key alone on its last line, and --rotate replaces it", func(t *testing.T) {
		want, _ := os.ReadFile(key)
		out, err := src.run(t, "events", "seal-key")
		if err != nil {
			t.Fatal(err)
		}
		printed := strings.Split(strings.TrimSpace(out), "\n")
		if last := printed[len(printed)-1]; last+"\n" != string(want) {
			t.Fatalf("seal-key printed %q last, want the key", last)
		}
		out, err = src.run(t, "events", "seal-key", "--rotate")
		if err != nil || strings.Contains(out, strings.TrimSpace(string(want))) || !strings.Contains(out, "replaced") {
			t.Fatalf("--rotate printed (%v):\n%s", err, out)
		}
		dst := newInstallation(t)
		if _, err := dst.run(t, "events", "import", "--seal-key-file", key, writeFile(t, src.exportFile(t))); err == nil ||
			!strings.Contains(err.Error(), "seal does not match") {
			t.Fatalf("an export after the rotation checked with the old key: %v", err)
		}
	})
}
