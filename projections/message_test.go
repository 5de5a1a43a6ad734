package projections

import (
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/feedsvc/feedsvc/eventstore"
)

func TestAProjectionMessageNamesItsBatchInItsPayloadAndGetsExactlyThoseEvents(t *testing.T) {
	at := func(commit, prepare uint64) Envelope {
		return Envelope{Position: eventstore.Position{Commit: commit, Prepare: prepare}}
	}
	events := []Envelope{at(7, 7), at(7, 9), at(1<<40, 3)}
	payload := encodePositions(events)
	t.Run("the payload lists the positions in log order", func(t *testing.T) {
		got, err := decodePositions(payload)
		if err != nil || len(got) != len(events) {
			t.Fatalf("%v, %v", got, err)
		}
		for i, p := range got {
			if p != events[i].Position {
				t.Fatalf("position %d is %s, want %s", i, p, events[i].Position)
			}
		}
	})
	s := &Subscriber{}
	s.setDelivering(&batch{events: events})
	cases := []struct {
		name    string
		payload []byte
		ok      bool
	}{
		{"the batch in flight is delivered to its message", payload, true},
		{"a message naming other positions gets nothing", encodePositions([]Envelope{at(7, 7), at(7, 8), at(1<<40, 3)}), false},
		{"a message naming part of the batch gets nothing", encodePositions(events[:2]), false},
		{"a payload that is no list of positions gets nothing", payload[:len(payload)-1], false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := s.delivered(message.NewMessage("m", c.payload))
			if c.ok != (err == nil) || c.ok && len(b.events) != len(events) {
				t.Fatalf("%v, %v", b, err)
			}
		})
	}
	t.Run("no message is delivered when no batch is in flight", func(t *testing.T) {
		s.setDelivering(nil)
		if _, err := s.delivered(message.NewMessage("m", payload)); err == nil {
			t.Fatal("a message was given a batch")
		}
	})
}
