package eventstore

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// An export's trailer holds, beside the plain checksum that shows damage,
// a seal that shows where the file came from: an HMAC-SHA256, keyed with
// the installation's seal key, of the checksum and the count. Anyone can
// remove lines and compute the checksum again; without the key no one can
// compute the seal again. The key is 32 random bytes the installation
// makes once and keeps in its database (event_store.seal_key); the
// operator keeps a copy with the installation's other secrets (`feedsvc
// events seal-key` prints it), since an import into another database
// checks the seal only with the key it is given.
//
//	{"feedsvcExportEnd":{"events":8001,"sha256":"…","seal":{"alg":"HMAC-SHA256","key":"…","mac":"…"}}}

// SealAlgorithm is the only algorithm seals are made with.
const SealAlgorithm = "HMAC-SHA256"

// sealKeyLen is a seal key's length in bytes.
const sealKeyLen = 32

// SealKey is a key exports are sealed with. Its zero value is no key.
type SealKey struct {
	secret []byte
}

// ParseSealKey reads a key as Hex writes it (64 hex digits; surrounding
// space is ignored, so a file holding it with a newline reads).
func ParseSealKey(text string) (SealKey, error) {
	b, err := hex.DecodeString(strings.TrimSpace(text))
	if err != nil || len(b) != sealKeyLen {
		return SealKey{}, errors.New("a seal key is 64 hex digits (as `feedsvc events seal-key` prints it)")
	}
	return SealKey{secret: b}, nil
}

func newSealKey() (SealKey, error) {
	b := make([]byte, sealKeyLen)
	if _, err := rand.Read(b); err != nil {
		return SealKey{}, fmt.Errorf("make a seal key: %w", err)
	}
	return SealKey{secret: b}, nil
}

// Valid reports whether k is a key.
func (k SealKey) Valid() bool { return len(k.secret) == sealKeyLen }

// Hex is the key itself, for the operator to keep: a secret.
func (k SealKey) Hex() string { return hex.EncodeToString(k.secret) }

// ID names the key without revealing it (the first 8 bytes of its
// SHA-256, in hex): a seal says which key made it.
func (k SealKey) ID() string {
	sum := sha256.Sum256(k.secret)
	return hex.EncodeToString(sum[:8])
}

// String is the key's id: a key printed by mistake shows no secret.
func (k SealKey) String() string { return "seal key " + k.ID() }

// ExportSeal is the seal of an export's trailer.
type ExportSeal struct {
	Alg string `json:"alg"`
	// Key is the id of the key that made it.
	Key string `json:"key"`
	MAC string `json:"mac"`
}

// seal is the seal of a file with this checksum and count.
func (k SealKey) seal(sha string, events int64) ExportSeal {
	return ExportSeal{Alg: SealAlgorithm, Key: k.ID(), MAC: hex.EncodeToString(k.mac(sha, events))}
}

func (k SealKey) mac(sha string, events int64) []byte {
	m := hmac.New(sha256.New, k.secret)
	m.Write([]byte("feedsvc export seal 1\n" + sha + "\n" + strconv.FormatInt(events, 10)))
	return m.Sum(nil)
}

// verifies reports whether s is k's seal of a file with this checksum and
// count.
func (k SealKey) verifies(s ExportSeal, sha string, events int64) bool {
	got, err := hex.DecodeString(s.MAC)
	return err == nil && s.Alg == SealAlgorithm && s.Key == k.ID() && hmac.Equal(got, k.mac(sha, events))
}

// ErrNotSealed is the error of an import, without ImportOptions.Unverified,
// of a file whose trailer has no seal (written before feedsvc sealed its
// exports, or with the seal removed).
var ErrNotSealed = errors.New("the file has no seal")

// ErrSealNotChecked is the error of an import, without
// ImportOptions.Unverified, of a sealed file whose key it was not given.
var ErrSealNotChecked = errors.New("the file's seal cannot be checked")

// ErrSealMismatch is the error of an import of a file whose seal the key
// it was given (or the store's own) does not make: the file was changed
// and its checksum computed again, or it was sealed with another key.
var ErrSealMismatch = errors.New("the file's seal does not match")

// SealCheck is what an import found of its file's seal.
type SealCheck struct {
	// Sealed: the file has a seal; Key names the key that made it.
	Sealed bool
	Key    string
	// Verified: the seal was checked, and holds.
	Verified bool
}

// SealKey returns the installation's seal key, making it (and the store's
// identity) on first use.
func (s *Postgres) SealKey(ctx context.Context) (SealKey, error) {
	if _, err := s.Identity(ctx); err != nil {
		return SealKey{}, err
	}
	fresh, err := newSealKey()
	if err != nil {
		return SealKey{}, err
	}
	// Only where there is none; the select then reads whichever key won.
	if _, err := s.pool.Exec(ctx, "UPDATE event_store SET seal_key = $1, seal_key_made_at = now() WHERE seal_key IS NULL", fresh.secret); err != nil {
		return SealKey{}, fmt.Errorf("make the seal key: %w", err)
	}
	k, err := storedSealKey(ctx, s.pool)
	if err == nil && !k.Valid() {
		err = errors.New("the event store has no seal key")
	}
	return k, err
}

// RotateSealKey replaces the installation's seal key with a new one and
// returns both (the old one's zero value when there was none). Exports
// sealed before can then be checked only with the old key.
func (s *Postgres) RotateSealKey(ctx context.Context) (old, fresh SealKey, err error) {
	if _, err := s.Identity(ctx); err != nil {
		return SealKey{}, SealKey{}, err
	}
	if fresh, err = newSealKey(); err != nil {
		return SealKey{}, SealKey{}, err
	}
	// The old key as this statement replaced it (FOR UPDATE in the
	// subquery serialises two rotations).
	err = s.pool.QueryRow(ctx, `UPDATE event_store AS e SET seal_key = $1, seal_key_made_at = now()
		FROM (SELECT seal_key FROM event_store FOR UPDATE) AS before
		RETURNING before.seal_key`, fresh.secret).Scan(&old.secret)
	if err != nil {
		return SealKey{}, SealKey{}, fmt.Errorf("rotate the seal key: %w", err)
	}
	return old, fresh, nil
}

// storedSealKey reads the store's key; the zero key when it has none.
func storedSealKey(ctx context.Context, db interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}) (SealKey, error) {
	var k SealKey
	err := db.QueryRow(ctx, "SELECT seal_key FROM event_store").Scan(&k.secret)
	if errors.Is(err, pgx.ErrNoRows) {
		return SealKey{}, nil
	}
	if err != nil {
		return SealKey{}, fmt.Errorf("read the seal key: %w", err)
	}
	return k, nil
}
