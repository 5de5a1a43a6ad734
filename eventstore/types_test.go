package eventstore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/eventstore/storetest"
)

// The head watch of the projections wakes only the subscribers of the
// types the log moved by: TypesAfter must name every type after a
// position, each once, page by page, and stop below an append that has
// not committed yet, as every read does.
func TestTypesAfterNamesEachTypeAfterAPositionAndStopsAtTheFence(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := context.Background()
	var positions []eventstore.Position
	for _, typ := range []string{"A", "B", "A", "C", "B"} {
		r, err := s.AppendToStream(ctx, "s-"+typ, eventstore.Any(), storetest.Event(typ))
		if err != nil {
			t.Fatal(err)
		}
		positions = append(positions, r.Position)
	}
	for _, c := range []struct {
		name     string
		from     eventstore.Position
		max      int
		want     []string
		wantHead eventstore.Position
		wantFull bool
	}{
		{"the whole log", eventstore.Position{}, 0, []string{"A", "B", "C"}, positions[4], false},
		{"a page stops at max and says so", eventstore.Position{}, 2, []string{"A", "B"}, positions[1], true},
		{"the next page goes on from its head", positions[1], 2, []string{"A", "C"}, positions[3], true},
		{"after the last event there is nothing", positions[4], 10, nil, positions[4], false},
	} {
		t.Run(c.name, func(t *testing.T) {
			types, head, full, err := s.TypesAfter(ctx, c.from, c.max)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(types, c.want) || head != c.wantHead || full != c.wantFull {
				t.Fatalf("got %v, head %v, full %v; want %v, head %v, full %v", types, head, full, c.want, c.wantHead, c.wantFull)
			}
		})
	}

	t.Run("an append that has not committed holds the read back", func(t *testing.T) {
		cfg := eventstore.PoolOf(s).Config().ConnConfig.Copy()
		conn, err := pgx.Connect(ctx, cfg.ConnString())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx) //nolint:errcheck // closing
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx) //nolint:errcheck // ends it
		if _, err := tx.Exec(ctx, `INSERT INTO events (stream_id, stream_revision, event_id, event_type, data)
			VALUES ('held', 0, gen_random_uuid(), 'D', '{}')`); err != nil {
			t.Fatal(err)
		}
		after, err := s.AppendToStream(ctx, "s-E", eventstore.Any(), storetest.Event("E"))
		if err != nil {
			t.Fatal(err)
		}
		types, head, _, err := s.TypesAfter(ctx, positions[4], 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(types) != 0 || head != positions[4] {
			t.Fatalf("read %v to %v past an open append", types, head)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		types, head, _, err = s.TypesAfter(ctx, positions[4], 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(types, []string{"D", "E"}) || head != after.Position {
			t.Fatalf("after the commit: %v to %v, want [D E] to %v", types, head, after.Position)
		}
	})
}
