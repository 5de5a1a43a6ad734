package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Key format: fsk_<prefix>_<secret>.
//
//   - "fsk_" marks the string as a feedsvc key, so secret scanners and humans
//     can recognise one that leaked into a log or a repository.
//   - prefix is 12 characters of lowercase base32 (60 random bits). It is not
//     secret: it finds the row with one indexed lookup, so checking a key
//     never has to hash against every stored key.
//   - secret is 32 random bytes as 64 lowercase hex characters. Hex, not
//     base64url, because base64url may contain '_' and '-', which would make
//     the separator ambiguous and break double-click selection.
//
// Every part has a fixed length and alphabet, so a malformed key is rejected
// before any database work.
const (
	keyMarker      = "fsk_"
	prefixLen      = 12
	secretBytes    = 32
	secretHexLen   = secretBytes * 2
	keyLen         = len(keyMarker) + prefixLen + 1 + secretHexLen
	prefixAlphabet = "abcdefghijklmnopqrstuvwxyz234567"
)

// parsedKey is a key split into its lookup prefix and decoded secret.
type parsedKey struct {
	prefix string
	secret []byte
}

// newKey mints a fresh plaintext key from crypto/rand.
func newKey() (plaintext string, k parsedKey, err error) {
	// 32 divides 256, so b&31 picks each base32 character without bias.
	raw := make([]byte, prefixLen)
	if _, err := rand.Read(raw); err != nil {
		return "", parsedKey{}, fmt.Errorf("read random prefix: %w", err)
	}
	prefix := make([]byte, prefixLen)
	for i, b := range raw {
		prefix[i] = prefixAlphabet[b&31]
	}
	secret := make([]byte, secretBytes)
	if _, err := rand.Read(secret); err != nil {
		return "", parsedKey{}, fmt.Errorf("read random secret: %w", err)
	}
	k = parsedKey{prefix: string(prefix), secret: secret}
	return keyMarker + k.prefix + "_" + hex.EncodeToString(secret), k, nil
}

// parseKey splits a plaintext key. It accepts exactly the canonical form
// newKey produces (lowercase only), so each key has one spelling.
func parseKey(plaintext string) (parsedKey, error) {
	if len(plaintext) != keyLen || !strings.HasPrefix(plaintext, keyMarker) {
		return parsedKey{}, ErrMalformedKey
	}
	rest := plaintext[len(keyMarker):]
	prefix, secretHex := rest[:prefixLen], rest[prefixLen+1:]
	if rest[prefixLen] != '_' {
		return parsedKey{}, ErrMalformedKey
	}
	for i := 0; i < len(prefix); i++ {
		if strings.IndexByte(prefixAlphabet, prefix[i]) < 0 {
			return parsedKey{}, ErrMalformedKey
		}
	}
	for i := 0; i < len(secretHex); i++ {
		c := secretHex[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return parsedKey{}, ErrMalformedKey
		}
	}
	secret, err := hex.DecodeString(secretHex)
	if err != nil {
		return parsedKey{}, ErrMalformedKey
	}
	return parsedKey{prefix: prefix, secret: secret}, nil
}

// hashSecret is what the database stores. A single SHA-256 is the right
// tool here, unlike for passwords: the secret is 256 bits from crypto/rand,
// so there is no dictionary to try and brute force is out of reach whatever
// the hash speed. A slow KDF (bcrypt, argon2) would only add CPU cost to
// every request and hand attackers a cheap denial-of-service lever.
func hashSecret(secret []byte) []byte {
	sum := sha256.Sum256(secret)
	return sum[:]
}
