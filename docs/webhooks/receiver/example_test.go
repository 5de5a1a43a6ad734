package receiver_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/feedsvc/feedsvc/docs/webhooks/receiver"
)

// A delivery is signed over "<timestamp>.<raw body>"; the receiver
// recomputes the signature with its secret.
func ExampleVerify() {
	secret := "whsec_example"
	body := []byte(`{"event":"event.item_added","timestamp":"2026-11-22T10:04:05.123Z","data":{}}`)
	now := time.Now()
	ts := strconv.FormatInt(now.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(body)))
	signature := hex.EncodeToString(mac.Sum(nil))

	fmt.Println(receiver.Verify(secret, signature, ts, body, now))
	fmt.Println(receiver.Verify(secret, signature, ts, body, now.Add(10*time.Minute)))
	fmt.Println(receiver.Verify("whsec_other", signature, ts, body, now))
	// Output:
	// <nil>
	// timestamp missing or outside the tolerance
	// no signature matches
}
