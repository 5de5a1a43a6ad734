package auth

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// queryCounter counts the statements a bun.DB runs, to prove which paths
// reach the database.
type queryCounter struct{ n atomic.Int64 }

func (q *queryCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	q.n.Add(1)
	return ctx
}
func (q *queryCounter) AfterQuery(context.Context, *bun.QueryEvent) {}

// newTestStore returns a Store over a fresh database, without the cache so
// every Authenticate reaches the database unless a test asks otherwise.
func newTestStore(t *testing.T, opts ...StoreOption) (*Store, *bun.DB, *queryCounter) {
	t.Helper()
	db, _ := testdb.New(t)
	qc := &queryCounter{}
	db.Bun.AddQueryHook(qc)
	opts = append([]StoreOption{WithCacheTTL(0)}, opts...)
	return NewStore(db.Bun, opts...), db.Bun, qc
}

// fakeClock is a settable clock for the Store.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func mustCreate(t *testing.T, s *Store, org string, scopes []Scope, expiresAt *time.Time) (string, Key) {
	t.Helper()
	plaintext, key, err := s.CreateKey(context.Background(), org, scopes, expiresAt)
	if err != nil {
		t.Fatalf("CreateKey(%q): %v", org, err)
	}
	return plaintext, key
}

func TestACreatedKeyAuthenticatesAsItsOrganizationWithItsScopes(t *testing.T) {
	s, _, _ := newTestStore(t)
	ctx := context.Background()
	plaintext, key := mustCreate(t, s, "acme", []Scope{ScopeItems, ScopeNews}, nil)

	p, err := s.Authenticate(ctx, plaintext)
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if p.KeyID != key.ID || p.OrganizationID != key.OrganizationID || p.OrganizationName != "acme" {
		t.Fatalf("principal %+v does not match key %+v", p, key)
	}
	if want := []Scope{ScopeNews, ScopeItems}; !slices.Equal(p.Scopes, want) {
		t.Fatalf("scopes = %v, want %v", p.Scopes, want)
	}
	if !strings.HasPrefix(plaintext, "fsk_"+key.Prefix+"_") {
		t.Fatalf("key %q does not start with its prefix %q", plaintext, key.Prefix)
	}
}

func TestAKeyWithoutScopesGetsAnError(t *testing.T) {
	s, _, _ := newTestStore(t)
	if _, _, err := s.CreateKey(context.Background(), "acme", nil, nil); err == nil {
		t.Fatal("CreateKey with no scopes succeeded")
	}
	if _, _, err := s.CreateKey(context.Background(), "acme", []Scope{"admin"}, nil); err == nil {
		t.Fatal("CreateKey with an unknown scope succeeded")
	}
	if _, _, err := s.CreateKey(context.Background(), "  ", AllScopes(), nil); err == nil {
		t.Fatal("CreateKey with a blank organization succeeded")
	}
	past := time.Now().Add(-time.Hour)
	if _, _, err := s.CreateKey(context.Background(), "acme", AllScopes(), &past); err == nil {
		t.Fatal("CreateKey with an expiry in the past succeeded")
	}
}

func TestTheRightPrefixWithAWrongSecretFails(t *testing.T) {
	s, _, _ := newTestStore(t)
	plaintext, _ := mustCreate(t, s, "acme", AllScopes(), nil)
	// Flip the last hex digit: same prefix, same shape, wrong secret.
	last := plaintext[len(plaintext)-1]
	flipped := byte('0')
	if last == '0' {
		flipped = '1'
	}
	wrong := plaintext[:len(plaintext)-1] + string(flipped)

	if _, err := s.Authenticate(context.Background(), wrong); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("Authenticate(wrong secret) error = %v, want ErrUnknownKey", err)
	}
}

func TestAWellFormedKeyNobodyIssuedFails(t *testing.T) {
	s, _, _ := newTestStore(t)
	plaintext, _, err := newKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(context.Background(), plaintext); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("error = %v, want ErrUnknownKey", err)
	}
}

