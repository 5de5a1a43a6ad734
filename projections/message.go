package projections

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
)

// A batch travels to its handler in one Watermill message, as an event
// travels to a handler of Watermill's cqrs: the message's payload holds
// the batch's events as the log stores them, in log order, and the
// handler unmarshals them (unmarshalBatch) and applies what it got. The
// message's context holds the batch's transaction (TxFromContext), as
// watermill-sql's subscriber hands a handler the transaction its message
// was consumed in; the subscriber commits it, with the checkpoint, on the
// ack. When the handler fails, its message carries the reason back
// (failureKey) with the nack.
//
// Each event in the payload: its position (commit, prepare: 8 bytes each,
// big-endian), its revision (uvarint), when it was recorded (seconds and
// nanoseconds since the Unix epoch: varint, uvarint), its id (16 bytes),
// then its stream, type and data, each a uvarint length and its bytes.

// marshalBatch builds the message of a batch of events read from the log.
func marshalBatch(events []eventstore.RecordedEvent) *message.Message {
	size := 0
	for _, e := range events {
		size += 16 + 4*binary.MaxVarintLen64 + len(e.ID) + len(e.StreamID) + len(e.Type) + len(e.Data) + 3*binary.MaxVarintLen32
	}
	b := make([]byte, 0, size)
	for _, e := range events {
		b = binary.BigEndian.AppendUint64(b, e.Position.Commit)
		b = binary.BigEndian.AppendUint64(b, e.Position.Prepare)
		b = binary.AppendUvarint(b, e.Revision)
		b = binary.AppendVarint(b, e.RecordedAt.Unix())
		b = binary.AppendUvarint(b, uint64(e.RecordedAt.Nanosecond()))
		b = append(b, e.ID[:]...)
		b = appendField(b, []byte(e.StreamID))
		b = appendField(b, []byte(e.Type))
		b = appendField(b, e.Data)
	}
	var id string
	if len(events) > 0 {
		id = events[0].ID.String()
	}
	return message.NewMessage(id, b)
}

func appendField(b, field []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(field))), field...)
}

// errMalformed: a payload that is no batch of events.
var errMalformed = errors.New("the payload is no batch of events")

// unmarshalBatch decodes the events a batch's payload holds. An event this
// build cannot decode fails the whole batch (ErrUndecodable): a projector
// stops at it rather than skip it.
func unmarshalBatch(payload []byte) ([]Envelope, error) {
	var out []Envelope
	r := payloadReader{b: payload}
	for len(r.b) > 0 {
		var e eventstore.RecordedEvent
		e.Position.Commit, e.Position.Prepare = r.uint64(), r.uint64()
		e.Revision = r.uvarint()
		sec, nsec := r.varint(), r.uvarint()
		copy(e.ID[:], r.take(len(uuid.UUID{})))
		e.StreamID, e.Type, e.Data = string(r.field()), string(r.field()), r.field()
		if r.err != nil {
			return nil, fmt.Errorf("event %d: %w", len(out)+1, r.err)
		}
		if nsec >= uint64(time.Second) {
			return nil, fmt.Errorf("event %d: %w: %d nanoseconds", len(out)+1, errMalformed, nsec)
		}
		e.RecordedAt = time.Unix(sec, int64(nsec))
		env, err := decodeEnvelope(e)
		if err != nil {
			return nil, err
		}
		out = append(out, env)
	}
	return out, nil
}

// payloadReader reads a payload's fields; the first short or bad field
// sets err, and every read after it returns zero values.
type payloadReader struct {
	b   []byte
	err error
}

func (r *payloadReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.fail()
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *payloadReader) uint64() uint64 {
	if b := r.take(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (r *payloadReader) uvarint() uint64 { return readVarint(r, binary.Uvarint) }

func (r *payloadReader) varint() int64 { return readVarint(r, binary.Varint) }

// readVarint reads a varint with read (binary.Uvarint or binary.Varint).
func readVarint[T uint64 | int64](r *payloadReader, read func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	v, n := read(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *payloadReader) field() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	return r.take(int(n))
}

func (r *payloadReader) fail() {
	if r.err == nil {
		r.err = errMalformed
	}
	r.b = nil
}

// The metadata a failed handler's message carries back with its nack:
// the handler's error, and whether it met an event this build cannot
// decode (Watermill's poison queue keeps a failed message's reason in its
// metadata too).
const (
	failureKey     = "failure"
	undecodableKey = "undecodable"
)

// markFailed records on msg why its handler fails it.
func markFailed(msg *message.Message, err error) {
	msg.Metadata.Set(failureKey, err.Error())
	if errors.Is(err, ErrUndecodable) {
		msg.Metadata.Set(undecodableKey, "true")
	}
}

// nacked is the error of a batch whose handler nacked its message, as the
// message tells it.
type nacked struct {
	reason      string
	undecodable bool
}

func nackedError(msg *message.Message) error {
	reason := msg.Metadata.Get(failureKey)
	if reason == "" {
		reason = "the handler nacked the batch" // it panicked: the router logged why
	}
	return &nacked{reason: reason, undecodable: msg.Metadata.Get(undecodableKey) != ""}
}

func (e *nacked) Error() string { return e.reason }

// Is lets a rebuild tell a shadow projector stuck on an event this build
// cannot decode (ErrUndecodable).
func (e *nacked) Is(target error) bool { return target == ErrUndecodable && e.undecodable }
