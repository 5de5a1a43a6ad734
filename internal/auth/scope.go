package auth

import (
	"fmt"
	"slices"
	"strings"
)

// Scope names one endpoint group a key may use (D3).
type Scope string

// The scopes of D3. Fact-checking and research have no endpoints yet (D12)
// but their scopes exist so keys issued today keep working when they do.
const (
	ScopeNews      Scope = "news"
	ScopeEvents    Scope = "events"
	ScopeItems     Scope = "items"
	ScopeWebhooks  Scope = "webhooks"
	ScopeParse     Scope = "parse"
	ScopeFactcheck Scope = "factcheck"
	ScopeResearch  Scope = "research"
	// ScopeLog reads the organization's log and its extracts (GET /log
	// and below), for analysts.
	ScopeLog Scope = "log"
)

// allScopes is the canonical order; scopes are always stored and printed in
// it so two keys with the same grants look the same.
var allScopes = []Scope{
	ScopeNews, ScopeEvents, ScopeItems, ScopeWebhooks, ScopeParse, ScopeFactcheck, ScopeResearch, ScopeLog,
}

// AllScopes returns every scope, the default grant of a new key. It returns a
// fresh slice so no caller can change the default for everyone else.
func AllScopes() []Scope {
	return slices.Clone(allScopes)
}

// Valid reports whether s is one of the known scopes.
func (s Scope) Valid() bool {
	return slices.Contains(allScopes, s)
}

// ParseScopes reads a comma-separated scope list such as "news, events".
// Names are matched case-insensitively; duplicates collapse; the result is in
// canonical order. An unknown or empty name is an error, and so is an empty
// list: a key without scopes could do nothing, so asking for one is a mistake.
func ParseScopes(list string) ([]Scope, error) {
	if strings.TrimSpace(list) == "" {
		return nil, fmt.Errorf("no scopes given (known scopes: %s)", FormatScopes(allScopes))
	}
	var want []Scope
	for _, part := range strings.Split(list, ",") {
		name := strings.ToLower(strings.TrimSpace(part))
		if name == "" {
			return nil, fmt.Errorf("empty scope in %q", list)
		}
		s := Scope(name)
		if !s.Valid() {
			return nil, fmt.Errorf("unknown scope %q (known scopes: %s)", strings.TrimSpace(part), FormatScopes(allScopes))
		}
		want = append(want, s)
	}
	return normalizeScopes(want)
}

// normalizeScopes validates scopes and returns them deduplicated in
// canonical order.
func normalizeScopes(scopes []Scope) ([]Scope, error) {
	if len(scopes) == 0 {
		return nil, fmt.Errorf("no scopes given (known scopes: %s)", FormatScopes(allScopes))
	}
	for _, s := range scopes {
		if !s.Valid() {
			return nil, fmt.Errorf("unknown scope %q (known scopes: %s)", s, FormatScopes(allScopes))
		}
	}
	out := make([]Scope, 0, len(scopes))
	for _, s := range allScopes {
		if slices.Contains(scopes, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// FormatScopes renders scopes as the comma-separated form ParseScopes reads.
func FormatScopes(scopes []Scope) string {
	return strings.Join(scopeStrings(scopes), ",")
}
