package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
)

// Delivery headers (D10). The signature header carries one signature per
// secret that signs, space-separated: two during the grace after a
// rotation, the new secret's first.
const (
	HeaderSignature = "x-service-signature"
	HeaderTimestamp = "x-service-timestamp"
	HeaderWebhookID = "x-service-webhook-id"
	HeaderEventID   = "x-service-event-id"
)

// Standard Webhooks headers (standardwebhooks.com), sent beside the
// spec's so that a receiver can verify with the published libraries:
// the message id (the event id, the same on every retry), the attempt's
// Unix time, and "v1,<base64 HMAC-SHA256>" per signing secret,
// space-separated, keyed with the secret's decoded bytes over
// "<id>.<timestamp>.<raw body>".
const (
	HeaderStandardID        = "webhook-id"
	HeaderStandardTimestamp = "webhook-timestamp"
	HeaderStandardSignature = "webhook-signature"
)

// secretPrefix starts every secret, so one pasted in the wrong place is
// recognisable.
const secretPrefix = "whsec_"

// NewSecret returns a fresh signing secret: whsec_ and 32 random bytes in
// standard base64, the form Standard Webhooks libraries decode.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

// standardKey is the HMAC key of a secret under Standard Webhooks: the
// bytes its base64 part decodes to. Secrets issued before secrets were
// standard base64 are URL-safe base64 without padding; they decode as
// such, so their receivers can verify with the key bytes (or rotate to a
// secret the libraries take as is). A secret that is neither (never
// issued by this service) signs with its own bytes.
func standardKey(secret string) []byte {
	enc, _ := strings.CutPrefix(secret, secretPrefix)
	for _, codec := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
		if key, err := codec.DecodeString(enc); err == nil {
			return key
		}
	}
	return []byte(enc)
}

// StandardSignature is the Standard Webhooks signature of one message
// with one secret, "v1," and the base64 HMAC-SHA256 of
// "<id>.<timestamp>.<raw body>".
func StandardSignature(secret, msgID string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, standardKey(secret))
	mac.Write([]byte(msgID))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// StandardSignatureHeader is webhook-signature's value: each secret's
// signature, space-separated, in the order given (the new secret's first
// during a rotation's grace, as in x-service-signature).
func StandardSignatureHeader(secrets []string, msgID string, timestamp int64, body []byte) string {
	sigs := make([]string, len(secrets))
	for i, s := range secrets {
		sigs[i] = StandardSignature(s, msgID, timestamp, body)
	}
	return strings.Join(sigs, " ")
}

// Sign is the signature of a body sent at a time with one secret: the
// lowercase hex HMAC-SHA256, keyed with the secret's bytes as shown, of
// "<unix seconds>.<raw body>".
func Sign(secret string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// SignatureHeader is the signature header's value: each secret's
// signature, space-separated, in the order given.
func SignatureHeader(secrets []string, timestamp int64, body []byte) string {
	sigs := make([]string, len(secrets))
	for i, s := range secrets {
		sigs[i] = Sign(s, timestamp, body)
	}
	return strings.Join(sigs, " ")
}
