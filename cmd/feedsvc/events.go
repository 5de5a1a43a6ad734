package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/webhook"
)

const eventsUsage = `Usage: feedsvc events <command> [flags]

Commands:
  export [--type T[,T…]] [--stream-prefix P] [--org ID|NAME] [--since TIME] [--until TIME]
         [--from-position COMMIT/PREPARE] [--out FILE]
                 write the event log as NDJSON, one event a line, in log order,
                 between a header and a trailer (count, checksum, and a seal
                 made with this installation's seal key); stdout unless --out;
                 progress goes to the log (stderr)
  import [--seal-key-file FILE] [--unverified] [--partial] [--allow-unknown-types]
         [--redeliver-from COMMIT/PREPARE] [FILE]
                 load an export (a file, or stdin) into an empty event store;
                 projectors then build the read models from it. The file must be
                 whole (header, trailer, count and checksum), sealed by the key
                 in --seal-key-file (the exporting installation's; the database's
                 own key checks an export of its own), and unfiltered. A seal that
                 key did not make is refused; --unverified imports a file whose
                 seal cannot be checked (no key given) or that has none, with a
                 warning. --partial takes a filtered export as an analysis copy,
                 which serve refuses to run on. Webhooks count the imported events
                 as delivered; --redeliver-from delivers those from that position
                 of the file on again (0/0: all)
  seal-key [--rotate] [--out FILE]
                 print this installation's seal key (made on first use), alone
                 on the last line of stdout, or write it to FILE (mode 0600):
                 keep it with the installation's secrets, apart from the exports.
                 --rotate replaces it: later exports are sealed with the new key,
                 earlier ones are checked only with the old one

TIME is RFC 3339 (2026-11-22T10:00:00Z) or a date (2026-11-22, midnight UTC);
--since is inclusive, --until exclusive. --type may be repeated.
`

// progressInterval is how often a long export or import logs its progress.
const progressInterval = 2 * time.Second

// runEvents implements `feedsvc events export|import`.
func runEvents(ctx context.Context, db *database.DB, args []string, stdin io.Reader, stdout, stderr io.Writer, logger *slog.Logger) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprint(stdout, eventsUsage)
		if len(args) == 0 {
			return errors.New("events: missing command")
		}
		return nil
	}
	store := eventstore.NewPostgres(db.Pool)
	switch args[0] {
	case "export":
		return eventsExport(ctx, db, store, args[1:], stdout, stderr, logger)
	case "import":
		return eventsImport(ctx, store, args[1:], stdin, stderr, logger)
	case "seal-key":
		return eventsSealKey(ctx, store, args[1:], stdout, stderr, logger)
	}
	fmt.Fprint(stderr, eventsUsage)
	return fmt.Errorf("events: unknown command %q", args[0])
}

// listFlag collects a flag given several times or as a comma list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for part := range strings.SplitSeq(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*l = append(*l, part)
		}
	}
	return nil
}