func TestMalformedKeysFailWithoutTouchingTheDatabase(t *testing.T) {
	s, _, qc := newTestStore(t)
	before := qc.n.Load()
	for _, k := range []string{"", "garbage", "fsk_", "fsk_abc_def", "Bearer fsk_x", strings.Repeat("a", 81)} {
		if _, err := s.Authenticate(context.Background(), k); !errors.Is(err, ErrMalformedKey) {
			t.Errorf("Authenticate(%q) error = %v, want ErrMalformedKey", k, err)
		}
	}
	if n := qc.n.Load() - before; n != 0 {
		t.Fatalf("malformed keys ran %d queries, want 0", n)
	}
}

func TestAnExpiredKeyFails(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	s, _, _ := newTestStore(t)
	s.now = clock.now
	expires := clock.now().Add(time.Hour)
	plaintext, key := mustCreate(t, s, "acme", AllScopes(), &expires)
	if key.ExpiresAt == nil || !key.ExpiresAt.Equal(expires.UTC()) {
		t.Fatalf("ExpiresAt = %v, want %v", key.ExpiresAt, expires)
	}
	if _, err := s.Authenticate(context.Background(), plaintext); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	clock.advance(time.Hour)
	if _, err := s.Authenticate(context.Background(), plaintext); !errors.Is(err, ErrKeyExpired) {
		t.Fatalf("at expiry: error = %v, want ErrKeyExpired", err)
	}
}

func TestARevokedKeyFails(t *testing.T) {
	s, _, _ := newTestStore(t)
	ctx := context.Background()
	plaintext, key := mustCreate(t, s, "acme", AllScopes(), nil)
	if err := s.RevokeKey(ctx, key.ID); err != nil {
		t.Fatalf("RevokeKey: %v", err)
	}
	if _, err := s.Authenticate(ctx, plaintext); !errors.Is(err, ErrKeyRevoked) {
		t.Fatalf("error = %v, want ErrKeyRevoked", err)
	}
	// Revoking again is harmless and keeps the first revocation time.
	keys, err := s.ListKeys(ctx, "acme")
	if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil {
		t.Fatalf("ListKeys = %+v, %v; want one revoked key", keys, err)
	}
	first := *keys[0].RevokedAt
	if err := s.RevokeKey(ctx, key.ID); err != nil {
		t.Fatalf("second RevokeKey: %v", err)
	}
	keys, _ = s.ListKeys(ctx, "acme")
	if !keys[0].RevokedAt.Equal(first) {
		t.Fatalf("second revoke moved revoked_at from %v to %v", first, keys[0].RevokedAt)
	}
}

func TestRevokingAnUnknownKeyReportsNotFound(t *testing.T) {
	s, _, _ := newTestStore(t)
	if err := s.RevokeKey(context.Background(), uuid.New()); !errors.Is(err, ErrKeyNotFound) {
		t.Fatalf("error = %v, want ErrKeyNotFound", err)
	}
}

func TestTheDatabaseStoresNoPlaintext(t *testing.T) {
	s, db, _ := newTestStore(t)
	ctx := context.Background()
	plaintext, key := mustCreate(t, s, "acme", AllScopes(), nil)
	secretHex := plaintext[len(plaintext)-secretHexLen:]
	secret, err := hex.DecodeString(secretHex)
	if err != nil {
		t.Fatal(err)
	}

	// The whole row as text, plus the raw hash bytes.
	var rowText string
	var stored []byte
	err = db.NewRaw("SELECT k::text, k.secret_hash FROM api_keys AS k WHERE k.id = ?", key.ID).Scan(ctx, &rowText, &stored)
	if err != nil {
		t.Fatalf("read row: %v", err)
	}
	if strings.Contains(rowText, secretHex) || strings.Contains(rowText, plaintext) {
		t.Fatalf("row %q contains the secret", rowText)
	}
	if bytes.Contains(stored, secret) || bytes.Equal(stored, secret) {
		t.Fatalf("secret_hash holds the raw secret")
	}
	if !bytes.Equal(stored, hashSecret(secret)) {
		t.Fatalf("secret_hash is not SHA-256 of the secret")
	}
}

