package crawl

import (
	"context"
	"errors"
	"net/http"
	"syscall"
	"testing"

	"code.dny.dev/ssrf"

	"github.com/feedsvc/feedsvc/ingest/document"
)

func TestDefaultClientRefusesLoopback(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{"/": text("text/plain", "secret")})
	c := New(Options{})
	_, err := c.Get(context.Background(), s.URL+"/", document.Validators{})
	if !errors.Is(err, ssrf.ErrProhibitedIP) {
		t.Fatalf("err = %v, want ssrf.ErrProhibitedIP", err)
	}
	if n := s.hitCount("/"); n != 0 {
		t.Errorf("the loopback server was reached %d times", n)
	}
}

// TestRedirectToPrivateAddressIsRefused proves that the dial policy runs on
// redirects. Everything in a test is on loopback, so the policy is replaced
// by one that allows exactly the first server's address and defers to the
// real SSRF guard for everything else; the control case shows that the
// first hop and redirect following work, so the refusal is the guard's.
func TestRedirectToPrivateAddressIsRefused(t *testing.T) {
	internal := newSite(t, map[string]http.HandlerFunc{"/admin": text("text/plain", "internal")})
	public := newSite(t, map[string]http.HandlerFunc{
		"/to-internal": redirect(internal.URL + "/admin"),
		"/to-self":     redirect("/landing"),
		"/landing":     text("text/plain", "public"),
	})
	publicAddr := public.Listener.Addr().String()
	guard := ssrf.New(ssrf.WithAnyPort())
	policy := func(network, address string, rc syscall.RawConn) error {
		if address == publicAddr {
			return nil
		}
		return guard.Safe(network, address, rc)
	}
	c := newClient(Options{}, policy, nil)
	ctx := context.Background()

	t.Run("a redirect within the allowed server is followed", func(t *testing.T) {
		resp, err := c.Get(ctx, public.URL+"/to-self", document.Validators{})
		if err != nil || string(resp.Body) != "public" {
			t.Fatalf("resp = %+v, err = %v", resp, err)
		}
	})
	t.Run("a redirect to another private address is refused and never reached", func(t *testing.T) {
		_, err := c.Get(ctx, public.URL+"/to-internal", document.Validators{})
		if !errors.Is(err, ssrf.ErrProhibitedIP) {
			t.Fatalf("err = %v, want ssrf.ErrProhibitedIP", err)
		}
		if public.hitCount("/to-internal") != 1 {
			t.Errorf("the first hop was not made")
		}
		if n := internal.hitCount("/admin"); n != 0 {
			t.Errorf("the internal server was reached %d times", n)
		}
	})
}
