package receiver_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/docs/webhooks/receiver"
	"github.com/feedsvc/feedsvc/testkit/wait"
	"github.com/feedsvc/feedsvc/webhook"
)

// The documented receiver gets deliveries from the service's own sender.

func TestTheDocumentedReceiverTakesWhatTheServiceSendsAndRefusesTheRest(t *testing.T) {
	const secret = "whsec_receiver-test-secret"
	var mu sync.Mutex
	var handled []receiver.Delivery
	rc := receiver.New(secret, func(d receiver.Delivery) {
		mu.Lock()
		defer mu.Unlock()
		handled = append(handled, d)
	})
	srv := httptest.NewServer(rc)
	defer srv.Close()
	// A man in the middle changes the body after it was signed.
	tampering := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		b = bytes.Replace(b, []byte(`"i"`), []byte(`"j"`), 1)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		rc.ServeHTTP(w, r)
	}))
	defer tampering.Close()
	sender := webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: true, Timeout: 5 * time.Second})
	body := []byte(`{"event":"event.item_added","timestamp":"2026-11-22T10:04:05.123Z","data":{"id":"i","eventId":"e"}}`)
	send := func(url, eventID string, secrets []string, at time.Time) webhook.Result {
		return sender.Send(context.Background(), webhook.Request{URL: url, WebhookID: "w", EventID: eventID, Body: body, Secrets: secrets, At: at})
	}
	now := time.Now()
	cases := []struct {
		name    string
		url     string
		eventID string
		secrets []string
		at      time.Time
		status  int
	}{
		{"a signed delivery is taken", srv.URL, "e1", []string{secret}, now, http.StatusAccepted},
		{"its retry is acknowledged but not taken again", srv.URL, "e1", []string{secret}, now, http.StatusOK},
		{"a delivery signed with another secret is refused", srv.URL, "e2", []string{"whsec_other"}, now, http.StatusUnauthorized},
		{"a delivery whose body was changed is refused", tampering.URL, "e3", []string{secret}, now, http.StatusUnauthorized},
		{"a delivery signed six minutes ago is refused", srv.URL, "e4", []string{secret}, now.Add(-6 * time.Minute), http.StatusUnauthorized},
		{"during a rotation, the old secret verifies the second signature", srv.URL, "e5", []string{"whsec_new", secret}, now, http.StatusAccepted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := send(c.url, c.eventID, c.secrets, c.at); got.StatusCode != c.status {
				t.Fatalf("answered %d (%s), want %d", got.StatusCode, got.Error, c.status)
			}
		})
	}
	wait.Within(5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(handled) == 2
	})
	mu.Lock()
	defer mu.Unlock()
	if len(handled) != 2 || handled[0].EventID != "e1" || handled[1].EventID != "e5" || handled[0].Event != "event.item_added" {
		t.Fatalf("handled %+v, want e1 and e5 once each", handled)
	}
}

func TestDocsShowTheTestedReceiverVerbatim(t *testing.T) {
	src, err := os.ReadFile("receiver.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```go\n"+string(src)+"```\n") {
		t.Fatal("docs/webhooks.md does not show docs/webhooks/receiver/receiver.go as it is; paste the file into its go block")
	}
}
