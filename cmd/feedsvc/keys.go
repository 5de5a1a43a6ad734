package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/internal/database"
)

const keysUsage = `Usage: feedsvc keys <command> [flags]

Commands:
  create --org NAME [--scopes a,b] [--expires DURATION] [--rate RATE]
                     issue a key; the key is printed alone on the last line
  list [--org NAME]  show keys (never their secrets)
  revoke KEY_ID      stop a key from working
  rate KEY_ID RATE   change a key's request rate (RATE "default" for the
                     service's FEEDSVC_RATE_LIMIT)

Scopes: %s (default: all)
Rates: REQUESTS/WINDOW such as 600/min, 10/s, 5000/h, 100/30s; or unlimited
(default: the service's FEEDSVC_RATE_LIMIT)
`

// runKeys implements `feedsvc keys create|list|revoke` (D3). It returns nil
// after printing help for -h, so asking for help is not a failure.
func runKeys(ctx context.Context, db *database.DB, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, keysUsage, auth.FormatScopes(auth.AllScopes()))
		return errors.New("keys: missing command")
	}
	store := auth.NewStore(db.Bun)
	switch cmd, rest := args[0], args[1:]; cmd {
	case "create":
		return keysCreate(ctx, store, rest, stdout, stderr)
	case "list":
		return keysList(ctx, store, rest, stdout, stderr)
	case "revoke":
		return keysRevoke(ctx, store, rest, stdout, stderr)
	case "rate":
		return keysRate(ctx, store, rest, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(stdout, keysUsage, auth.FormatScopes(auth.AllScopes()))
		return nil
	default:
		fmt.Fprintf(stderr, keysUsage, auth.FormatScopes(auth.AllScopes()))
		return fmt.Errorf("keys: unknown command %q", cmd)
	}
}

// parseFlags parses fs and reports whether the caller asked for help.
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	err = fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return true, nil
	}
	if err != nil {
		// flag has already printed the problem and the usage to stderr.
		return false, fmt.Errorf("keys %s: %w", fs.Name(), err)
	}
	return false, nil
}

func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: feedsvc keys %s\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

func keysCreate(ctx context.Context, store *auth.Store, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("create", "create --org NAME [--scopes a,b] [--expires DURATION] [--rate RATE]", stderr)
	org := fs.String("org", "", "organization the key belongs to; created if it does not exist (required)")
	scopesFlag := fs.String("scopes", "", "comma-separated scopes: "+auth.FormatScopes(auth.AllScopes())+" (default all)")
	expiresFlag := fs.String("expires", "", "lifetime such as 720h or 30d (default: never expires)")
	rateFlag := fs.String("rate", "", "request rate such as 600/min, 10/s or unlimited (default: the service's FEEDSVC_RATE_LIMIT)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("keys create: unexpected argument %q", fs.Arg(0))
	}
	if strings.TrimSpace(*org) == "" {
		fs.Usage()
		return errors.New("keys create: --org is required")
	}
	scopes := auth.AllScopes()
	// An explicitly empty --scopes is an error (ParseScopes says so) rather
	// than silently meaning "all".
	if flagSet(fs, "scopes") {
		var err error
		if scopes, err = auth.ParseScopes(*scopesFlag); err != nil {
			return fmt.Errorf("keys create: --scopes: %w", err)
		}
	}
	var expiresAt *time.Time
	if flagSet(fs, "expires") {
		d, err := parseLifetime(*expiresFlag)
		if err != nil {
			return fmt.Errorf("keys create: --expires: %w", err)
		}
		t := time.Now().Add(d).UTC()
		expiresAt = &t
	}

	var opts []auth.KeyOption
	if flagSet(fs, "rate") {
		rate, err := auth.ParseRate(*rateFlag)
		if err != nil {
			return fmt.Errorf("keys create: --rate: %w", err)
		}
		opts = append(opts, auth.WithRate(rate))
	}

	plaintext, key, err := store.CreateKey(ctx, *org, scopes, expiresAt, opts...)
	if err != nil {
		return fmt.Errorf("keys create: %w", err)
	}
	fmt.Fprintf(stdout, "key id:       %s\n", key.ID)
	fmt.Fprintf(stdout, "organization: %s (%s)\n", key.OrganizationName, key.OrganizationID)
	fmt.Fprintf(stdout, "scopes:       %s\n", auth.FormatScopes(key.Scopes))
	fmt.Fprintf(stdout, "expires:      %s\n", formatTime(key.ExpiresAt, "never"))
	fmt.Fprintf(stdout, "rate:         %s\n", formatRate(key.Rate))
	fmt.Fprintln(stdout, "The key below is shown only this once; store it now.")
	// Last line, alone: scripts take it with `tail -n 1`.
	fmt.Fprintln(stdout, plaintext)
	return nil
}

