// Package auth issues and checks API keys (api.md section 5, D3): keys are
// minted by the operator CLI, stored only as a hash, and presented on every
// request as `Authorization: Bearer <key>`.
package auth

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
)

// Authentication outcomes the middleware turns into distinct 401 texts.
// Anything else returned by Authenticate is an infrastructure failure (500).
var (
	ErrMalformedKey = errors.New("malformed API key")
	ErrUnknownKey   = errors.New("invalid API key")
	ErrKeyExpired   = errors.New("API key has expired")
	ErrKeyRevoked   = errors.New("API key has been revoked")
)

// ErrKeyNotFound is returned by RevokeKey for an id no key has.
var ErrKeyNotFound = errors.New("API key not found")

// lastUsedGranularity bounds how often a key's last_used_at is written: a
// busy key would otherwise turn every request into a row update.
const lastUsedGranularity = time.Minute

// DefaultCacheTTL is how long a successful authentication is reused without
// asking the database, and therefore the longest a revoke made by another
// process (the CLI) can take to be noticed.
const DefaultCacheTTL = 30 * time.Second

// maxOrgNameLen keeps organization names printable in a listing.
const maxOrgNameLen = 200

// Key describes an issued key; it never carries the secret or its hash.
type Key struct {
	ID               uuid.UUID
	OrganizationID   uuid.UUID
	OrganizationName string
	// Prefix is the public lookup part; the key starts "fsk_<Prefix>_".
	Prefix     string
	Scopes     []Scope
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
	// Rate is the key's own request rate; nil means the service default.
	Rate *Rate
}

// Principal is the caller a valid key identifies.
type Principal struct {
	OrganizationID   uuid.UUID
	OrganizationName string
	KeyID            uuid.UUID
	Scopes           []Scope
	// Rate is the key's own request rate; nil means the service default.
	Rate *Rate
}

// Has reports whether the key was granted scope s.
func (p Principal) Has(s Scope) bool {
	return slices.Contains(p.Scopes, s)
}

// Store keeps organizations and API keys in Postgres.
type Store struct {
	db    *bun.DB
	now   func() time.Time
	cache *authCache
}

// StoreOption adjusts a Store.
type StoreOption func(*Store)

// WithCacheTTL sets how long successful authentications are cached in
// process; zero or less disables the cache.
func WithCacheTTL(ttl time.Duration) StoreOption {
	return func(s *Store) {
		if ttl <= 0 {
			s.cache = nil
			return
		}
		s.cache = newAuthCache(ttl)
	}
}

// NewStore returns a Store over db with a DefaultCacheTTL cache.
func NewStore(db *bun.DB, opts ...StoreOption) *Store {
	s := &Store{db: db, now: time.Now, cache: newAuthCache(DefaultCacheTTL)}
	for _, opt := range opts {
		opt(s)
	}
	return s
}

