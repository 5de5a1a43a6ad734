package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// siteReader reads site sources; the claims never call it.
type siteReader struct{}

func (siteReader) SourceTypes() []domain.SourceType { return []domain.SourceType{domain.SourceSite} }
func (siteReader) Discover(context.Context, connector.Source, time.Time) (connector.Discovery, error) {
	return connector.Discovery{}, nil
}
func (siteReader) Fetch(context.Context, connector.Candidate) (document.Document, error) {
	return document.Document{}, nil
}

// siteReaders is a registry of siteReader alone.
func siteReaders(t *testing.T) *connector.Registry {
	t.Helper()
	registry, err := connector.NewRegistry(siteReader{})
	if err != nil {
		t.Fatal(err)
	}
	return registry
}

// The claim reads, in the statement that leases the batch, what each
// crawl reads first; these are the rows it must read them from.
func TestAClaimReadsEachLeasedSourcesAttachmentsValidatorsAndFlags(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ctx := context.Background()
	w := New(Parts{DB: db.Bun, Pool: db.Pool, Connectors: siteReaders(t)}, Config{Owner: "claim-test"}, nil)

	// plain: one attachment, nothing stored. rich: two attachments (one
	// disabled), two stored listings, a failed URL and an event document.
	// unread: due, but of a type no connector reads. detached: leased to
	// this process with no attachment left.
	plain, rich, unread, detached := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	attach := func(source uuid.UUID, typ string, enabled bool, at time.Time) uuid.UUID {
		t.Helper()
		id := uuid.New()
		if _, err := db.Pool.Exec(ctx, `INSERT INTO ingest_attachments (attachment_id, feed_id, organization_id, source_id, source_type,
			details, source_enabled, feed_enabled, attached_at)
			VALUES ($1, $2, $3, $4, $5, '{"sourceType": "site", "domain": "example.com"}', $6, true, $7)`,
			id, uuid.New(), uuid.New(), source, typ, enabled, at); err != nil {
			t.Fatal(err)
		}
		return id
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	attach(plain, "site", true, now)
	richFirst := attach(rich, "site", true, now.Add(-time.Hour))
	richSecond := attach(rich, "site", false, now)
	attach(unread, "instagram", true, now)
	for _, id := range []uuid.UUID{plain, rich, unread} {
		if _, err := db.Pool.Exec(ctx, `INSERT INTO crawl_state (source_id, next_at, failures, connector_state)
			VALUES ($1, now() - interval '1 minute', 2, '{"k": 1}')`, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO crawl_state (source_id, next_at, leased_until, lease_owner)
		VALUES ($1, now(), now() + interval '1 minute', 'claim-test')`, detached); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"https://example.com/feed.xml", "https://example.com/sitemap.xml"} {
		if _, err := db.Pool.Exec(ctx, `INSERT INTO crawl_listings (source_id, url, etag, last_modified, covered_since)
			VALUES ($1, $2, $3, 'Mon, 02 Jan 2026 15:04:05 GMT', $4)`, rich, u, `"`+u+`"`, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO crawl_failures (source_id, url) VALUES ($1, 'https://example.com/a')`, rich); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO ingest_event_documents (source_id, url) VALUES ($1, 'https://example.com/e')`, rich); err != nil {
		t.Fatal(err)
	}

	claimed, err := w.claimScheduled(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uuid.UUID]leased{}
	for _, l := range claimed {
		got[l.SourceID] = l
	}
	if len(claimed) != 2 || len(got) != 2 {
		t.Fatalf("claimed %d sources (%v), want plain and rich once each", len(claimed), got)
	}
	if p := got[plain]; len(p.attachments) != 1 || len(p.listings) != 0 || p.hasFailures || p.hasHappeningDocs ||
		p.Failures != 2 || string(p.State) != `{"k": 1}` {
		t.Errorf("plain source read as %+v, want its one attachment, failures 2, its state and nothing else", p)
	}
	r := got[rich]
	if len(r.attachments) != 2 || r.attachments[0].AttachmentID != richFirst || r.attachments[1].AttachmentID != richSecond ||
		r.attachments[1].SourceEnabled || r.attachments[0].SourceType != domain.SourceSite || !r.attachments[0].AttachedAt.Equal(now.Add(-time.Hour)) {
		t.Errorf("rich source's attachments read as %+v, want both, oldest first", r.attachments)
	}
	if len(r.listings) != 2 || r.listings[0].ETag != `"`+r.listings[0].URL+`"` || !r.listings[1].CoveredSince.Equal(now) ||
		r.listings[1].LastModified != "Mon, 02 Jan 2026 15:04:05 GMT" {
		t.Errorf("rich source's listings read as %+v, want both with their validators", r.listings)
	}
	if !r.hasFailures || !r.hasHappeningDocs {
		t.Errorf("rich source: failures %v, event documents %v, want both", r.hasFailures, r.hasHappeningDocs)
	}
	if again, err := w.claimScheduled(ctx, 10); err != nil || len(again) != 0 {
		t.Errorf("a second claim took %d sources (err %v), want none: both are leased", len(again), err)
	}

	rows, err := w.pool.Query(ctx, loadLeasedSQL, []uuid.UUID{detached, plain}, "claim-test")
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := scanLeased(rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded) != 2 {
		t.Fatalf("read %d leased sources, want 2: one without attachments is read too", len(loaded))
	}
	for _, l := range loaded {
		if l.SourceID == detached && len(l.attachments) != 0 {
			t.Errorf("detached source read with attachments %+v", l.attachments)
		}
	}
}
