package crawlstate

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// The claim reads, in the statement that leases the batch, what each
// crawl reads first; these are the rows it must read them from.
func TestAClaimReadsEachLeasedSourcesAttachmentsValidatorsAndFlags(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ctx := context.Background()
	w := New(db.Bun, db.Pool, Options{Owner: "claim-test", LeaseDuration: 5 * time.Minute})
	// The crawler's connectors read site sources only.
	types := []string{string(domain.SourceSite)}

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

	claimed, err := w.ClaimScheduled(ctx, types, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uuid.UUID]Leased{}
	for _, l := range claimed {
		got[l.SourceID] = l
	}
	if len(claimed) != 2 || len(got) != 2 {
		t.Fatalf("claimed %d sources (%v), want plain and rich once each", len(claimed), got)
	}
	if p := got[plain]; len(p.Attachments) != 1 || len(p.Listings) != 0 || p.HasFailures || p.HasHappeningDocs ||
		p.Failures != 2 || string(p.State) != `{"k": 1}` {
		t.Errorf("plain source read as %+v, want its one attachment, failures 2, its state and nothing else", p)
	}
	r := got[rich]
	if len(r.Attachments) != 2 || r.Attachments[0].AttachmentID != richFirst || r.Attachments[1].AttachmentID != richSecond ||
		r.Attachments[1].SourceEnabled || r.Attachments[0].SourceType != domain.SourceSite || !r.Attachments[0].AttachedAt.Equal(now.Add(-time.Hour)) {
		t.Errorf("rich source's attachments read as %+v, want both, oldest first", r.Attachments)
	}
	if len(r.Listings) != 2 || r.Listings[0].ETag != `"`+r.Listings[0].URL+`"` || !r.Listings[1].CoveredSince.Equal(now) ||
		r.Listings[1].LastModified != "Mon, 02 Jan 2026 15:04:05 GMT" {
		t.Errorf("rich source's listings read as %+v, want both with their validators", r.Listings)
	}
	if !r.HasFailures || !r.HasHappeningDocs {
		t.Errorf("rich source: failures %v, event documents %v, want both", r.HasFailures, r.HasHappeningDocs)
	}
	if again, err := w.ClaimScheduled(ctx, types, 10); err != nil || len(again) != 0 {
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
		if l.SourceID == detached && len(l.Attachments) != 0 {
			t.Errorf("detached source read with attachments %+v", l.Attachments)
		}
	}
}
