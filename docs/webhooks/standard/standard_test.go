package standard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/docs/webhooks/standard"
	"github.com/feedsvc/feedsvc/webhook"
)

func TestTheStandardWebhooksLibraryVerifiesWhatTheServiceSends(t *testing.T) {
	secret := webhook.NewSecret()
	var got []string
	h, err := standard.Handler(secret, func(id string, _ []byte) { got = append(got, id) })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	sender := webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: true, Timeout: 5 * time.Second})
	body := []byte(`{"event":"event.item_added","timestamp":"2026-11-22T10:04:05.123Z","data":{"id":"i","eventId":"e"}}`)
	now := time.Now()
	cases := []struct {
		name    string
		secrets []string
		at      time.Time
		status  int
	}{
		{"a signed delivery is taken", []string{secret}, now, http.StatusAccepted},
		{"one signed with another secret is refused", []string{webhook.NewSecret()}, now, http.StatusUnauthorized},
		{"one signed six minutes ago is refused", []string{secret}, now.Add(-6 * time.Minute), http.StatusUnauthorized},
		{"during a rotation the old secret verifies the second signature", []string{webhook.NewSecret(), secret}, now, http.StatusAccepted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := sender.Send(context.Background(), webhook.Request{URL: srv.URL, WebhookID: "w", EventID: "e1", Body: body, Secrets: c.secrets, At: c.at})
			if res.StatusCode != c.status {
				t.Fatalf("answered %d (%s), want %d", res.StatusCode, res.Error, c.status)
			}
		})
	}
	if len(got) != 2 || got[0] != "e1" {
		t.Fatalf("processed %v, want the event id twice", got)
	}
}
