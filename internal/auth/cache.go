package auth

import (
	"crypto/sha256"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
)

// maxCacheEntries bounds memory if many distinct keys are presented; past
// it the cache drops stale entries, and if that is not enough, everything.
// Dropping is always safe: a miss only costs one indexed query.
const maxCacheEntries = 10_000

// cacheKey is SHA-256 of the full presented key, so the cache never holds a
// usable key and an entry can only be hit by presenting the same secret.
type cacheKey [sha256.Size]byte

func cacheKeyOf(plaintext string) cacheKey {
	return sha256.Sum256([]byte(plaintext))
}

type cacheEntry struct {
	principal Principal
	keyExpiry *time.Time // the key's own expiry, checked on every hit
	until     time.Time  // when this entry stops being trusted
}

// authCache remembers successful authentications for a short TTL so a
// busy client does not cost a query per request. The price is that a revoke
// made in another process (the CLI) is honoured only once the entry ages
// out, i.e. within the TTL; revokes through the same Store apply at once.
// Key expiry is re-checked on every hit, so an expiring key is never
// accepted late.
type authCache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[cacheKey]cacheEntry
}

func newAuthCache(ttl time.Duration) *authCache {
	return &authCache{ttl: ttl, entries: make(map[cacheKey]cacheEntry)}
}

func (c *authCache) get(k cacheKey, now time.Time) (Principal, bool) {
	c.mu.Lock()
	e, ok := c.entries[k]
	if ok && (!now.Before(e.until) || (e.keyExpiry != nil && !now.Before(*e.keyExpiry))) {
		delete(c.entries, k)
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		return Principal{}, false
	}
	// A copy, so a handler changing it cannot alter the cached grant.
	return e.principal.clone(), true
}

func (c *authCache) put(k cacheKey, p Principal, keyExpiry *time.Time, now time.Time) {
	p = p.clone()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCacheEntries {
		for ek, e := range c.entries {
			if !now.Before(e.until) {
				delete(c.entries, ek)
			}
		}
		if len(c.entries) >= maxCacheEntries {
			clear(c.entries)
		}
	}
	c.entries[k] = cacheEntry{principal: p, keyExpiry: keyExpiry, until: now.Add(c.ttl)}
}

// forgetKey drops every entry for the key id, used when this process revokes.
func (c *authCache) forgetKey(id uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if e.principal.KeyID == id {
			delete(c.entries, k)
		}
	}
}

// clone copies what a Principal refers to.
func (p Principal) clone() Principal {
	p.Scopes = slices.Clone(p.Scopes)
	if p.Rate != nil {
		r := *p.Rate
		p.Rate = &r
	}
	return p
}
