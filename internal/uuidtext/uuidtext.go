// Package uuidtext writes a uuid in its canonical text form without
// allocating, for the hand-written JSON encoders on hot paths (the event
// log's NDJSON export, the item shapes) where id.String() would allocate a
// string per row.
package uuidtext

import (
	"encoding/hex"

	"github.com/google/uuid"
)

// Append appends id as id.String() would write it.
func Append(b []byte, id uuid.UUID) []byte {
	var buf [36]byte
	hex.Encode(buf[0:8], id[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], id[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], id[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], id[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:], id[10:])
	return append(b, buf[:]...)
}