func TestTwoKeysForOneOrganizationShareIt(t *testing.T) {
	s, db, _ := newTestStore(t)
	ctx := context.Background()
	_, k1 := mustCreate(t, s, "acme", AllScopes(), nil)
	_, k2 := mustCreate(t, s, " acme ", []Scope{ScopeNews}, nil)
	if k1.OrganizationID != k2.OrganizationID {
		t.Fatalf("keys got organizations %s and %s", k1.OrganizationID, k2.OrganizationID)
	}
	n, err := db.NewSelect().Table("organizations").Count(ctx)
	if err != nil || n != 1 {
		t.Fatalf("organizations = %d, %v; want 1", n, err)
	}
}

func TestConcurrentCreatesForANewOrganizationMakeItOnce(t *testing.T) {
	s, db, _ := newTestStore(t)
	ctx := context.Background()
	const n = 8
	ids := make([]uuid.UUID, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, k, err := s.CreateKey(ctx, "racing", AllScopes(), nil)
			ids[i], errs[i] = k.OrganizationID, err
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("create %d: %v", i, errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("creates saw organizations %s and %s", ids[0], ids[i])
		}
	}
	count, err := db.NewSelect().Table("organizations").Where("name = 'racing'").Count(ctx)
	if err != nil || count != 1 {
		t.Fatalf("organizations named racing = %d, %v; want 1", count, err)
	}
}

