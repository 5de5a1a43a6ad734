package main

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// run calls runKeys as main would and returns what it printed.
func run(t *testing.T, db *database.DB, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = runKeys(context.Background(), db, args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

var keyIDLine = regexp.MustCompile(`(?m)^key id:\s+(\S+)$`)

func TestKeysCreatePrintsAKeyAloneOnTheLastLineThatAuthenticates(t *testing.T) {
	db, _ := testdb.New(t)
	out, stderr, err := run(t, db, "create", "--org", "acme", "--scopes", "news,items", "--expires", "30d")
	if err != nil {
		t.Fatalf("keys create: %v\nstderr: %s", err, stderr)
	}
	key := lastLine(out)
	if !regexp.MustCompile(`^fsk_[a-z2-7]{12}_[0-9a-f]{64}$`).MatchString(key) {
		t.Fatalf("last line %q is not a key alone; output:\n%s", key, out)
	}
	p, err := auth.NewStore(db.Bun).Authenticate(context.Background(), key)
	if err != nil {
		t.Fatalf("printed key does not authenticate: %v", err)
	}
	if p.OrganizationName != "acme" || !slices.Equal(p.Scopes, []auth.Scope{auth.ScopeNews, auth.ScopeItems}) {
		t.Fatalf("principal = %+v", p)
	}
	m := keyIDLine.FindStringSubmatch(out)
	if m == nil || m[1] != p.KeyID.String() {
		t.Fatalf("summary does not show key id %s:\n%s", p.KeyID, out)
	}
	keys, err := auth.NewStore(db.Bun).ListKeys(context.Background(), "acme")
	if err != nil || len(keys) != 1 || keys[0].ExpiresAt == nil {
		t.Fatalf("ListKeys = %+v, %v", keys, err)
	}
	if d := time.Until(*keys[0].ExpiresAt); d < 29*24*time.Hour || d > 30*24*time.Hour {
		t.Fatalf("30d key expires in %s", d)
	}
}

func TestKeysCreateGrantsAllScopesByDefault(t *testing.T) {
	db, _ := testdb.New(t)
	out, _, err := run(t, db, "create", "--org", "acme")
	if err != nil {
		t.Fatal(err)
	}
	p, err := auth.NewStore(db.Bun).Authenticate(context.Background(), lastLine(out))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Scopes, auth.AllScopes()) {
		t.Fatalf("scopes = %v, want all", p.Scopes)
	}
}

func TestKeysCreateRejectsBadInput(t *testing.T) {
	db, _ := testdb.New(t)
	tests := []struct {
		name string
		args []string
	}{
		{"a missing --org", []string{"create"}},
		{"a blank --org", []string{"create", "--org", "  "}},
		{"an unknown scope", []string{"create", "--org", "acme", "--scopes", "news,admin"}},
		{"an empty --scopes", []string{"create", "--org", "acme", "--scopes", ""}},
		{"a bad duration", []string{"create", "--org", "acme", "--expires", "soon"}},
		{"a negative duration", []string{"create", "--org", "acme", "--expires", "-1h"}},
		{"a zero duration", []string{"create", "--org", "acme", "--expires", "0d"}},
		{"a stray argument", []string{"create", "--org", "acme", "extra"}},
		{"an unknown flag", []string{"create", "--org", "acme", "--admin"}},
	}
	for _, tt := range tests {
		t.Run("it refuses "+tt.name, func(t *testing.T) {
			out, _, err := run(t, db, tt.args...)
			if err == nil {
				t.Fatalf("keys %v succeeded:\n%s", tt.args, out)
			}
		})
	}
	keys, err := auth.NewStore(db.Bun).ListKeys(context.Background(), "")
	if err != nil || len(keys) != 0 {
		t.Fatalf("refused commands left keys behind: %+v, %v", keys, err)
	}
}

func TestKeysListShowsTheKeyButNotItsSecret(t *testing.T) {
	db, _ := testdb.New(t)
	out, _, err := run(t, db, "create", "--org", "acme")
	if err != nil {
		t.Fatal(err)
	}
	key := lastLine(out)
	id := keyIDLine.FindStringSubmatch(out)[1]
	if _, _, err := run(t, db, "create", "--org", "globex"); err != nil {
		t.Fatal(err)
	}

	list, _, err := run(t, db, "list", "--org", "acme")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list, id) || !strings.Contains(list, "acme") {
		t.Fatalf("list does not show key %s:\n%s", id, list)
	}
	if strings.Contains(list, "globex") {
		t.Fatalf("list --org acme shows another organization:\n%s", list)
	}
	secret := key[strings.LastIndex(key, "_")+1:]
	if strings.Contains(list, secret) || strings.Contains(list, key) {
		t.Fatalf("list shows the secret:\n%s", list)
	}

	all, _, err := run(t, db, "list")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(all, "acme") || !strings.Contains(all, "globex") {
		t.Fatalf("list without --org misses an organization:\n%s", all)
	}
}

