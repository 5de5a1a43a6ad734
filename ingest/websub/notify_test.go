package websub

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/ingest"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/internal/pgnotify"
	"github.com/feedsvc/feedsvc/testkit/testdb"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// recordingIngester notes the sources whose pushes it was handed.
type recordingIngester struct{ got chan uuid.UUID }

func (r recordingIngester) IngestPushed(_ context.Context, sourceID uuid.UUID, _ []connector.Candidate) (ingest.Pushed, error) {
	r.got <- sourceID
	return ingest.Pushed{}, nil
}

// A push received by another process (here a second Subscriber, which
// runs nothing, as an API-only process) reaches a crawler whose tick is an
// hour only through the notification of its insert; a crawler whose
// listener does not listen takes the queue every tick instead.
func TestAPushQueuedByAnotherProcessIsTakenAtOnceWhenToldAndEveryTickWhenNot(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		tick      time.Duration
		reachable bool
	}{
		{"a listening crawler is told of the push", time.Hour, true},
		{"a crawler whose listener does not listen takes the queue every tick", 50 * time.Millisecond, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db, dsn := testdb.New(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			id, secret, err := newIDAndSecret()
			if err != nil {
				t.Fatal(err)
			}
			source := uuid.New()
			const topic = "https://example.com/feed.atom"
			if _, err := db.Pool.Exec(ctx, `INSERT INTO websub_subscriptions (id, source_id, topic, hub, secret, state)
				VALUES ($1, $2, $3, 'https://hub.example.com/', $4, 'active')`, id, source, topic, secret); err != nil {
				t.Fatal(err)
			}

			if !tt.reachable {
				dsn = "postgres://postgres@127.0.0.1:1/nothing?sslmode=disable&connect_timeout=1"
			}
			l := pgnotify.New(dsn, nil)
			crawler := New(db.Bun, db.Pool, Config{Tick: tt.tick}, nil)
			crawler.HearPushes(l)
			got := make(chan uuid.UUID, 10)
			done := make(chan struct{}, 2)
			go func() { l.Run(ctx); done <- struct{}{} }()
			go func() { _ = crawler.Run(ctx, recordingIngester{got}); done <- struct{}{} }()
			defer func() { cancel(); <-done; <-done }()
			if tt.reachable {
				wait.Until(t, 5*time.Second, "the listener to listen", l.Listening)
			}
			// The crawler's first takes (at its start, and when listening
			// starts) are past.
			time.Sleep(200 * time.Millisecond)

			api := New(db.Bun, db.Pool, Config{}, nil)
			body := []byte(`<feed xmlns="http://www.w3.org/2005/Atom"><title>x</title>
				<entry><title>Pushed</title><link href="https://example.com/pushed"/><updated>2026-11-26T12:00:00Z</updated></entry></feed>`)
			mac := hmac.New(sha256.New, []byte(secret))
			mac.Write(body)
			if d, err := api.Receive(ctx, id, "sha256="+hex.EncodeToString(mac.Sum(nil)), body); err != nil || d != Accepted {
				t.Fatalf("Receive: %v, %v; want Accepted", d, err)
			}
			select {
			case s := <-got:
				if s != source {
					t.Fatalf("ingested a push of source %s, want %s", s, source)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("the push was not taken within 3s")
			}
		})
	}
}
