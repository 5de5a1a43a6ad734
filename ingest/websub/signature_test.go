package websub

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // a method the recommendation names
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"testing"
)

func TestASignatureCountsOnlyWithTheSecretTheBodyAndAKnownMethod(t *testing.T) {
	const secret, body = "s3cret", `<feed xmlns="http://www.w3.org/2005/Atom"/>`
	mac := func(h func() hash.Hash, key, msg string) string {
		m := hmac.New(h, []byte(key))
		m.Write([]byte(msg))
		return hex.EncodeToString(m.Sum(nil))
	}
	for _, tt := range []struct {
		name   string
		header string
		want   bool
	}{
		{"sha1 is one of the recommendation's methods", "sha1=" + mac(sha1.New, secret, body), true},
		{"sha256 is one of the recommendation's methods", "sha256=" + mac(sha256.New, secret, body), true},
		{"sha384 is one of the recommendation's methods", "sha384=" + mac(sha512.New384, secret, body), true},
		{"sha512 is one of the recommendation's methods", "sha512=" + mac(sha512.New, secret, body), true},
		{"the method's case does not matter", "SHA256=" + mac(sha256.New, secret, body), true},
		{"another secret fails", "sha256=" + mac(sha256.New, "other", body), false},
		{"another body fails", "sha256=" + mac(sha256.New, secret, body+"\n"), false},
		{"a method named wrongly fails", "sha512=" + mac(sha256.New, secret, body), false},
		{"an unknown method fails", "md5=" + mac(sha256.New, secret, body), false},
		{"no method fails", mac(sha256.New, secret, body), false},
		{"no hex fails", "sha256=zz", false},
		{"nothing fails", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := validSignature(tt.header, secret, []byte(body)); got != tt.want {
				t.Fatalf("validSignature(%q) = %v, want %v", tt.header, got, tt.want)
			}
		})
	}
}