func TestKeysRevokeStopsTheKeyFromAuthenticating(t *testing.T) {
	db, _ := testdb.New(t)
	out, _, err := run(t, db, "create", "--org", "acme")
	if err != nil {
		t.Fatal(err)
	}
	key := lastLine(out)
	id := keyIDLine.FindStringSubmatch(out)[1]

	if _, stderr, err := run(t, db, "revoke", id); err != nil {
		t.Fatalf("keys revoke: %v\n%s", err, stderr)
	}
	if _, err := auth.NewStore(db.Bun).Authenticate(context.Background(), key); !errors.Is(err, auth.ErrKeyRevoked) {
		t.Fatalf("after revoke: error = %v, want ErrKeyRevoked", err)
	}
	list, _, err := run(t, db, "list")
	if err != nil {
		t.Fatal(err)
	}
	row := ""
	for _, line := range strings.Split(list, "\n") {
		if strings.HasPrefix(line, id) {
			row = line
		}
	}
	if row == "" || strings.Count(row, time.Now().UTC().Format("2006-01-02")) < 2 {
		t.Fatalf("list row does not show the revocation time: %q", row)
	}
}

func TestKeysRevokeRejectsUnknownAndMalformedIDs(t *testing.T) {
	db, _ := testdb.New(t)
	if _, _, err := run(t, db, "revoke", uuid.NewString()); !errors.Is(err, auth.ErrKeyNotFound) {
		t.Fatalf("unknown id: error = %v, want ErrKeyNotFound", err)
	}
	for _, args := range [][]string{{"revoke"}, {"revoke", "not-a-uuid"}, {"revoke", uuid.NewString(), uuid.NewString()}} {
		if _, _, err := run(t, db, args...); err == nil {
			t.Fatalf("keys %v succeeded", args)
		}
	}
}

func TestKeysHelpPrintsUsageAndIsNotAnError(t *testing.T) {
	db, _ := testdb.New(t)
	for _, args := range [][]string{{"-h"}, {"create", "-h"}, {"list", "-h"}, {"revoke", "-h"}} {
		out, stderr, err := run(t, db, args...)
		if err != nil {
			t.Fatalf("keys %v: %v", args, err)
		}
		if !strings.Contains(out+stderr, "Usage: feedsvc keys") {
			t.Fatalf("keys %v printed no usage:\n%s%s", args, out, stderr)
		}
	}
	if _, stderr, err := run(t, db); err == nil || !strings.Contains(stderr, "Usage") {
		t.Fatalf("no command: err %v, stderr %q", err, stderr)
	}
	if _, _, err := run(t, db, "rotate"); err == nil {
		t.Fatal("unknown command succeeded")
	}
}

func TestParseLifetime(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{in: "720h", want: 720 * time.Hour},
		{in: "30d", want: 30 * 24 * time.Hour},
		{in: "1d12h", want: 36 * time.Hour},
		{in: "90m", want: 90 * time.Minute},
		{in: "", wantErr: true},
		{in: "d", wantErr: true},
		{in: "0d", wantErr: true},
		{in: "-5d", wantErr: true},
		{in: "1.5d", wantErr: true},
		{in: "30days", wantErr: true},
		{in: "100000d", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseLifetime(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseLifetime(%q) = %s, want an error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseLifetime(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestKeysCarryARateGivenAtCreateAndChangedLater(t *testing.T) {
	db, _ := testdb.New(t)
	store := auth.NewStore(db.Bun, auth.WithCacheTTL(0))
	def := auth.Rate{Limit: 1, Window: time.Second}
	rateOf := func(t *testing.T, key string) auth.Rate {
		t.Helper()
		p, err := store.Authenticate(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		return auth.NewLimiter(db.Pool, def, auth.FailClosedForOwnRates).RateFor(p)
	}
	out, stderr, err := run(t, db, "create", "--org", "acme", "--rate", "600/min")
	if err != nil {
		t.Fatalf("keys create --rate: %v\n%s", err, stderr)
	}
	key := lastLine(out)
	if !strings.Contains(out, "rate:         600/min\n") || rateOf(t, key) != (auth.Rate{Limit: 600, Window: time.Minute}) {
		t.Fatalf("created key has rate %v; output:\n%s", rateOf(t, key), out)
	}
	id := keyIDLine.FindStringSubmatch(out)[1]
	t.Run("keys list shows it", func(t *testing.T) {
		list, _, err := run(t, db, "list")
		if err != nil || !strings.Contains(list, "RATE") || !strings.Contains(list, "600/min") {
			t.Fatalf("list: %v\n%s", err, list)
		}
	})
	changes := []struct {
		arg  string
		want auth.Rate
	}{
		{"10/s", auth.Rate{Limit: 10, Window: time.Second}},
		{"unlimited", auth.Unlimited},
		{"default", def},
	}
	for _, c := range changes {
		t.Run("keys rate "+c.arg+" changes it", func(t *testing.T) {
			if out, stderr, err := run(t, db, "rate", id, c.arg); err != nil {
				t.Fatalf("keys rate: %v\n%s%s", err, out, stderr)
			}
			if got := rateOf(t, key); got != c.want {
				t.Fatalf("rate %v; want %v", got, c.want)
			}
		})
	}
	t.Run("a malformed rate is refused and issues no key", func(t *testing.T) {
		for _, bad := range []string{"600", "0/min", "5/fortnight", "5/2day"} {
			if _, _, err := run(t, db, "create", "--org", "acme", "--rate", bad); err == nil {
				t.Fatalf("--rate %q accepted", bad)
			}
		}
		if _, _, err := run(t, db, "rate", id, "fast"); err == nil {
			t.Fatal("keys rate fast accepted")
		}
		if _, _, err := run(t, db, "rate", uuid.NewString(), "10/s"); err == nil {
			t.Fatal("keys rate of an unknown key succeeded")
		}
		keys, err := store.ListKeys(context.Background(), "acme")
		if err != nil || len(keys) != 1 {
			t.Fatalf("%d keys, %v; want the one created", len(keys), err)
		}
	})
}