func eventsExport(ctx context.Context, db *database.DB, store *eventstore.Postgres, args []string, stdout, stderr io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("events export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var types listFlag
	fs.Var(&types, "type", "keep events of this stored type (repeatable, or a comma list)")
	prefix := fs.String("stream-prefix", "", "keep events of streams whose id starts with this (e.g. newsitem-)")
	org := fs.String("org", "", "keep events recorded for this organization (id or name)")
	since := fs.String("since", "", "keep events recorded at or after this time")
	until := fs.String("until", "", "keep events recorded before this time")
	from := fs.String("from-position", "", "start strictly after this position (COMMIT/PREPARE, e.g. the last exported line's)")
	out := fs.String("out", "", "write to this file instead of stdout (written whole or not at all)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("events export: unexpected argument %q", fs.Arg(0))
	}
	filter := eventstore.ExportFilter{Types: types, StreamPrefix: *prefix}
	var err error
	if filter.Since, err = parseTimeFlag("since", *since); err != nil {
		return err
	}
	if filter.Until, err = parseTimeFlag("until", *until); err != nil {
		return err
	}
	if !filter.Since.IsZero() && !filter.Until.IsZero() && !filter.Since.Before(filter.Until) {
		return errors.New("events export: --since must be before --until")
	}
	if *from != "" {
		if filter.After, err = eventstore.ParsePosition(*from); err != nil {
			return fmt.Errorf("events export: --from-position: %w", err)
		}
	}
	if *org != "" {
		if filter.Organization, err = organizationID(ctx, db, *org); err != nil {
			return err
		}
	}

	w, commit, err := exportTarget(*out, stdout)
	if err != nil {
		return err
	}
	started := time.Now()
	logger.Info("exporting events", "out", cmp.Or(*out, "stdout"))
	done, err := store.Export(ctx, w, filter, progressLogger(logger, "exporting events", started))
	if err = commit(err); err != nil {
		return fmt.Errorf("events export: %w", err)
	}
	key, err := store.SealKey(ctx)
	if err != nil {
		return fmt.Errorf("events export: %w", err)
	}
	logger.Info("events exported", "events", done.Events, "last_position", done.Last.String(), "sealed_with", key.ID(),
		"elapsed", time.Since(started).Round(time.Millisecond), "events_per_sec", rate(done.Events, started))
	return nil
}

// exportTarget opens where an export goes. A file is written under a
// temporary name and renamed by commit only when the export succeeded, so
// a failed export never leaves a file that looks whole.
func exportTarget(path string, stdout io.Writer) (io.Writer, func(error) error, error) {
	if path == "" || path == "-" {
		return stdout, func(err error) error { return err }, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.partial")
	if err != nil {
		return nil, nil, fmt.Errorf("events export: %w", err)
	}
	return f, func(err error) error {
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), path)
		}
		if err != nil {
			_ = os.Remove(f.Name())
		}
		return err
	}, nil
}

func eventsImport(ctx context.Context, store *eventstore.Postgres, args []string, stdin io.Reader, stderr io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("events import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	partial := fs.Bool("partial", false, "accept an export made with filters, as an analysis copy that feedsvc serve refuses to run on")
	unknown := fs.Bool("allow-unknown-types", false, "keep events of types this feedsvc does not know (no projector reads them)")
	redeliver := fs.String("redeliver-from", "", "deliver webhooks again for the file's events from this position on (COMMIT/PREPARE as the file's lines give it; 0/0: all)")
	keyFile := fs.String("seal-key-file", "", "check the file's seal with the key in this file (the exporting installation's `feedsvc events seal-key`)")
	unverified := fs.Bool("unverified", false, "import a file whose seal cannot be checked (no key for it) or that has none; nothing then shows where it came from")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	var key eventstore.SealKey
	if *keyFile != "" {
		raw, err := os.ReadFile(*keyFile)
		if err != nil {
			return fmt.Errorf("events import: --seal-key-file: %w", err)
		}
		if key, err = eventstore.ParseSealKey(string(raw)); err != nil {
			return fmt.Errorf("events import: --seal-key-file %s: %w", *keyFile, err)
		}
	}
	if fs.NArg() > 1 {
		return fmt.Errorf("events import: unexpected argument %q", fs.Arg(1))
	}
	known := map[string]bool{}
	for _, t := range domain.EventTypeNames() {
		known[t] = true
	}
	opts := eventstore.ImportOptions{
		Partial: *partial, AllowUnknownTypes: *unknown, KnownType: func(t string) bool { return known[t] },
		SealKey: key, Unverified: *unverified,
		// The moved installation delivered the imported events' webhooks
		// already: its dispatcher rebuilds its subscriptions from the
		// whole log but queues nothing up to here.
		BeforeCommit: func(ctx context.Context, tx pgx.Tx, done eventstore.Imported) error {
			through := done.Last
			if *redeliver != "" {
				through = done.BeforeMark
			}
			return webhook.RecordDeliveredThrough(ctx, tx, through)
		},
	}
	if *redeliver != "" {
		from, err := eventstore.ParsePosition(*redeliver)
		if err != nil {
			return fmt.Errorf("events import: --redeliver-from: %w", err)
		}
		opts.Mark = &from
	}
	in, name := stdin, "stdin"
	if path := fs.Arg(0); path != "" && path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("events import: %w", err)
		}
		defer f.Close()
		in, name = f, path
	}
	started := time.Now()
	logger.Info("importing events", "from", name)
	opts.Progress = progressLogger(logger, "importing events", started)
	done, err := store.Import(ctx, in, opts)
	if err != nil {
		return fmt.Errorf("events import from %s: %w (nothing was imported)", name, err)
	}
	switch {
	case !done.Seal.Sealed:
		logger.Warn("imported a file without a seal (--unverified): nothing shows it came from your installation or was not edited; its checksum shows only damage")
	case !done.Seal.Verified:
		logger.Warn("imported without checking the file's seal (--unverified): nothing shows it came from your installation or was not edited; its checksum shows only damage",
			"sealed_with", done.Seal.Key)
	}
	for t, n := range done.UnknownTypes {
		logger.Warn("kept events of a type this feedsvc does not know (--allow-unknown-types); no projector reads them", "type", t, "events", n)
	}
	if done.Header.Partial {
		logger.Warn("imported a partial export as an analysis copy: feedsvc serve refuses to run on this database", "filters", done.Header.Filters)
	}
	through := done.Last
	if opts.Mark != nil {
		through = done.BeforeMark
	}
	msg := "events imported; projectors build the read models when feedsvc serve runs, and webhooks are delivered for events after the imported ones"
	if opts.Mark != nil {
		msg += " and for those from --redeliver-from on"
	}
	logger.Info(msg, "events", done.Events, "from_store", done.Header.Store.String(), "seal_checked", done.Seal.Verified, "webhooks_delivered_through", through.String(),
		"elapsed", time.Since(started).Round(time.Millisecond), "events_per_sec", rate(done.Events, started))
	return nil
}

