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

// secretPrefix starts every secret, so one pasted in the wrong place is
// recognisable.
const secretPrefix = "whsec_"

// NewSecret returns a fresh signing secret: whsec_ and 32 random bytes.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return secretPrefix + base64.RawURLEncoding.EncodeToString(b)
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
