// Package idempotency makes a write request safe to repeat with the same
// Idempotency-Key: the Store keeps each key's first answer for 24 hours,
// and a Scope makes everything the request mints (ids of new resources,
// ids of the events it appends) a function of the key, so that running it
// again after a crash, or after an answer that was lost or was a 5xx,
// finds its own events in the log instead of doing the work twice.
package idempotency

import (
	"crypto/sha256"
	"encoding/binary"
	"time"

	"github.com/google/uuid"
)

// Scope is one idempotent request's identity: a random seed drawn when its
// key was first seen, and that moment. Reruns of the request get the same
// Scope from the Store. It is an explicit input of what runs the request
// (commands.Handler.Idempotent, webhook secrets), never carried in a
// context: it changes what a command does. The zero Scope is no request's:
// what is minted in it is fresh.
type Scope struct {
	seed [32]byte
	at   time.Time
	set  bool
}

// NewScope is the scope of a request with the given seed, first seen at
// at. The Store makes scopes; this serves callers with keys of their own,
// and tests.
func NewScope(seed [32]byte, at time.Time) Scope { return Scope{seed: seed, at: at, set: true} }

// Idempotent reports whether s is an idempotent request's (not the zero
// Scope).
func (s Scope) Idempotent() bool { return s.set }

// NewID is the id of what the request mints for purpose ("feed",
// "attachment"): the same on every run of an idempotent request, a fresh
// UUIDv7 in the zero Scope. A request must use each purpose for one thing
// only.
func (s Scope) NewID(purpose string) uuid.UUID {
	if s.set {
		return s.id("id", purpose, 0)
	}
	return uuid.Must(uuid.NewV7())
}

// Sub is the scope of the part name of the request in s: a request that
// runs one command many times (an OPML import attaches a source per
// outline) runs each in a part of its own, so that each mints its own ids
// and appends its own events, the same on every run. The zero Scope's
// parts are zero too.
func (s Scope) Sub(name string) Scope {
	if !s.set {
		return s
	}
	h := sha256.New()
	h.Write(s.seed[:])
	h.Write([]byte("sub\x00"))
	h.Write([]byte(name))
	var seed [32]byte
	copy(seed[:], h.Sum(nil))
	return Scope{seed: seed, at: s.at, set: true}
}

// EventID is the id of the i-th event the request appends to stream, and
// false in the zero Scope. A request appends to a stream at most once, so
// (stream, i) names one event.
func (s Scope) EventID(stream string, i int) (uuid.UUID, bool) {
	if !s.set {
		return uuid.Nil, false
	}
	return s.id("event", stream, i), true
}

// Stored finds the events the request in scope appended to a stream
// before, given the stream's events in order: it returns where they start
// and how many there are (0 when none, and always in the zero Scope).
func (s Scope) Stored(stream string, ids []uuid.UUID) (at, n int) {
	if !s.set {
		return 0, 0
	}
	first := s.id("event", stream, 0)
	for i, id := range ids {
		if id != first {
			continue
		}
		n = 1
		for i+n < len(ids) && ids[i+n] == s.id("event", stream, n) {
			n++
		}
		return i, n
	}
	return 0, 0
}

// id derives a UUIDv7 from the scope: its time is the scope's (ids minted
// by one request sort together, as v7 ids minted at once do), its random
// bits a hash of the seed and the name, so nobody without the seed can
// predict them.
func (s Scope) id(kind, name string, i int) uuid.UUID {
	h := sha256.New()
	h.Write(s.seed[:])
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(name))
	h.Write([]byte{0})
	_ = binary.Write(h, binary.BigEndian, int64(i))
	sum := h.Sum(nil)
	var u uuid.UUID
	ms := uint64(s.at.UnixMilli())
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	copy(u[6:], sum[:10])
	u[6] = 0x70 | u[6]&0x0f // version 7
	u[8] = 0x80 | u[8]&0x3f // RFC 9562 variant
	return u
}