type organizationRow struct {
	bun.BaseModel `bun:"table:organizations,alias:o"`

	ID        uuid.UUID `bun:"id,pk,type:uuid"`
	Name      string    `bun:"name,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

type apiKeyRow struct {
	bun.BaseModel `bun:"table:api_keys,alias:k"`

	ID             uuid.UUID  `bun:"id,pk,type:uuid"`
	OrganizationID uuid.UUID  `bun:"organization_id,type:uuid,notnull"`
	Prefix         string     `bun:"prefix,notnull"`
	SecretHash     []byte     `bun:"secret_hash,type:bytea,notnull"`
	Scopes         []string   `bun:"scopes,array,notnull"`
	CreatedAt      time.Time  `bun:"created_at,notnull"`
	ExpiresAt      *time.Time `bun:"expires_at"`
	RevokedAt      *time.Time `bun:"revoked_at"`
	LastUsedAt     *time.Time `bun:"last_used_at"`
	// NULL both: the default rate; a limit of 0: unlimited.
	RateLimit         *int `bun:"rate_limit"`
	RateWindowSeconds *int `bun:"rate_window_seconds"`

	// Filled by queries that join organizations; never written.
	OrganizationName string `bun:"organization_name,scanonly"`
}

func (r apiKeyRow) toKey() Key {
	scopes := make([]Scope, len(r.Scopes))
	for i, s := range r.Scopes {
		scopes[i] = Scope(s)
	}
	return Key{
		ID:               r.ID,
		OrganizationID:   r.OrganizationID,
		OrganizationName: r.OrganizationName,
		Prefix:           r.Prefix,
		Scopes:           scopes,
		CreatedAt:        utc(r.CreatedAt),
		ExpiresAt:        utcPtr(r.ExpiresAt),
		RevokedAt:        utcPtr(r.RevokedAt),
		LastUsedAt:       utcPtr(r.LastUsedAt),
		Rate:             r.rate(),
	}
}

func (r apiKeyRow) rate() *Rate {
	switch {
	case r.RateLimit == nil:
		return nil
	case *r.RateLimit == 0 || r.RateWindowSeconds == nil:
		return &Rate{}
	}
	return &Rate{Limit: *r.RateLimit, Window: time.Duration(*r.RateWindowSeconds) * time.Second}
}

// setRate stores rate on the row; nil is the default.
func (r *apiKeyRow) setRate(rate *Rate) {
	r.RateLimit, r.RateWindowSeconds = nil, nil
	if rate == nil {
		return
	}
	limit := rate.Limit
	r.RateLimit = &limit
	if !rate.IsUnlimited() {
		secs := int(rate.Window / time.Second)
		r.RateWindowSeconds = &secs
	}
}

// KeyOption adds to what CreateKey issues.
type KeyOption func(*apiKeyRow) error

// WithRate gives the key its own request rate instead of the default.
func WithRate(rate Rate) KeyOption {
	return func(row *apiKeyRow) error {
		if err := rate.valid(); err != nil {
			return err
		}
		row.setRate(&rate)
		return nil
	}
}

// CreateKey issues a key for the organization named orgName, creating the
// organization if it does not exist. It returns the plaintext, which exists
// nowhere else afterwards: only its hash is stored.
func (s *Store) CreateKey(ctx context.Context, orgName string, scopes []Scope, expiresAt *time.Time, opts ...KeyOption) (string, Key, error) {
	orgName = strings.TrimSpace(orgName)
	if orgName == "" {
		return "", Key{}, errors.New("create key: organization name is empty")
	}
	if len(orgName) > maxOrgNameLen {
		return "", Key{}, fmt.Errorf("create key: organization name is longer than %d bytes", maxOrgNameLen)
	}
	scopes, err := normalizeScopes(scopes)
	if err != nil {
		return "", Key{}, fmt.Errorf("create key: %w", err)
	}
	now := s.now().UTC()
	if expiresAt != nil {
		if !expiresAt.After(now) {
			return "", Key{}, fmt.Errorf("create key: expiry %s is not in the future", expiresAt.UTC().Format(time.RFC3339))
		}
		e := expiresAt.UTC()
		expiresAt = &e
	}

	var (
		plaintext string
		row       apiKeyRow
	)
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		org, err := ensureOrganization(ctx, tx, orgName, now)
		if err != nil {
			return err
		}
		// A prefix collision needs two equal 60-bit random draws; retrying
		// covers it anyway rather than failing an operator's command. The
		// savepoint keeps the transaction usable after a unique violation.
		for attempt := 0; ; attempt++ {
			var k parsedKey
			plaintext, k, err = newKey()
			if err != nil {
				return err
			}
			id, err := uuid.NewV7()
			if err != nil {
				return fmt.Errorf("mint key id: %w", err)
			}
			row = apiKeyRow{
				ID:               id,
				OrganizationID:   org.ID,
				Prefix:           k.prefix,
				SecretHash:       hashSecret(k.secret),
				Scopes:           scopeStrings(scopes),
				CreatedAt:        now,
				ExpiresAt:        expiresAt,
				OrganizationName: org.Name,
			}
			for _, opt := range opts {
				if err := opt(&row); err != nil {
					return err
				}
			}
			err = insertKey(ctx, tx, &row)
			if err == nil {
				return nil
			}
			if !isUniqueViolation(err, "api_keys_prefix_key") || attempt >= 3 {
				return err
			}
		}
	})
	if err != nil {
		return "", Key{}, fmt.Errorf("create key for organization %q: %w", orgName, err)
	}
	return plaintext, row.toKey(), nil
}

// ensureOrganization returns the organization named name, creating it if
// needed. The no-op DO UPDATE makes the upsert return the row in both cases,
// so two concurrent creates for one new name both succeed with the same id.
func ensureOrganization(ctx context.Context, tx bun.Tx, name string, now time.Time) (organizationRow, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return organizationRow{}, fmt.Errorf("mint organization id: %w", err)
	}
	org := organizationRow{ID: id, Name: name, CreatedAt: now}
	_, err = tx.NewInsert().
		Model(&org).
		On("CONFLICT (name) DO UPDATE").
		Set("name = EXCLUDED.name").
		Returning("id, name, created_at").
		Exec(ctx)
	if err != nil {
		return organizationRow{}, fmt.Errorf("upsert organization: %w", err)
	}
	return org, nil
}

func insertKey(ctx context.Context, tx bun.Tx, row *apiKeyRow) error {
	return tx.RunInTx(ctx, nil, func(ctx context.Context, sp bun.Tx) error {
		if _, err := sp.NewInsert().Model(row).Exec(ctx); err != nil {
			return fmt.Errorf("insert api key: %w", err)
		}
		return nil
	})
}

// ListKeys returns the keys of the organization named orgName, or of every
// organization when orgName is empty, oldest first.
func (s *Store) ListKeys(ctx context.Context, orgName string) ([]Key, error) {
	var rows []apiKeyRow
	q := s.db.NewSelect().
		Model(&rows).
		ColumnExpr("k.id, k.organization_id, k.prefix, k.scopes, k.created_at, k.expires_at, k.revoked_at, k.last_used_at, k.rate_limit, k.rate_window_seconds").
		ColumnExpr("o.name AS organization_name").
		Join("JOIN organizations AS o ON o.id = k.organization_id").
		OrderExpr("o.name, k.created_at, k.id")
	if name := strings.TrimSpace(orgName); name != "" {
		q = q.Where("o.name = ?", name)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	keys := make([]Key, len(rows))
	for i, r := range rows {
		keys[i] = r.toKey()
	}
	return keys, nil
}

// RevokeKey marks the key revoked. Revoking twice keeps the first time.
// This process forgets the key at once; other processes serving the API stop
// accepting it when their cached authentication expires (DefaultCacheTTL).
func (s *Store) RevokeKey(ctx context.Context, id uuid.UUID) error {
	res, err := s.db.NewUpdate().
		Model((*apiKeyRow)(nil)).
		Set("revoked_at = COALESCE(revoked_at, ?)", s.now().UTC()).
		Where("id = ?", id).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("revoke api key %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("revoke api key %s: %w", id, err)
	}
	if s.cache != nil {
		s.cache.forgetKey(id)
	}
	if n == 0 {
		return fmt.Errorf("revoke api key %s: %w", id, ErrKeyNotFound)
	}
	return nil
}

// SetRate changes a key's request rate; nil returns it to the default.
// Like a revoke, servers that cached the key apply it within
// DefaultCacheTTL.
func (s *Store) SetRate(ctx context.Context, id uuid.UUID, rate *Rate) error {
	if rate != nil {
		if err := rate.valid(); err != nil {
			return fmt.Errorf("set rate of api key %s: %w", id, err)
		}
	}
	var row apiKeyRow
	row.setRate(rate)
	res, err := s.db.NewUpdate().
		Model((*apiKeyRow)(nil)).
		Set("rate_limit = ?, rate_window_seconds = ?", row.RateLimit, row.RateWindowSeconds).
		Where("id = ?", id).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("set rate of api key %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("set rate of api key %s: %w", id, err)
	}
	if s.cache != nil {
		s.cache.forgetKey(id)
	}
	if n == 0 {
		return fmt.Errorf("set rate of api key %s: %w", id, ErrKeyNotFound)
	}
	return nil
}

// Authenticate checks a plaintext key and returns whom it identifies.
// Failures are ErrMalformedKey (checked without touching the database),
// ErrUnknownKey, ErrKeyRevoked or ErrKeyExpired; any other error means the
// check itself could not be made.
func (s *Store) Authenticate(ctx context.Context, plaintext string) (Principal, error) {
	k, err := parseKey(plaintext)
	if err != nil {
		return Principal{}, err
	}
	now := s.now()
	var ck cacheKey
	if s.cache != nil {
		ck = cacheKeyOf(plaintext)
		if p, ok := s.cache.get(ck, now); ok {
			return p, nil
		}
	}

	var row apiKeyRow
	err = s.db.NewSelect().
		Model(&row).
		ColumnExpr("k.*").
		ColumnExpr("o.name AS organization_name").
		Join("JOIN organizations AS o ON o.id = k.organization_id").
		Where("k.prefix = ?", k.prefix).
		Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, ErrUnknownKey
	}
	if err != nil {
		return Principal{}, fmt.Errorf("look up api key: %w", err)
	}
	// The secret is checked before revocation and expiry, so knowing only a
	// prefix (which is not secret) reveals nothing about the key's state.
	if subtle.ConstantTimeCompare(hashSecret(k.secret), row.SecretHash) != 1 {
		return Principal{}, ErrUnknownKey
	}
	if row.RevokedAt != nil {
		return Principal{}, ErrKeyRevoked
	}
	if row.ExpiresAt != nil && !now.Before(*row.ExpiresAt) {
		return Principal{}, ErrKeyExpired
	}

	key := row.toKey()
	p := Principal{
		OrganizationID:   key.OrganizationID,
		OrganizationName: key.OrganizationName,
		KeyID:            key.ID,
		Scopes:           key.Scopes,
		Rate:             key.Rate,
	}
	s.touch(ctx, row, now)
	if s.cache != nil {
		s.cache.put(ck, p, row.ExpiresAt, now)
	}
	return p, nil
}

// touch records use of a key at most once per lastUsedGranularity. The
// condition is repeated in SQL so several processes seeing the same stale
// value still write once. A failure is logged, not returned: the caller is
// authenticated, and bookkeeping must not turn that into an error.
func (s *Store) touch(ctx context.Context, row apiKeyRow, now time.Time) {
	cutoff := now.Add(-lastUsedGranularity)
	if row.LastUsedAt != nil && row.LastUsedAt.After(cutoff) {
		return
	}
	_, err := s.db.NewUpdate().
		Model((*apiKeyRow)(nil)).
		Set("last_used_at = ?", now.UTC()).
		Where("id = ?", row.ID).
		Where("last_used_at IS NULL OR last_used_at <= ?", cutoff.UTC()).
		Exec(ctx)
	if err != nil {
		slog.WarnContext(ctx, "record api key use", "key_id", row.ID, "error", err)
	}
}

func scopeStrings(scopes []Scope) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return out
}

func isUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == constraint
}

func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
