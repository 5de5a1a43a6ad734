package idempotency

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Retention is how long a key's answer is kept: a request repeated within
// it gets the first answer; after it, the key names a new request.
const Retention = 24 * time.Hour

// DefaultLease is how long a request owns its key while it runs. A request
// is given a little less to finish (WorkTime), so a lease runs out only
// when its owner died; then a repeat takes the key over and runs the
// request again, which finds the work already stored and answers with it.
const DefaultLease = time.Minute

// Store keeps idempotency keys in Postgres, so every API process, and a
// process started after a crash, sees them.
type Store struct {
	pool *pgxpool.Pool
	// Lease is how long a run owns its key; DefaultLease unless set.
	Lease time.Duration
}

// NewStore keeps keys in pool's database.
func NewStore(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool, Lease: DefaultLease}
}

// WorkTime is how long a run may take: its lease, less a margin for
// recording its answer.
func (s *Store) WorkTime() time.Duration { return s.Lease * 5 / 6 }

// Fingerprint is what makes two requests the same request: method, target
// (path and query as sent) and body, byte for byte.
func Fingerprint(method, target string, body []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(target))
	h.Write([]byte{0})
	h.Write(body)
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// Outcome is what Begin found for a key.
type Outcome int

const (
	// Run: the caller owns the key and runs the request in Claim.Scope.
	Run Outcome = iota
	// Replay: the request has an answer; send Claim.Answer.
	Replay
	// Running: another run of the request holds the key.
	Running
	// Mismatch: the key was used for a different request.
	Mismatch
)

// Answer is a recorded response.
type Answer struct {
	Status int
	Header map[string][]string
	Body   []byte
}

// Claim is the result of Begin.
type Claim struct {
	Outcome Outcome
	// Scope is the request's identity (Run).
	Scope Scope
	// Rerun is true when an earlier run of the request began and did not
	// record an answer (it failed with a 5xx, or its process died).
	Rerun bool
	// Answer is the first answer (Replay).
	Answer Answer

	org   uuid.UUID
	key   string
	token uuid.UUID
}

const (
	insertSQL = `
INSERT INTO idempotency_keys (organization_id, key, fingerprint, seed, created_at, lease_token, locked_until)
VALUES ($1, $2, $3, $4, now(), $5, now() + make_interval(secs => $6::float8))
ON CONFLICT (organization_id, key) DO NOTHING
RETURNING created_at`
	lookSQL = `
SELECT fingerprint, created_at, status, headers, body,
       created_at <= now() - make_interval(secs => $3::float8) AS expired,
       locked_until IS NULL OR locked_until <= now() AS free
FROM idempotency_keys WHERE organization_id = $1 AND key = $2`
	// renewSQL makes an expired key a new request's.
	renewSQL = `
UPDATE idempotency_keys
SET fingerprint = $3, seed = $4, created_at = now(), lease_token = $5,
    locked_until = now() + make_interval(secs => $6::float8), status = NULL, headers = NULL, body = NULL
WHERE organization_id = $1 AND key = $2 AND created_at = $7
RETURNING created_at`
	// takeOverSQL gives a free key without an answer to a rerun.
	takeOverSQL = `
UPDATE idempotency_keys
SET lease_token = $3, locked_until = now() + make_interval(secs => $4::float8)
WHERE organization_id = $1 AND key = $2 AND created_at = $5 AND status IS NULL
  AND (locked_until IS NULL OR locked_until <= now())
RETURNING seed, created_at`
	finishSQL = `
UPDATE idempotency_keys SET status = $4, headers = $5, body = $6, lease_token = NULL, locked_until = NULL
WHERE organization_id = $1 AND key = $2 AND lease_token = $3`
	releaseSQL = `
UPDATE idempotency_keys SET lease_token = NULL, locked_until = NULL
WHERE organization_id = $1 AND key = $2 AND lease_token = $3 AND status IS NULL`
)

// Begin claims key for org's request with fingerprint fp. Each step is one
// statement that only succeeds if nothing changed since the look before
// it; a lost race looks again.
func (s *Store) Begin(ctx context.Context, org uuid.UUID, key string, fp [32]byte) (Claim, error) {
	lease := s.Lease.Seconds()
	for range 5 {
		c := Claim{org: org, key: key, token: uuid.New(), Scope: Scope{set: true}}
		if _, err := rand.Read(c.Scope.seed[:]); err != nil {
			return Claim{}, fmt.Errorf("idempotency key: draw seed: %w", err)
		}
		err := s.pool.QueryRow(ctx, insertSQL, org, key, fp[:], c.Scope.seed[:], c.token, lease).Scan(&c.Scope.at)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Claim{}, fmt.Errorf("idempotency key: claim: %w", err)
		}
		var (
			stored        []byte
			createdAt     time.Time
			status        *int
			header        []byte
			body          []byte
			expired, free bool
		)
		err = s.pool.QueryRow(ctx, lookSQL, org, key, Retention.Seconds()).Scan(&stored, &createdAt, &status, &header, &body, &expired, &free)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // removed meanwhile: claim it anew
		}
		if err != nil {
			return Claim{}, fmt.Errorf("idempotency key: look up: %w", err)
		}
		switch {
		case expired:
			err = s.pool.QueryRow(ctx, renewSQL, org, key, fp[:], c.Scope.seed[:], c.token, lease, createdAt).Scan(&c.Scope.at)
		case string(stored) != string(fp[:]):
			return Claim{Outcome: Mismatch}, nil
		case status != nil:
			c = Claim{Outcome: Replay, Answer: Answer{Status: *status, Body: body}}
			if err := json.Unmarshal(header, &c.Answer.Header); err != nil {
				return Claim{}, fmt.Errorf("idempotency key: stored headers: %w", err)
			}
			return c, nil
		case !free:
			return Claim{Outcome: Running}, nil
		default:
			var seed []byte
			err = s.pool.QueryRow(ctx, takeOverSQL, org, key, c.token, lease, createdAt).Scan(&seed, &c.Scope.at)
			copy(c.Scope.seed[:], seed)
			c.Rerun = true
		}
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Claim{}, fmt.Errorf("idempotency key: take over: %w", err)
		}
	}
	return Claim{Outcome: Running}, nil
}

// Finish records the run's answer; every later request with the key gets
// it. A run whose lease was taken over records nothing (the new run will).
func (s *Store) Finish(ctx context.Context, c Claim, a Answer) error {
	header, err := json.Marshal(a.Header)
	if err != nil {
		return fmt.Errorf("idempotency key: encode headers: %w", err)
	}
	if _, err := s.pool.Exec(ctx, finishSQL, c.org, c.key, c.token, a.Status, header, a.Body); err != nil {
		return fmt.Errorf("idempotency key: record answer: %w", err)
	}
	return nil
}

// Release gives up the key without an answer, so that the request can be
// repeated at once, as a rerun.
func (s *Store) Release(ctx context.Context, c Claim) error {
	if _, err := s.pool.Exec(ctx, releaseSQL, c.org, c.key, c.token); err != nil {
		return fmt.Errorf("idempotency key: release: %w", err)
	}
	return nil
}

// Expire removes keys past their retention.
func (s *Store) Expire(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE created_at <= now() - make_interval(secs => $1::float8)`, Retention.Seconds())
	if err != nil {
		return 0, fmt.Errorf("expire idempotency keys: %w", err)
	}
	return tag.RowsAffected(), nil
}
