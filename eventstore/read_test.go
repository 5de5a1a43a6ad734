package eventstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/feedsvc/feedsvc/eventstore"
)

func TestEventsYieldsAWholeStreamInOrderWhateverThePageSize(t *testing.T) {
	ctx := context.Background()
	store := eventstore.NewMemory()
	for i := range 5 {
		if _, err := store.AppendToStream(ctx, "s", eventstore.Any(), eventstore.EventData{Type: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name          string
		stream        string
		page, breakAt int
		want          string
	}{
		{"pages smaller than the stream", "s", 2, -1, "01234"},
		{"a page the size of the stream", "s", 5, -1, "01234"},
		{"a page larger than the stream", "s", 100, -1, "01234"},
		{"a loop broken early", "s", 2, 3, "012"},
		{"a stream without events", "none", 2, -1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ""
			for r, err := range eventstore.Events(ctx, store, c.stream, c.page) {
				if err != nil {
					t.Fatal(err)
				}
				if len(got) == c.breakAt {
					break
				}
				got += r.Type
			}
			if got != c.want {
				t.Fatalf("read %q, want %q", got, c.want)
			}
		})
	}
	t.Run("a failed read is yielded once", func(t *testing.T) {
		n := 0
		for _, err := range eventstore.Events(ctx, failing{store}, "s", 2) {
			n++
			if !errors.Is(err, errBroken) {
				t.Fatalf("error %v", err)
			}
		}
		if n != 1 {
			t.Fatalf("%d yields", n)
		}
	})
}

var errBroken = errors.New("broken")

type failing struct{ eventstore.Store }

func (failing) ReadStream(context.Context, string, uint64, int) ([]eventstore.RecordedEvent, error) {
	return nil, errBroken
}
