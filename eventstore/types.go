package eventstore

import (
	"context"
	"fmt"
	"math"
	"strconv"
)

// typesAfterSQL lists the events after a position and below the fence, in
// log order, by type and position only: their data never leaves the
// server.
const typesAfterSQL = `
SELECT event_type, transaction_id::text::bigint, global_position
FROM events
WHERE (transaction_id, global_position) > ($1::text::xid8, $2::bigint)
  AND transaction_id < $4::text::xid8
ORDER BY transaction_id, global_position
LIMIT $3`

// TypesAfter reads, below the fence like every read, the types of the
// events strictly after from: up to max events (max <= 0: all), each type
// once, and the position of the last one read (from when there is none).
// full says the read stopped at max, so the log may go on past head.
//
// It is not part of Store: it serves the projections' head watch, which
// wakes only the subscribers of the types the log moved by (an append of
// one type would otherwise wake a dozen projectors, each to read nothing
// and move its checkpoint). A store without it is watched by head alone.
func (s *Postgres) TypesAfter(ctx context.Context, from Position, max int) (types []string, head Position, full bool, err error) {
	if max <= 0 {
		max = math.MaxInt32
	}
	fence, err := s.fence(ctx)
	if err != nil {
		return nil, from, false, fmt.Errorf("read the types after %s: %w", from, err)
	}
	rows, err := s.pool.Query(ctx, typesAfterSQL,
		strconv.FormatUint(from.Commit, 10), int64(min(from.Prepare, math.MaxInt64)), int64(max), fence)
	if err != nil {
		return nil, from, false, fmt.Errorf("read the types after %s: %w", from, err)
	}
	defer rows.Close()
	head, n := from, 0
	seen := map[string]bool{}
	for rows.Next() {
		var (
			typ        string
			txid, gpos int64
		)
		if err := rows.Scan(&typ, &txid, &gpos); err != nil {
			return nil, from, false, fmt.Errorf("read the types after %s: %w", from, err)
		}
		if !seen[typ] {
			seen[typ] = true
			types = append(types, typ)
		}
		head = Position{Commit: uint64(txid), Prepare: uint64(gpos)}
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, from, false, fmt.Errorf("read the types after %s: %w", from, err)
	}
	return types, head, n == max, nil
}
