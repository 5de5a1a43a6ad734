package auth

import (
	"slices"
	"testing"
)

func TestParseScopes(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Scope
		wantErr bool
	}{
		{name: "a single scope is read", in: "news", want: []Scope{ScopeNews}},
		{name: "scopes come back in canonical order", in: "research,news,events", want: []Scope{ScopeNews, ScopeEvents, ScopeResearch}},
		{name: "spaces around names are ignored", in: " news , items ", want: []Scope{ScopeNews, ScopeItems}},
		{name: "names are case-insensitive", in: "NEWS,Webhooks", want: []Scope{ScopeNews, ScopeWebhooks}},
		{name: "duplicates collapse", in: "parse,parse", want: []Scope{ScopeParse}},
		{name: "every scope can be named", in: "news,events,items,webhooks,parse,factcheck,research,log", want: AllScopes()},
		{name: "an unknown scope is an error", in: "news,admin", wantErr: true},
		{name: "an empty list is an error", in: "", wantErr: true},
		{name: "a blank list is an error", in: "  ", wantErr: true},
		{name: "an empty name in the list is an error", in: "news,,events", wantErr: true},
		{name: "a trailing comma is an error", in: "news,", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScopes(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseScopes(%q) = %v, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseScopes(%q): %v", tt.in, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ParseScopes(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestAllScopesCannotBeChangedByACaller(t *testing.T) {
	s := AllScopes()
	s[0] = "admin"
	if AllScopes()[0] != ScopeNews {
		t.Fatalf("changing the returned slice changed the default grant")
	}
}

func TestPrincipalHasOnlyItsGrantedScopes(t *testing.T) {
	p := Principal{Scopes: []Scope{ScopeNews, ScopeItems}}
	if !p.Has(ScopeNews) || !p.Has(ScopeItems) {
		t.Fatalf("Has reports a granted scope missing")
	}
	if p.Has(ScopeWebhooks) {
		t.Fatalf("Has reports an ungranted scope present")
	}
}
