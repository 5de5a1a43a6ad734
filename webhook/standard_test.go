package webhook_test

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/feedsvc/feedsvc/testkit/wait"
	"github.com/feedsvc/feedsvc/webhook"
)

// The Standard Webhooks headers ride beside the spec's x-service-* ones,
// so receivers can verify with the published library as it comes.
func TestADeliveryVerifiesWithTheStandardWebhooksLibrary(t *testing.T) {
	s := newStack(t, testConfig())
	rc := newReceiver(t, nil)
	_, secret := s.subscribe(rc.URL + "/hooks")
	eventID, _ := s.addItem(uuid.New(), "Jazz night")

	wait.Until(t, 20*time.Second, "the delivery", func() bool { return len(rc.requests()) == 1 })
	got := rc.requests()[0]
	if id := got.Header.Get("webhook-id"); id != eventID.String() {
		t.Errorf("webhook-id %q, want the event id %s (the same on every retry)", id, eventID)
	}
	if got.Header.Get("webhook-timestamp") != got.Header.Get(webhook.HeaderTimestamp) {
		t.Errorf("webhook-timestamp %q differs from %s %q", got.Header.Get("webhook-timestamp"), webhook.HeaderTimestamp, got.Header.Get(webhook.HeaderTimestamp))
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("the library refuses the secret the service issued: %v", err)
	}
	if err := wh.Verify(got.Body, got.Header); err != nil {
		t.Fatalf("the library does not verify the delivery: %v", err)
	}
	other, _ := standardwebhooks.NewWebhook(webhook.NewSecret())
	if other.Verify(got.Body, got.Header) == nil {
		t.Fatal("another secret verifies the delivery")
	}
	tampered := append([]byte(nil), got.Body...)
	tampered[len(tampered)-2] ^= 1
	if wh.Verify(tampered, got.Header) == nil {
		t.Fatal("a changed body verifies")
	}
}

func TestStandardSignaturesCoverEverySecretAndEveryFormTheServiceIssued(t *testing.T) {
	body := []byte(`{"event":"event.item_added"}`)
	at := time.Now().Unix()
	fresh, old := webhook.NewSecret(), webhook.NewSecret()
	// Secrets issued before standard base64 were URL-safe without padding.
	legacyKey := []byte("0123456789abcdef0123456789abcd\xfb\xff")
	legacy := "whsec_" + base64.RawURLEncoding.EncodeToString(legacyKey)

	header := func(secrets ...string) http.Header {
		h := http.Header{}
		h.Set("webhook-id", "msg_1")
		h.Set("webhook-timestamp", strconv.FormatInt(at, 10))
		h.Set("webhook-signature", webhook.StandardSignatureHeader(secrets, "msg_1", at, body))
		return h
	}
	verifier := func(t *testing.T, secret string) *standardwebhooks.Webhook {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatalf("library refuses %s: %v", secret, err)
		}
		return wh
	}
	tests := []struct {
		name     string
		secrets  []string
		verifier func(t *testing.T) *standardwebhooks.Webhook
		ok       bool
	}{
		{"a fresh secret verifies", []string{fresh}, func(t *testing.T) *standardwebhooks.Webhook { return verifier(t, fresh) }, true},
		{"during a rotation the new secret verifies", []string{fresh, old}, func(t *testing.T) *standardwebhooks.Webhook { return verifier(t, fresh) }, true},
		{"during a rotation the old secret verifies the second signature", []string{fresh, old}, func(t *testing.T) *standardwebhooks.Webhook { return verifier(t, old) }, true},
		{"after the grace the old secret does not verify", []string{fresh}, func(t *testing.T) *standardwebhooks.Webhook { return verifier(t, old) }, false},
		{"a legacy secret verifies with its decoded key", []string{legacy}, func(t *testing.T) *standardwebhooks.Webhook {
			wh, _ := standardwebhooks.NewWebhookRaw(legacyKey)
			return wh
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.verifier(t).Verify(body, header(tt.secrets...))
			if (err == nil) != tt.ok {
				t.Fatalf("verify: %v, want ok %v", err, tt.ok)
			}
		})
	}
	if sig := webhook.StandardSignature(fresh, "msg_1", at, body); !strings.HasPrefix(sig, "v1,") {
		t.Errorf("signature %q lacks the v1 version", sig)
	}
}
