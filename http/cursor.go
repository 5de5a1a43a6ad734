package http

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/readmodel/changes"
)

// An item-list cursor is a change key (changes.Key) bound to its
// feed, in an opaque, versioned form: base64url (no padding) of
//
//	version (1 byte, 1) | feed id (16) | commit (8) | prepare (8) | item id (16) | CRC-32C of the rest (4)
//
// The checksum catches a cursor cut short or mistyped, which would
// otherwise decode as some other position; the feed id makes a cursor of
// another feed an error rather than a position in this one. Nothing in it
// is secret: a forged cursor is only a position in the caller's own feed.
// A later format takes the next version number, and versions still read
// keep working.
const (
	cursorVersion  = 1
	cursorBytes    = 1 + 16 + 8 + 8 + 16 + 4
	cursorEncLen   = (cursorBytes*8 + 5) / 6
	cursorChecksum = cursorBytes - 4
)

var (
	// Strict: one spelling per cursor, so a changed last character is an
	// error rather than the same cursor.
	cursorEncoding = base64.RawURLEncoding.Strict()
	cursorTable    = crc32.MakeTable(crc32.Castagnoli)
)

// encodeCursor is the cursor of key in feed's list.
func encodeCursor(feed uuid.UUID, key changes.Key) string {
	var b [cursorBytes]byte
	b[0] = cursorVersion
	copy(b[1:17], feed[:])
	binary.BigEndian.PutUint64(b[17:25], key.Commit)
	binary.BigEndian.PutUint64(b[25:33], key.Prepare)
	copy(b[33:49], key.Item[:])
	binary.BigEndian.PutUint32(b[cursorChecksum:], crc32.Checksum(b[:cursorChecksum], cursorTable))
	return cursorEncoding.EncodeToString(b[:])
}

// decodeCursor reads a cursor of feed's list. The errors never quote it.
func decodeCursor(raw string, feed uuid.UUID) (changes.Key, error) {
	return decodeCursorAs(raw, feed, "cursor", "is not a cursor this API issued (pass pagination.nextCursor as given)")
}

// decodeCursorAs reads a cursor of feed's list given as field (a live
// stream's event id is one); malformed is the issue a cursor this API did
// not issue is answered with.
func decodeCursorAs(raw string, feed uuid.UUID, field, issue string) (changes.Key, error) {
	malformed := envelope.BadRequest(field, issue)
	if len(raw) != cursorEncLen {
		return changes.Key{}, malformed
	}
	var b [cursorBytes]byte
	if n, err := cursorEncoding.Decode(b[:], []byte(raw)); err != nil || n != cursorBytes {
		return changes.Key{}, malformed
	}
	if binary.BigEndian.Uint32(b[cursorChecksum:]) != crc32.Checksum(b[:cursorChecksum], cursorTable) || b[0] != cursorVersion {
		return changes.Key{}, malformed
	}
	if uuid.UUID(b[1:17]) != feed {
		return changes.Key{}, envelope.BadRequest(field, "belongs to another feed's item list")
	}
	return changes.Key{
		Commit:  binary.BigEndian.Uint64(b[17:25]),
		Prepare: binary.BigEndian.Uint64(b[25:33]),
		Item:    uuid.UUID(b[33:49]),
	}, nil
}

// cursorParam reads the cursor query parameter of feed's item list: nil
// when absent (the list pages by offset); the start of the feed's changes
// when given empty (`?cursor=`); else the position the cursor names.
func cursorParam(c *fiber.Ctx, feed uuid.UUID) (*changes.Key, error) {
	if !c.Request().URI().QueryArgs().Has("cursor") {
		return nil, nil
	}
	raw := c.Query("cursor")
	if raw == "" {
		return &changes.Key{}, nil
	}
	key, err := decodeCursor(raw, feed)
	if err != nil {
		return nil, err
	}
	return &key, nil
}

// withoutOffset refuses paging parameters a cursor replaces: a page of
// changes starts at its cursor, in change order.
func withoutOffset(c *fiber.Ctx, params ...string) error {
	for _, p := range params {
		if c.Query(p) != "" {
			return envelope.BadRequest(p, "cannot be combined with cursor: changes are listed in the order they happened, from the cursor on")
		}
	}
	return nil
}
