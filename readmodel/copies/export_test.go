package copies

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// IndexRow is an index row as the projector defers it, for tests outside
// the package.
type IndexRow struct {
	FeedID, NewsPageID, ItemNewsPageID uuid.UUID
	Address, Title, Signature          string
	At                                 time.Time
	Bands                              []int64
}

// FlushIndexRows writes rows as a batch's deferred index rows are written.
func FlushIndexRows(ctx context.Context, db bun.IDB, rows []IndexRow) error {
	w := &indexRows{}
	for _, r := range rows {
		w.rows = append(w.rows, indexRow{feedID: r.FeedID, newsPageID: r.NewsPageID, itemNewsPageID: r.ItemNewsPageID,
			address: r.Address, title: r.Title, signature: r.Signature, at: r.At, bands: r.Bands})
	}
	return w.Flush(ctx, db)
}
