package crawlstate

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/ingest/attachments"
)

// PendingBackfills finds up to n enabled attachments whose backfill is to
// run (none yet, or one unfinished and not leased), oldest first: of
// every attachment when changedSince is zero, else of those that became
// crawlable after changedSince (the index on the latest of their attach
// and re-enable times) and those with an unfinished backfill (a partial
// index). Both texts are fixed and run through pgx, so that each is
// prepared once (see schedule.go).
func (s *Store) PendingBackfills(ctx context.Context, n int, changedSince time.Time) ([]attachments.Attachment, error) {
	var rows pgx.Rows
	var err error
	if changedSince.IsZero() {
		rows, err = s.pool.Query(ctx, `SELECT `+attachments.Columns+`
			FROM ingest_attachments a LEFT JOIN ingest_backfills b ON b.attachment_id = a.attachment_id
			WHERE a.source_enabled AND a.feed_enabled
			  AND (b.attachment_id IS NULL OR (b.done_at IS NULL AND (b.leased_until IS NULL OR b.leased_until < now())))
			ORDER BY a.attached_at LIMIT $1`, n)
	} else {
		rows, err = s.pool.Query(ctx, `SELECT `+attachments.Columns+` FROM (
			  (SELECT a.* FROM ingest_attachments a
			    WHERE a.source_enabled AND a.feed_enabled
			      AND greatest(a.attached_at, a.source_enabled_at, a.feed_enabled_at) > $2
			      AND NOT EXISTS (SELECT 1 FROM ingest_backfills b WHERE b.attachment_id = a.attachment_id))
			  UNION ALL
			  (SELECT a.* FROM ingest_backfills b JOIN ingest_attachments a ON a.attachment_id = b.attachment_id
			    WHERE b.done_at IS NULL AND (b.leased_until IS NULL OR b.leased_until < now())
			      AND a.source_enabled AND a.feed_enabled)) a
			ORDER BY a.attached_at LIMIT $1`, n, changedSince)
	}
	var pending []attachments.Attachment
	if err == nil {
		pending, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (attachments.Attachment, error) {
			var a attachments.Attachment
			err := row.Scan(a.Dest()...)
			return a, err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("find pending backfills: %w", err)
	}
	return pending, nil
}

// FinishBackfill marks the backfill of an attachment, leased to this
// process (Backfills.Claim), done with the items it added, and hands its
// lease back.
func (s *Store) FinishBackfill(ctx context.Context, attachmentID any, items int) error {
	return s.Backfills.l.Release(ctx, attachmentID, "done_at = now(), items = ?", items)
}
