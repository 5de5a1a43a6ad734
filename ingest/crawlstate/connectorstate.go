package crawlstate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// ConnectorStateOf reads what a source's connector keeps between polls (a
// site's discovery: its feeds and sitemaps), for an organization that
// attaches the source; false when the organization attaches none or the
// connector keeps nothing yet.
func ConnectorStateOf(ctx context.Context, db bun.IDB, org, sourceID uuid.UUID) (json.RawMessage, bool, error) {
	var state []byte
	err := db.NewRaw(`SELECT connector_state FROM crawl_state c WHERE source_id = ?
		AND EXISTS (SELECT 1 FROM ingest_attachments a WHERE a.source_id = c.source_id AND a.organization_id = ?)`,
		sourceID, org).Scan(ctx, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the connector state of source %s: %w", sourceID, err)
	}
	return state, len(state) > 0 && string(state) != "null", nil
}
