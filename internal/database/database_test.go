package database_test

import (
	"context"
	"sync"
	"testing"

	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// Processes starting together on a new installation (serve and migrate,
// two replicas) each create the database if it is missing; whoever loses
// the race must not fail. Postgres reports a lost race as duplicate
// database (42P04) or, when both passed its check at once, as a unique
// violation on pg_database (23505); the latter failed serve's start.
// A private cluster: its databases die with it.
func TestProcessesCreatingTheDatabaseTogetherAllSucceed(t *testing.T) {
	c := testdb.NewCluster(t, testdb.ClusterOptions{MaxConnections: 40})
	for round := range 5 {
		url := c.Database("race" + string(rune('a'+round)))
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() { errs <- database.EnsureDatabase(context.Background(), url) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
