package keyauth

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// newTestApp mounts the middleware like the server does: Middleware on
// everything, RequireScope per route. cfg carries the proxy trust settings.
func newTestApp(store *auth.Store, requireHTTPS bool, cfg fiber.Config) *fiber.App {
	cfg.ErrorHandler = envelope.ErrorHandler(slog.Default())
	app := fiber.New(cfg)
	app.Use(Middleware(store, requireHTTPS))
	app.Get("/whoami", func(c *fiber.Ctx) error {
		p, ok := PrincipalFrom(c)
		if !ok {
			return c.SendStatus(fiber.StatusTeapot)
		}
		return c.JSON(fiber.Map{"org": p.OrganizationName, "key": p.KeyID})
	})
	app.Get("/webhooks", RequireScope(auth.ScopeWebhooks), func(c *fiber.Ctx) error {
		return c.SendString("hooks")
	})
	return app
}

type response struct {
	status      int
	contentType string
	body        string
}

func do(t *testing.T, app *fiber.App, path string, headers map[string]string) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := app.Test(req, -1)
	if err != nil {
		t.Fatalf("app.Test: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, contentType: res.Header.Get("Content-Type"), body: string(b)}
}

func bearer(key string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + key}
}

func assertUnauthorized(t *testing.T, got response, wantBody string) {
	t.Helper()
	if got.status != http.StatusUnauthorized {
		t.Fatalf("status = %d, want 401 (body %s)", got.status, got.body)
	}
	if got.contentType != "application/json" {
		t.Fatalf("content type = %q, want application/json", got.contentType)
	}
	if got.body != wantBody {
		t.Fatalf("body = %s\nwant   %s", got.body, wantBody)
	}
}

