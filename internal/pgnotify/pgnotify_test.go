package pgnotify

import (
	"context"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/testkit/testdb"
)

func TestAListenerCallsBackOnceWhenItStartsListeningAndOnEachNotificationOfItsChannel(t *testing.T) {
	t.Parallel()
	db, dsn := testdb.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	l := New(dsn, nil)
	heard := make(chan struct{}, 10)
	l.On("pgnotify_test", func() { heard <- struct{}{} })
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	defer func() { cancel(); <-done }()

	wait := func(what string) {
		t.Helper()
		select {
		case <-heard:
		case <-time.After(5 * time.Second):
			t.Fatalf("no callback for %s", what)
		}
	}
	wait("the start of listening")
	if !l.Listening() {
		t.Fatal("called back for the start but not listening")
	}
	if _, err := db.Pool.Exec(ctx, `SELECT pg_notify('pgnotify_other', '')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `SELECT pg_notify('pgnotify_test', 'x')`); err != nil {
		t.Fatal(err)
	}
	wait("a notification")
	select {
	case <-heard:
		t.Fatal("called back for another channel's notification")
	case <-time.After(100 * time.Millisecond):
	}
}

func TestAListenerThatCannotConnectIsNotListeningAndANilOneNeverIs(t *testing.T) {
	t.Parallel()
	l := New("postgres://postgres@127.0.0.1:1/nothing?sslmode=disable&connect_timeout=1", nil)
	l.On("pgnotify_test", func() {})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	l.Run(ctx)
	if l.Listening() {
		t.Fatal("listening without a connection")
	}
	var none *Listener
	none.On("pgnotify_test", func() {})
	if none.Listening() {
		t.Fatal("a nil listener listens")
	}
}
