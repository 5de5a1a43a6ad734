// Package standard verifies feedsvc's deliveries with the Standard Webhooks
// library (github.com/standard-webhooks/standard-webhooks/libraries/go),
// from the webhook-id, webhook-timestamp and webhook-signature headers the
// service sends beside its own. docs/webhooks.md shows this file; its test
// sends it deliveries with the service's own sender.
package standard

import (
	"io"
	"net/http"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Handler answers 401 to a delivery the secret did not sign (or signed
// more than five minutes ago), and otherwise hands the body and its
// webhook-id (the event id, the same on every retry: deduplicate by it)
// to process.
func Handler(secret string, process func(id string, body []byte)) (http.Handler, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := wh.Verify(body, r.Header); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		process(r.Header.Get("webhook-id"), body)
		w.WriteHeader(http.StatusAccepted)
	}), nil
}