func keysList(ctx context.Context, store *auth.Store, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("list", "list [--org NAME]", stderr)
	org := fs.String("org", "", "only keys of this organization")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("keys list: unexpected argument %q", fs.Arg(0))
	}
	keys, err := store.ListKeys(ctx, *org)
	if err != nil {
		return fmt.Errorf("keys list: %w", err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tORGANIZATION\tPREFIX\tSCOPES\tRATE\tCREATED\tEXPIRES\tREVOKED\tLAST USED")
	for _, k := range keys {
		created := k.CreatedAt
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			k.ID, k.OrganizationName, "fsk_"+k.Prefix+"_…", auth.FormatScopes(k.Scopes), formatRate(k.Rate),
			formatTime(&created, "-"), formatTime(k.ExpiresAt, "never"),
			formatTime(k.RevokedAt, "-"), formatTime(k.LastUsedAt, "never"))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("keys list: write output: %w", err)
	}
	return nil
}

func keysRevoke(ctx context.Context, store *auth.Store, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("revoke", "revoke KEY_ID", stderr)
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("keys revoke: expected exactly one KEY_ID")
	}
	id, err := uuid.Parse(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("keys revoke: KEY_ID %q is not a key id (see `feedsvc keys list`): %w", fs.Arg(0), err)
	}
	if err := store.RevokeKey(ctx, id); err != nil {
		return fmt.Errorf("keys revoke: %w", err)
	}
	// Servers cache successful authentications briefly; say so, so the
	// operator does not conclude the revoke failed.
	fmt.Fprintf(stdout, "revoked key %s (running servers stop accepting it within %s)\n", id, auth.DefaultCacheTTL)
	return nil
}

func keysRate(ctx context.Context, store *auth.Store, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("rate", "rate KEY_ID RATE|default", stderr)
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return errors.New("keys rate: expected KEY_ID and RATE")
	}
	id, err := uuid.Parse(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("keys rate: KEY_ID %q is not a key id (see `feedsvc keys list`): %w", fs.Arg(0), err)
	}
	var rate *auth.Rate
	if !strings.EqualFold(strings.TrimSpace(fs.Arg(1)), "default") {
		r, err := auth.ParseRate(fs.Arg(1))
		if err != nil {
			return fmt.Errorf("keys rate: %w", err)
		}
		rate = &r
	}
	if err := store.SetRate(ctx, id, rate); err != nil {
		return fmt.Errorf("keys rate: %w", err)
	}
	fmt.Fprintf(stdout, "key %s now has rate %s (running servers apply it within %s)\n", id, formatRate(rate), auth.DefaultCacheTTL)
	return nil
}

// formatRate names a key's rate; nil is the service default.
func formatRate(r *auth.Rate) string {
	if r == nil {
		return "default"
	}
	return r.String()
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

var daysPrefix = regexp.MustCompile(`^(\d+)d(.*)$`)

// parseLifetime reads a Go duration, also allowing a leading whole number of
// days with a "d" suffix ("30d", "1d12h"), since time.ParseDuration stops at
// hours and key lifetimes are usually counted in days.
func parseLifetime(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	rest := s
	if m := daysPrefix.FindStringSubmatch(s); m != nil {
		days, err := strconv.Atoi(m[1])
		if err != nil || days > 100*365 {
			return 0, fmt.Errorf("invalid duration %q: too many days", s)
		}
		d = time.Duration(days) * 24 * time.Hour
		rest = m[2]
	}
	if rest != "" {
		extra, err := time.ParseDuration(rest)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q (use e.g. 720h or 30d): %w", s, err)
		}
		d += extra
	}
	if d <= 0 {
		return 0, fmt.Errorf("invalid duration %q: must be positive", s)
	}
	return d, nil
}

func formatTime(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.UTC().Format(time.RFC3339)
}
