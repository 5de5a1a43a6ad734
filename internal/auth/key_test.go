package auth

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestNewKeyRoundTripsThroughParseKey(t *testing.T) {
	plaintext, minted, err := newKey()
	if err != nil {
		t.Fatal(err)
	}
	if len(plaintext) != keyLen || !strings.HasPrefix(plaintext, "fsk_") {
		t.Fatalf("key %q does not have the fsk_<prefix>_<secret> shape", plaintext)
	}
	parsed, err := parseKey(plaintext)
	if err != nil {
		t.Fatalf("parseKey(newKey()): %v", err)
	}
	if parsed.prefix != minted.prefix || !bytes.Equal(parsed.secret, minted.secret) {
		t.Fatalf("parsed %+v, minted %+v", parsed, minted)
	}
}

func TestNewKeyNeverRepeats(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		k, _, err := newKey()
		if err != nil {
			t.Fatal(err)
		}
		if seen[k] {
			t.Fatalf("key %q minted twice", k)
		}
		seen[k] = true
	}
}

func TestParseKeyRejectsEveryMalformedShape(t *testing.T) {
	good, _, err := newKey()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, key string }{
		{"an empty string", ""},
		{"garbage", "not-a-key"},
		{"a missing marker", "xxx_" + good[4:]},
		{"a truncated key", good[:len(good)-1]},
		{"an extra character", good + "a"},
		{"a missing separator", good[:16] + "-" + good[17:]},
		{"an uppercase prefix", "fsk_" + strings.ToUpper(good[4:16]) + good[16:]},
		{"an uppercase secret", good[:17] + strings.ToUpper(good[17:])},
		{"a non-hex secret", good[:17] + strings.Repeat("z", secretHexLen)},
		{"a prefix outside base32", "fsk_" + "0189abcdefgh" + good[16:]},
		{"surrounding spaces", " " + good[:len(good)-1]},
	}
	for _, tt := range tests {
		t.Run("it rejects "+tt.name, func(t *testing.T) {
			if _, err := parseKey(tt.key); !errors.Is(err, ErrMalformedKey) {
				t.Fatalf("parseKey(%q) error = %v, want ErrMalformedKey", tt.key, err)
			}
		})
	}
}