func TestListKeysFiltersByOrganizationAndShowsNoSecret(t *testing.T) {
	s, _, _ := newTestStore(t)
	ctx := context.Background()
	_, a := mustCreate(t, s, "acme", AllScopes(), nil)
	_, b := mustCreate(t, s, "globex", []Scope{ScopeEvents}, nil)

	all, err := s.ListKeys(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ID != a.ID || all[1].ID != b.ID {
		t.Fatalf("ListKeys(\"\") = %+v, want acme's then globex's key", all)
	}
	only, err := s.ListKeys(ctx, "globex")
	if err != nil {
		t.Fatal(err)
	}
	if len(only) != 1 || only[0].ID != b.ID || only[0].OrganizationName != "globex" || !slices.Equal(only[0].Scopes, []Scope{ScopeEvents}) {
		t.Fatalf("ListKeys(globex) = %+v", only)
	}
	none, err := s.ListKeys(ctx, "initech")
	if err != nil || len(none) != 0 {
		t.Fatalf("ListKeys(unknown org) = %+v, %v; want none", none, err)
	}
}

func TestLastUsedIsWrittenAtMostOnceAMinute(t *testing.T) {
	clock := &fakeClock{t: time.Now().Truncate(time.Millisecond)}
	s, _, _ := newTestStore(t)
	s.now = clock.now
	ctx := context.Background()
	plaintext, _ := mustCreate(t, s, "acme", AllScopes(), nil)

	lastUsed := func() *time.Time {
		t.Helper()
		keys, err := s.ListKeys(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		return keys[0].LastUsedAt
	}
	if lu := lastUsed(); lu != nil {
		t.Fatalf("a fresh key has last_used_at %v", lu)
	}
	mustAuth := func() {
		t.Helper()
		if _, err := s.Authenticate(ctx, plaintext); err != nil {
			t.Fatal(err)
		}
	}
	mustAuth()
	first := lastUsed()
	if first == nil || !first.Equal(clock.now()) {
		t.Fatalf("last_used_at = %v, want %v", first, clock.now())
	}
	clock.advance(30 * time.Second)
	mustAuth()
	if lu := lastUsed(); !lu.Equal(*first) {
		t.Fatalf("a use 30s later rewrote last_used_at to %v", lu)
	}
	clock.advance(31 * time.Second)
	mustAuth()
	if lu := lastUsed(); !lu.Equal(clock.now()) {
		t.Fatalf("a use 61s later left last_used_at at %v, want %v", lu, clock.now())
	}
}

func TestTheCacheServesRepeatAuthenticationsWithoutQueries(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	s, _, qc := newTestStore(t, WithCacheTTL(30*time.Second))
	s.now = clock.now
	ctx := context.Background()
	plaintext, key := mustCreate(t, s, "acme", AllScopes(), nil)

	if _, err := s.Authenticate(ctx, plaintext); err != nil {
		t.Fatal(err)
	}
	before := qc.n.Load()
	p, err := s.Authenticate(ctx, plaintext)
	if err != nil || p.KeyID != key.ID {
		t.Fatalf("cached Authenticate = %+v, %v", p, err)
	}
	if n := qc.n.Load() - before; n != 0 {
		t.Fatalf("a cached authentication ran %d queries", n)
	}
	// A caller changing its copy must not change the cached grant.
	p.Scopes[0] = "admin"
	if again, _ := s.Authenticate(ctx, plaintext); again.Scopes[0] != ScopeNews {
		t.Fatalf("cached scopes were changed through a returned Principal")
	}
}

func TestARevokeThroughTheSameStoreAppliesAtOnceDespiteTheCache(t *testing.T) {
	s, _, _ := newTestStore(t, WithCacheTTL(time.Hour))
	ctx := context.Background()
	plaintext, key := mustCreate(t, s, "acme", AllScopes(), nil)
	if _, err := s.Authenticate(ctx, plaintext); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeKey(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, plaintext); !errors.Is(err, ErrKeyRevoked) {
		t.Fatalf("error = %v, want ErrKeyRevoked", err)
	}
}

func TestARevokeFromAnotherProcessAppliesWithinTheCacheTTL(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	server, db, _ := newTestStore(t, WithCacheTTL(30*time.Second))
	server.now = clock.now
	cli := NewStore(db) // stands in for `feedsvc keys revoke` in another process
	ctx := context.Background()
	plaintext, key := mustCreate(t, server, "acme", AllScopes(), nil)
	if _, err := server.Authenticate(ctx, plaintext); err != nil {
		t.Fatal(err)
	}
	if err := cli.RevokeKey(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	clock.advance(29 * time.Second)
	if _, err := server.Authenticate(ctx, plaintext); err != nil {
		t.Fatalf("inside the TTL the cached authentication should still hold: %v", err)
	}
	clock.advance(time.Second)
	if _, err := server.Authenticate(ctx, plaintext); !errors.Is(err, ErrKeyRevoked) {
		t.Fatalf("after the TTL: error = %v, want ErrKeyRevoked", err)
	}
}

func TestTheCacheNeverOutlivesTheKeysExpiry(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	s, _, _ := newTestStore(t, WithCacheTTL(time.Hour))
	s.now = clock.now
	ctx := context.Background()
	expires := clock.now().Add(10 * time.Second)
	plaintext, _ := mustCreate(t, s, "acme", AllScopes(), &expires)
	if _, err := s.Authenticate(ctx, plaintext); err != nil {
		t.Fatal(err)
	}
	clock.advance(10 * time.Second)
	if _, err := s.Authenticate(ctx, plaintext); !errors.Is(err, ErrKeyExpired) {
		t.Fatalf("error = %v, want ErrKeyExpired", err)
	}
}

func TestADatabaseFailureIsNotReportedAsABadKey(t *testing.T) {
	s, db, _ := newTestStore(t)
	plaintext, _ := mustCreate(t, s, "acme", AllScopes(), nil)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := s.Authenticate(context.Background(), plaintext)
	if err == nil {
		t.Fatal("Authenticate succeeded on a closed database")
	}
	for _, sentinel := range []error{ErrMalformedKey, ErrUnknownKey, ErrKeyExpired, ErrKeyRevoked} {
		if errors.Is(err, sentinel) {
			t.Fatalf("database failure reported as %v", sentinel)
		}
	}
}