func TestTheMiddlewareRejectsBadCredentialsWithTheFlatBody(t *testing.T) {
	s, db, _ := newTestStore(t)
	ctx := context.Background()
	revoked, revokedKey := mustCreate(t, s, "acme", auth.AllScopes(), nil)
	if err := s.RevokeKey(ctx, revokedKey.ID); err != nil {
		t.Fatal(err)
	}
	valid, _ := mustCreate(t, s, "acme", auth.AllScopes(), nil)
	// A well-formed key the store does not know: one whose row is gone.
	unknown, unknownKey := mustCreate(t, s, "acme", auth.AllScopes(), nil)
	if _, err := db.NewDelete().Table("api_keys").Where("id = ?", unknownKey.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	app := newTestApp(s, false, fiber.Config{})

	tests := []struct {
		name    string
		headers map[string]string
		body    string
	}{
		{
			name:    "a missing header",
			headers: nil,
			body:    `{"success":false,"error":"Authentication failed (api-key): missing Authorization header","code":"AUTHENTICATION_FAILED"}`,
		},
		{
			name:    "a Basic header",
			headers: map[string]string{"Authorization": "Basic xxx"},
			body:    `{"success":false,"error":"Authentication failed (api-key): Authorization header must use the Bearer scheme","code":"AUTHENTICATION_FAILED"}`,
		},
		{
			name:    "a bare key without a scheme",
			headers: map[string]string{"Authorization": valid},
			body:    `{"success":false,"error":"Authentication failed (api-key): Authorization header must use the Bearer scheme","code":"AUTHENTICATION_FAILED"}`,
		},
		{
			name:    "Bearer with nothing after it",
			headers: map[string]string{"Authorization": "Bearer "},
			body:    `{"success":false,"error":"Authentication failed (api-key): missing API key after Bearer","code":"AUTHENTICATION_FAILED"}`,
		},
		{
			name:    "Bearer with garbage",
			headers: bearer("garbage"),
			body:    `{"success":false,"error":"Authentication failed (api-key): malformed API key","code":"AUTHENTICATION_FAILED"}`,
		},
		{
			name:    "a well-formed key nobody issued",
			headers: bearer(unknown),
			body:    `{"success":false,"error":"Authentication failed (api-key): invalid API key","code":"AUTHENTICATION_FAILED"}`,
		},
		{
			name:    "a revoked key",
			headers: bearer(revoked),
			body:    `{"success":false,"error":"Authentication failed (api-key): API key has been revoked","code":"AUTHENTICATION_FAILED"}`,
		},
	}
	for _, tt := range tests {
		t.Run("it answers 401 to "+tt.name, func(t *testing.T) {
			assertUnauthorized(t, do(t, app, "/whoami", tt.headers), tt.body)
		})
	}
}

func TestTheMiddlewareRejectsAnExpiredKey(t *testing.T) {
	s, db, _ := newTestStore(t)
	plaintext, key := mustCreate(t, s, "acme", auth.AllScopes(), nil)
	expireNow(t, db, key)
	app := newTestApp(s, false, fiber.Config{})
	assertUnauthorized(t, do(t, app, "/whoami", bearer(plaintext)),
		`{"success":false,"error":"Authentication failed (api-key): API key has expired","code":"AUTHENTICATION_FAILED"}`)
}

// expireNow backdates a key's expiry, as time passing would.
func expireNow(t *testing.T, db *bun.DB, key auth.Key) {
	t.Helper()
	_, err := db.NewUpdate().Table("api_keys").Set("expires_at = now() - interval '1 second'").Where("id = ?", key.ID).Exec(context.Background())
	if err != nil {
		t.Fatal(err)
	}
}

func TestAValidKeyReachesTheHandlerWithItsPrincipal(t *testing.T) {
	s, _, _ := newTestStore(t)
	plaintext, key := mustCreate(t, s, "acme", auth.AllScopes(), nil)
	app := newTestApp(s, false, fiber.Config{})

	for _, scheme := range []string{"Bearer", "bearer"} {
		got := do(t, app, "/whoami", map[string]string{"Authorization": scheme + " " + plaintext})
		if got.status != http.StatusOK {
			t.Fatalf("%s: status = %d, body %s", scheme, got.status, got.body)
		}
		var who struct {
			Org string `json:"org"`
			Key string `json:"key"`
		}
		if err := json.Unmarshal([]byte(got.body), &who); err != nil {
			t.Fatal(err)
		}
		if who.Org != "acme" || who.Key != key.ID.String() {
			t.Fatalf("%s: handler saw %+v, want org acme key %s", scheme, who, key.ID)
		}
	}
}

func TestRequireScopeAnswers403WhenTheKeyLacksTheScope(t *testing.T) {
	s, _, _ := newTestStore(t)
	newsOnly, _ := mustCreate(t, s, "acme", []auth.Scope{auth.ScopeNews}, nil)
	everything, _ := mustCreate(t, s, "acme", auth.AllScopes(), nil)
	app := newTestApp(s, false, fiber.Config{})

	got := do(t, app, "/webhooks", bearer(newsOnly))
	if got.status != http.StatusForbidden || got.contentType != "application/json" {
		t.Fatalf("status = %d, content type %q", got.status, got.contentType)
	}
	want := `{"success":false,"error":{"code":"PERMISSION_DENIED","message":"This API key does not have the \"webhooks\" scope"}}`
	if got.body != want {
		t.Fatalf("body = %s\nwant   %s", got.body, want)
	}
	if got := do(t, app, "/webhooks", bearer(everything)); got.status != http.StatusOK || got.body != "hooks" {
		t.Fatalf("a key with the scope got %d %s", got.status, got.body)
	}
}

func TestRequireScopeWithoutTheMiddlewareRefusesTheRequest(t *testing.T) {
	app := fiber.New()
	app.Get("/x", RequireScope(auth.ScopeNews), func(c *fiber.Ctx) error { return c.SendString("served") })
	if got := do(t, app, "/x", nil); got.status != http.StatusInternalServerError {
		t.Fatalf("status = %d, body %s; want 500", got.status, got.body)
	}
}

func TestADatabaseFailureAnswers500NotA401(t *testing.T) {
	s, db, _ := newTestStore(t)
	plaintext, _ := mustCreate(t, s, "acme", auth.AllScopes(), nil)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	app := newTestApp(s, false, fiber.Config{})
	got := do(t, app, "/whoami", bearer(plaintext))
	if got.status != http.StatusInternalServerError {
		t.Fatalf("status = %d, body %s; want 500", got.status, got.body)
	}
	var body struct {
		Success bool `json:"success"`
		Error   struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(got.body), &body); err != nil {
		t.Fatalf("body %s: %v", got.body, err)
	}
	if body.Success || body.Error.Code != "INTERNAL_ERROR" || body.Error.Message == "" {
		t.Fatalf("body = %s", got.body)
	}
}

func TestRequireHTTPS(t *testing.T) {
	s, _, _ := newTestStore(t)
	plaintext, _ := mustCreate(t, s, "acme", auth.AllScopes(), nil)
	httpsRequired := `{"success":false,"error":"Authentication failed (api-key): HTTPS is required","code":"AUTHENTICATION_FAILED"}`

	// app.Test connects from 0.0.0.0, so that is the "proxy" address.
	trusting := fiber.Config{EnableTrustedProxyCheck: true, TrustedProxies: []string{"0.0.0.0"}}
	distrusting := fiber.Config{EnableTrustedProxyCheck: true, TrustedProxies: []string{"10.0.0.0/8"}}

	t.Run("a plain HTTP request answers 401 even with a valid key", func(t *testing.T) {
		app := newTestApp(s, true, trusting)
		assertUnauthorized(t, do(t, app, "/whoami", bearer(plaintext)), httpsRequired)
	})
	t.Run("a plain HTTP request without a key is told about HTTPS first", func(t *testing.T) {
		app := newTestApp(s, true, trusting)
		assertUnauthorized(t, do(t, app, "/whoami", nil), httpsRequired)
	})
	t.Run("X-Forwarded-Proto https from a trusted proxy passes", func(t *testing.T) {
		app := newTestApp(s, true, trusting)
		h := bearer(plaintext)
		h["X-Forwarded-Proto"] = "https"
		if got := do(t, app, "/whoami", h); got.status != http.StatusOK {
			t.Fatalf("status = %d, body %s", got.status, got.body)
		}
	})
	t.Run("X-Forwarded-Proto https from an untrusted address answers 401", func(t *testing.T) {
		app := newTestApp(s, true, distrusting)
		h := bearer(plaintext)
		h["X-Forwarded-Proto"] = "https"
		assertUnauthorized(t, do(t, app, "/whoami", h), httpsRequired)
	})
	t.Run("X-Forwarded-Proto http from a trusted proxy answers 401", func(t *testing.T) {
		app := newTestApp(s, true, trusting)
		h := bearer(plaintext)
		h["X-Forwarded-Proto"] = "http"
		assertUnauthorized(t, do(t, app, "/whoami", h), httpsRequired)
	})
	t.Run("with HTTPS not required a plain request passes", func(t *testing.T) {
		app := newTestApp(s, false, distrusting)
		if got := do(t, app, "/whoami", bearer(plaintext)); got.status != http.StatusOK {
			t.Fatalf("status = %d, body %s", got.status, got.body)
		}
	})
}

// newTestStore returns a key store over a fresh database, without the
// cache, so every request reaches the database.
func newTestStore(t *testing.T) (*auth.Store, *bun.DB, struct{}) {
	t.Helper()
	db, _ := testdb.New(t)
	return auth.NewStore(db.Bun, auth.WithCacheTTL(0)), db.Bun, struct{}{}
}

func mustCreate(t *testing.T, s *auth.Store, org string, scopes []auth.Scope, expiresAt *time.Time) (string, auth.Key) {
	t.Helper()
	plaintext, key, err := s.CreateKey(context.Background(), org, scopes, expiresAt)
	if err != nil {
		t.Fatalf("CreateKey(%q): %v", org, err)
	}
	return plaintext, key
}
