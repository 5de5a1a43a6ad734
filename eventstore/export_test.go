package eventstore

import "github.com/jackc/pgx/v5/pgxpool"

// ReadAllSQL lets the tests EXPLAIN the exact query ReadAll runs.
const ReadAllSQL = readAllSQL

// ReadAllOfTypesSQL lets the tests EXPLAIN ReadAllOfTypes' query.
const ReadAllOfTypesSQL = readAllOfTypesSQL

// PoolOf lets the contract open a second store on the same database.
func PoolOf(s *Postgres) *pgxpool.Pool { return s.pool }

// FenceSQL lets the tests read the log's fence alone.
const FenceSQL = fenceSQL

// OnExportSnapshot runs f between an export's snapshot and its fence
// until the test ends.
func OnExportSnapshot(t interface{ Cleanup(func()) }, f func()) {
	exportSnapshotTaken = f
	t.Cleanup(func() { exportSnapshotTaken = func() {} })
}
