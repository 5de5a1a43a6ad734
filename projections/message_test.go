package projections

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
)

// recorded is an event as the log returns it.
func recorded(t *testing.T, e domain.Event, stream string, revision uint64, pos eventstore.Position, at time.Time) eventstore.RecordedEvent {
	t.Helper()
	data, err := domain.EncodeEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	return eventstore.RecordedEvent{
		ID: uuid.New(), StreamID: stream, Revision: revision, Type: e.EventType(), Data: data,
		Position: pos, RecordedAt: at,
	}
}

func TestTheMessageOfABatchCarriesExactlyTheEventsItsHandlerApplies(t *testing.T) {
	feed := uuid.New()
	at := time.Date(2026, 11, 28, 9, 30, 15, 123456000, time.UTC)
	events := []eventstore.RecordedEvent{
		recorded(t, domain.FeedCreated{Kind: domain.FeedNews, FeedID: feed, Name: "news", At: at}, "newsfeed-1", 0, eventstore.Position{Commit: 7, Prepare: 7}, at),
		recorded(t, domain.FeedRenamed{Kind: domain.FeedNews, FeedID: feed, Name: "renamed", At: at}, "newsfeed-1", 1, eventstore.Position{Commit: 7, Prepare: 9}, at.Add(time.Microsecond)),
		recorded(t, domain.FeedRenamed{Kind: domain.FeedHappenings, FeedID: feed, Name: "ünïcode ✓", At: at}, "eventfeed-2", 1<<40, eventstore.Position{Commit: 1 << 40, Prepare: 3}, time.Time{}),
	}
	msg := marshalBatch(events)
	got, err := unmarshalBatch(msg.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(events) {
		t.Fatalf("the handler got %d events, the batch has %d", len(got), len(events))
	}
	for i, e := range events {
		want, err := decodeEnvelope(e)
		if err != nil {
			t.Fatal(err)
		}
		g := got[i]
		if g.EventID != want.EventID || g.StreamID != want.StreamID || g.Revision != want.Revision || g.Position != want.Position ||
			!g.RecordedAt.Equal(want.RecordedAt) || !reflect.DeepEqual(g.Event, want.Event) {
			t.Errorf("event %d: the handler got %+v, the batch holds %+v", i, g, want)
		}
	}
	if msg.UUID != events[0].ID.String() {
		t.Errorf("the message is named %s, want its first event's id %s", msg.UUID, events[0].ID)
	}

	t.Run("a payload cut inside an event is refused", func(t *testing.T) {
		for _, cut := range []int{1, 15, 17, len(msg.Payload) - 1} {
			if _, err := unmarshalBatch(msg.Payload[:cut]); !errors.Is(err, errMalformed) {
				t.Errorf("a payload cut at %d of %d bytes: got %v, want %v", cut, len(msg.Payload), err, errMalformed)
			}
		}
	})
	t.Run("an event this build cannot decode fails the batch, naming it", func(t *testing.T) {
		bad := events[1]
		bad.Data = []byte(`{"feedId": 5}`)
		_, err := unmarshalBatch(marshalBatch([]eventstore.RecordedEvent{events[0], bad}).Payload)
		if !errors.Is(err, ErrUndecodable) || !strings.Contains(err.Error(), bad.ID.String()) {
			t.Fatalf("got %v, want ErrUndecodable naming %s", err, bad.ID)
		}
	})
}

// A handler's error travels back to the subscriber on the nacked message:
// its text for the logs and the readiness check, and whether the batch
// met an event this build cannot decode, which a rebuild must not retry.
func TestANackedMessageCarriesItsHandlersErrorBack(t *testing.T) {
	for _, tt := range []struct {
		name        string
		err         error
		undecodable bool
	}{
		{"a failing write", errors.New("newsitems: project NewsItemAdded: write read model: deadlock detected"), false},
		{"an undecodable event", fmt.Errorf("event 1 (X at 7/7): %w: bad json", ErrUndecodable), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := marshalBatch(nil)
			markFailed(msg, tt.err)
			got := nackedError(msg)
			if got.Error() != tt.err.Error() || errors.Is(got, ErrUndecodable) != tt.undecodable {
				t.Fatalf("the nack says %q (undecodable %v), the handler failed with %q (undecodable %v)",
					got, errors.Is(got, ErrUndecodable), tt.err, tt.undecodable)
			}
		})
	}
	if got := nackedError(marshalBatch(nil)); got == nil || got.Error() == "" {
		t.Fatalf("a message nacked without a reason (a panic) gives %v", got)
	}
}