// eventsSealKey prints (or writes) the installation's seal key, making it
// on first use, or replaces it with --rotate.
func eventsSealKey(ctx context.Context, store *eventstore.Postgres, args []string, stdout, stderr io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("events seal-key", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rotate := fs.Bool("rotate", false, "replace the key with a new one; exports made before are then checked only with the old key")
	out := fs.String("out", "", "write the key to this file (mode 0600, written whole or not at all) instead of stdout")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("events seal-key: unexpected argument %q", fs.Arg(0))
	}
	var key eventstore.SealKey
	var err error
	if *rotate {
		var old eventstore.SealKey
		if old, key, err = store.RotateSealKey(ctx); err != nil {
			return fmt.Errorf("events seal-key: %w", err)
		}
		if old.Valid() {
			logger.Warn("the seal key was replaced: exports made before are checked only with the old key, which is no longer kept here", "old_key", old.ID(), "key", key.ID())
		}
	} else if key, err = store.SealKey(ctx); err != nil {
		return fmt.Errorf("events seal-key: %w", err)
	}
	if *out == "" || *out == "-" {
		fmt.Fprintf(stdout, "seal key %s (keep it secret, apart from the exports):\n%s\n", key.ID(), key.Hex())
		return nil
	}
	w, commit, err := exportTarget(*out, stdout)
	if err != nil {
		return err
	}
	if f, ok := w.(*os.File); ok {
		if err := f.Chmod(0o600); err != nil {
			return commit(fmt.Errorf("events seal-key: %w", err))
		}
	}
	_, err = fmt.Fprintln(w, key.Hex())
	if err = commit(err); err != nil {
		return fmt.Errorf("events seal-key: %w", err)
	}
	logger.Info("seal key written", "key", key.ID(), "out", *out)
	return nil
}

// progressLogger logs a long export's or import's progress every
// progressInterval.
func progressLogger(logger *slog.Logger, msg string, started time.Time) eventstore.ProgressFunc {
	last := started
	return func(p eventstore.ExportProgress) {
		if time.Since(last) < progressInterval {
			return
		}
		last = time.Now()
		logger.Info(msg, "events", p.Events, "position", p.Last.String(), "events_per_sec", rate(p.Events, started))
	}
}

func rate(n int64, since time.Time) int64 {
	el := time.Since(since).Seconds()
	if el <= 0 {
		return 0
	}
	return int64(float64(n) / el)
}

func parseTimeFlag(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("events export: --%s: want RFC 3339 (2026-11-22T10:00:00Z) or a date (2026-11-22)", name)
}

// organizationID reads --org: an organization's id, or its name.
func organizationID(ctx context.Context, db *database.DB, v string) (uuid.UUID, error) {
	if id, err := uuid.Parse(v); err == nil {
		return id, nil
	}
	var id uuid.UUID
	err := db.Pool.QueryRow(ctx, "SELECT id FROM organizations WHERE name = $1", v).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, errors.New("events export: --org: no organization has that name (give its id to export one this installation does not know)")
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("events export: --org: %w", err)
	}
	return id, nil
}
