package websub

import (
	"context"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // WebSub names sha1 among the signature methods a hub may use
	"crypto/sha256"
	"crypto/sha512"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// maxLeaseSeconds bounds the lease taken from a hub's verification.
const maxLeaseSeconds = 366 * 24 * 3600

// Verification is a hub's intent verification or denial (a GET to the
// callback), as its query parameters say.
type Verification struct {
	Mode, Topic, Challenge, LeaseSeconds, Reason string
}

// Verify answers a hub's GET to the callback of subscription id: for
// hub.mode subscribe or unsubscribe, the challenge to echo when the topic
// is the subscription's and that request is the one this service sent and
// has not seen verified (ok false otherwise, to be answered 404); for
// denied, ok when the topic is the subscription's, and the subscription is
// marked denied. A verified subscribe makes the subscription active until
// its lease ends; a verified unsubscribe removes it.
func (s *Subscriber) Verify(ctx context.Context, id string, v Verification) (challenge string, ok bool, err error) {
	if !validID(id) || v.Topic == "" {
		s.metrics.verifications.WithLabelValues(modeLabel(v.Mode), "refused").Inc()
		return "", false, nil
	}
	switch v.Mode {
	case "subscribe":
		lease, err := strconv.Atoi(v.LeaseSeconds)
		if v.LeaseSeconds == "" {
			// The recommendation requires it; a hub that leaves it out gets
			// what was asked.
			lease, err = s.cfg.LeaseSeconds, nil
		}
		if err != nil || lease <= 0 || v.Challenge == "" {
			break
		}
		// A lease of years is renewed within one: the arithmetic below
		// stays far from overflowing, and the hub hears from us yearly.
		lease = min(lease, maxLeaseSeconds)
		// Renewal is due at nine tenths of the lease, so a renewal that
		// fails once still has time to be retried before the lease ends;
		// or two of the subscriber's turns (Tick) before it ends, when a
		// tenth is shorter than that (a hub granting seconds), since a due
		// renewal waits for the next turn.
		renewMS := max(0, int64(lease)*1000-max(int64(lease)*100, 2*s.cfg.Tick.Milliseconds()))
		res, err := s.db.NewRaw(`UPDATE websub_subscriptions SET state = 'active', pending_mode = NULL,
			lease_seconds = ?, lease_expires_at = now() + ? * interval '1 second', verified_at = now(),
			failures = 0, last_error = '', next_at = now() + ? * interval '1 millisecond'
			WHERE id = ? AND topic = ? AND pending_mode = 'subscribe'`, lease, lease, renewMS, id, v.Topic).Exec(ctx)
		if ok, err = affected(res, err); err != nil || !ok {
			break
		}
		s.log.Info("websub: subscription verified", "subscription", id, "topic", v.Topic, "lease_seconds", lease)
		s.metrics.verifications.WithLabelValues("subscribe", "confirmed").Inc()
		return v.Challenge, true, nil
	case "unsubscribe":
		if v.Challenge == "" {
			break
		}
		res, err := s.db.NewRaw(`DELETE FROM websub_subscriptions WHERE id = ? AND topic = ? AND pending_mode = 'unsubscribe'`,
			id, v.Topic).Exec(ctx)
		if ok, err = affected(res, err); err != nil || !ok {
			break
		}
		s.log.Info("websub: unsubscription verified", "subscription", id, "topic", v.Topic)
		s.metrics.verifications.WithLabelValues("unsubscribe", "confirmed").Inc()
		return v.Challenge, true, nil
	case "denied":
		res, err := s.db.NewRaw(`UPDATE websub_subscriptions SET state = 'denied', pending_mode = NULL,
			last_error = ?, next_at = now() + ? * interval '1 millisecond' WHERE id = ? AND topic = ?`,
			truncate("denied by the hub: "+v.Reason, 500), s.cfg.DeniedWait.Milliseconds(), id, v.Topic).Exec(ctx)
		if ok, err = affected(res, err); err != nil || !ok {
			break
		}
		s.log.Warn("websub: hub denied the subscription", "subscription", id, "topic", v.Topic, "reason", truncate(v.Reason, 200))
		s.metrics.verifications.WithLabelValues("denied", "confirmed").Inc()
		return "", true, nil
	}
	if err != nil {
		return "", false, err
	}
	s.metrics.verifications.WithLabelValues(modeLabel(v.Mode), "refused").Inc()
	return "", false, nil
}

// modeLabel bounds the metric's label values to the modes there are. It
// returns its own constants, never mode itself: a label outlives the
// request, and a string taken from a request may point into a buffer the
// next one rewrites (issue 34.1: "subscribebe", and /metrics answering
// 500 once the label was not UTF-8).
func modeLabel(mode string) string {
	switch mode {
	case "subscribe":
		return "subscribe"
	case "unsubscribe":
		return "unsubscribe"
	case "denied":
		return "denied"
	}
	return "other"
}

func affected(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, fmt.Errorf("websub verification: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("websub verification: %w", err)
	}
	return n > 0, nil
}

// PushesChannel is the Postgres notification channel on which Receive
// (the API role) tells crawler processes that it queued a push, in the
// insert's transaction; Run takes the queue when told rather than every
// tick. The payload is empty.
const PushesChannel = "feedsvc_websub_pushes"

// Delivery is what Receive made of a hub's POST.
type Delivery int

const (
	// Unknown: no such subscription (answered 404).
	Unknown Delivery = iota
	// Accepted: signed correctly by an active subscription's hub, and
	// queued for the crawler.
	Accepted
	// Ignored: the signature is missing or wrong, or the subscription is
	// not active. It is answered 2xx like Accepted, as the recommendation
	// allows, so that a forger learns nothing, but the content is dropped.
	Ignored
)

// Receive takes a hub's content distribution for subscription id: body
// (bounded by the caller to MaxBodyBytes) with its X-Hub-Signature
// header value.
func (s *Subscriber) Receive(ctx context.Context, id, signature string, body []byte) (Delivery, error) {
	if !validID(id) {
		s.metrics.pushes.WithLabelValues("unknown").Inc()
		return Unknown, nil
	}
	var sub struct {
		Secret string `bun:"secret"`
		State  string `bun:"state"`
	}
	err := s.db.NewRaw(`SELECT secret, state FROM websub_subscriptions WHERE id = ?`, id).Scan(ctx, &sub)
	if errors.Is(err, sql.ErrNoRows) {
		s.metrics.pushes.WithLabelValues("unknown").Inc()
		return Unknown, nil
	}
	if err != nil {
		return Unknown, fmt.Errorf("websub: read subscription: %w", err)
	}
	if !validSignature(signature, sub.Secret, body) {
		s.log.Warn("websub: push ignored: signature missing or wrong", "subscription", id, "bytes", len(body))
		s.metrics.pushes.WithLabelValues("bad_signature").Inc()
		return Ignored, nil
	}
	if sub.State != "active" {
		s.log.Info("websub: push ignored: subscription not active", "subscription", id, "state", sub.State)
		s.metrics.pushes.WithLabelValues("inactive").Inc()
		return Ignored, nil
	}
	// The insert notifies PushesChannel in its own transaction, so that
	// a crawler process told of it finds the row.
	if _, err := s.db.NewRaw(`WITH queued AS (INSERT INTO websub_pushes (subscription_id, body) VALUES (?, ?) RETURNING 1)
		SELECT pg_notify('`+PushesChannel+`', '') FROM queued`, id, body).Exec(ctx); err != nil {
		return Unknown, fmt.Errorf("websub: queue push: %w", err)
	}
	s.metrics.pushes.WithLabelValues("accepted").Inc()
	// A crawler in this process takes it at once, listening or not.
	s.pushHeard()
	return Accepted, nil
}

// validSignature checks X-Hub-Signature: "method=hex", the HMAC of the
// body with the subscription's secret, by one of the methods the
// recommendation names.
func validSignature(header, secret string, body []byte) bool {
	method, sig, ok := strings.Cut(strings.TrimSpace(header), "=")
	if !ok {
		return false
	}
	var h func() hash.Hash
	switch strings.ToLower(method) {
	case "sha1":
		h = sha1.New
	case "sha256":
		h = sha256.New
	case "sha384":
		h = sha512.New384
	case "sha512":
		h = sha512.New
	default:
		return false
	}
	want, err := hex.DecodeString(strings.TrimSpace(sig))
	if err != nil {
		return false
	}
	mac := hmac.New(h, []byte(secret))
	mac.Write(body)
	return hmac.Equal(mac.Sum(nil), want)
}

// Push is a subscription's state as a source's detail shows it.
type Push struct {
	Hub, Topic string
	// State is pending, active, expired or denied.
	State string
	// LeaseExpiresAt is nil until a hub verified the subscription.
	LeaseExpiresAt *time.Time
}

// PushOf reads the subscription of a source that best says how it is
// pushed (an active one first, then pending, then the others); false when
// the source names no hub. An active subscription whose lease ran out
// (its renewal was not verified in time) reads expired.
func PushOf(ctx context.Context, db bun.IDB, sourceID any) (Push, bool, error) {
	var p struct {
		Hub     string     `bun:"hub"`
		Topic   string     `bun:"topic"`
		State   string     `bun:"state"`
		Expires *time.Time `bun:"lease_expires_at"`
	}
	err := db.NewRaw(`SELECT hub, topic, lease_expires_at,
			CASE WHEN state = 'active' AND lease_expires_at <= now() THEN 'expired' ELSE state END AS state
		FROM websub_subscriptions WHERE source_id = ?
		ORDER BY CASE WHEN state = 'active' AND lease_expires_at > now() THEN 0 WHEN state = 'pending' THEN 1 ELSE 2 END, created_at
		LIMIT 1`, sourceID).Scan(ctx, &p)
	if errors.Is(err, sql.ErrNoRows) {
		return Push{}, false, nil
	}
	if err != nil {
		return Push{}, false, fmt.Errorf("read websub subscription: %w", err)
	}
	return Push{Hub: p.Hub, Topic: p.Topic, State: p.State, LeaseExpiresAt: p.Expires}, true, nil
}

// PushedCondition answers the crawler's scheduler (ingest.Parts.Pushed):
// it is the SQL condition that a hub pushes the source whose id is the
// expression source (an active subscription whose lease has not run out),
// which the statement that schedules polls embeds, reading the
// subscriptions' source index once per source. Such a source is polled
// at the longest interval, as the fallback.
func PushedCondition(source string) string {
	return `EXISTS (SELECT 1 FROM websub_subscriptions p WHERE p.source_id = ` + source + `
					AND p.state = 'active' AND p.lease_expires_at > now())`
}

// truncate bounds a stored text, keeping it valid UTF-8.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
