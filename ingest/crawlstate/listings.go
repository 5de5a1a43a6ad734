package crawlstate

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// ListingValidators are what a listing answered, to be sent with the
// next request for it.
type ListingValidators struct {
	URL, ETag, LastModified string
}

// SaveListings stores the validators of the source's listings for a
// crawl whose date window began at coveredSince: the rows of listings not
// among keep go, those of save are written (save's URLs are among keep).
func (s *Store) SaveListings(ctx context.Context, sourceID uuid.UUID, keep []string, save []ListingValidators, coveredSince time.Time) error {
	if keep == nil {
		keep = []string{}
	}
	_, err := s.db.NewRaw(`DELETE FROM crawl_listings WHERE source_id = ? AND url <> ALL(?::text[])`,
		sourceID, pgdialect.Array(keep)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("drop listing validators of source %s: %w", sourceID, err)
	}
	if len(save) == 0 {
		return nil
	}
	urls, etags, lastMods := make([]string, len(save)), make([]string, len(save)), make([]string, len(save))
	for i, v := range save {
		urls[i], etags[i], lastMods[i] = v.URL, v.ETag, v.LastModified
	}
	_, err = s.db.NewRaw(`INSERT INTO crawl_listings (source_id, url, etag, last_modified, covered_since)
		SELECT ?, u, e, l, ? FROM unnest(?::text[], ?::text[], ?::text[]) AS t(u, e, l)
		ON CONFLICT (source_id, url) DO UPDATE SET etag = EXCLUDED.etag, last_modified = EXCLUDED.last_modified,
			covered_since = EXCLUDED.covered_since`,
		sourceID, coveredSince, pgdialect.Array(urls), pgdialect.Array(etags), pgdialect.Array(lastMods)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("store listing validators of source %s: %w", sourceID, err)
	}
	return nil
}
