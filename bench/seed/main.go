// Command seed fills a database for the benchmarks in bench/README.md.
//
//	seed api      create/migrate DATABASE_URL, issue an API key, create news
//	              feeds and one feed with many items (appended through the
//	              event store), then run the projections until they catch up
//	              and report the catch-up (projection) rate.
//	seed rebuild  load N NewsItemAdded events into the event store and time
//	              projections.Rebuild for one projector over them.
//	seed events   create/migrate a database, issue an API key, create an event
//	              feed and fill it with events through the commands, then
//	              run the projections until they catch up.
//	seed drop     drop the database.
//
// Run `go run ./bench/seed <command> -h` for the flags. Everything talks to
// the database in DATABASE_URL (or -db) only.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel"
	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/service/schema"
)

const usage = `usage: seed api|rebuild|events|drop [flags]   (seed <command> -h for flags)
`

// itemsBase is when the first generated item was added; item i is added
// one minute after item i-1, so a since filter selects a predictable share.
var itemsBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch os.Args[1] {
	case "api":
		err = seedAPI(ctx, os.Args[2:], os.Stdout)
	case "rebuild":
		err = benchRebuild(ctx, os.Args[2:], os.Stdout)
	case "events":
		err = seedEvents(ctx, os.Args[2:], os.Stdout)
	case "drop":
		err = drop(ctx, os.Args[2:])
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

// loadAverage is the 1-, 5- and 15-minute load average, for the record.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

func defaultDB() string {
	if v := os.Getenv("DATABASE_URL"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5432/feedsvc_bench?sslmode=disable"
}

// rebuildDB is the rebuild benchmark's own database on the same server, so
// that -fresh and -drop never touch the API benchmark's (or any other).
func rebuildDB() string {
	dsn, err := database.WithDatabase(defaultDB(), "feedsvc_bench_rebuild")
	if err != nil {
		return "" // an unparsable DATABASE_URL: fail at open, never fall back
	}
	return dsn
}

func logger(verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// open creates (optionally after dropping) and migrates the database.
func open(ctx context.Context, dsn string, fresh bool) (*database.DB, error) {
	if fresh {
		if err := database.DropDatabase(ctx, dsn); err != nil {
			return nil, err
		}
	}
	return schema.Open(ctx, dsn)
}

// openWithKey opens (optionally after dropping) and migrates the database,
// builds the command side over it, and issues a key with every scope for
// the organization named org.
func openWithKey(ctx context.Context, dsn string, fresh bool, org string) (*database.DB, *eventstore.Postgres, *commands.Handler, string, uuid.UUID, error) {
	db, err := open(ctx, dsn, fresh)
	if err != nil {
		return nil, nil, nil, "", uuid.Nil, err
	}
	store := eventstore.NewPostgres(db.Pool)
	// The load generator is one client at thousands of requests a second:
	// far past the default rate, so its key has its own, never reached but
	// still counted, and the figures include the limiter's statement.
	key, k, err := auth.NewStore(db.Bun).CreateKey(ctx, org, auth.AllScopes(), nil,
		auth.WithRate(auth.Rate{Limit: 1_000_000_000, Window: time.Hour}))
	if err != nil {
		db.Close()
		return nil, nil, nil, "", uuid.Nil, err
	}
	return db, store, commands.New(store, readmodel.NewLookups(db.Bun)), key, k.OrganizationID, nil
}

func drop(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("seed drop", flag.ContinueOnError)
	dsn := fs.String("db", defaultDB(), "database URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return database.DropDatabase(ctx, *dsn)
}

// ---- seed api ------------------------------------------------------------

func seedAPI(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("seed api", flag.ContinueOnError)
	dsn := fs.String("db", defaultDB(), "database URL (created if missing)")
	fresh := fs.Bool("fresh", false, "drop the database first")
	org := fs.String("org", "bench", "organization of the key and the feeds")
	feeds := fs.Int("feeds", 20, "news feeds to create besides the big one")
	items := fs.Int("items", 100_000, "items in the big feed")
	writers := fs.Int("writers", 16, "concurrent appenders")
	load := fs.String("load", "store", "how items are written: store (AppendToStream, one stream per item, NoStream) or copy (COPY into events)")
	catchUp := fs.Bool("catchup", true, "run the projections until they reach the head of the log and report the rate")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after this long")
	verbose := fs.Bool("v", false, "log projection progress")
	spread := fs.Bool("spread", false, "spread the items over every feed created (round robin) instead of the big feed alone")
	topics := fs.Bool("topics", false, "vary the items' text for full-text search (issue 37): each title names one of 20 topics, every 997th description says volcano, and items declare English")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *items < 0 || *items > 10_000_000 || *feeds < 0 || *feeds > 10_000 || *writers < 1 || *writers > 256 {
		return errors.New("-items must be in [0, 1e7], -feeds in [0, 1e4], -writers in [1, 256]")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	db, store, cmds, key, orgID, err := openWithKey(ctx, *dsn, *fresh, *org)
	if err != nil {
		return err
	}
	defer db.Close()

	t0 := time.Now()
	var itemFeeds []uuid.UUID
	for i := range *feeds {
		st, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{
			Kind: domain.FeedNews, Org: orgID, Name: fmt.Sprintf("Bench feed %03d", i), Description: "A feed created by bench/seed for GET /feeds/news.",
		})
		if err != nil {
			return err
		}
		if *spread {
			itemFeeds = append(itemFeeds, st.ID)
		}
	}
	bigFeedState, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{
		Kind: domain.FeedNews, Org: orgID, Name: "Bench big feed", Description: fmt.Sprintf("%d items", *items),
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "created %d feeds in %s\n", *feeds+1, time.Since(t0).Round(time.Millisecond))

	gen := newItemGen(orgID, append(itemFeeds, bigFeedState.ID))
	gen.topics = *topics
	t0 = time.Now()
	switch *load {
	case "store":
		err = appendItems(ctx, store, gen, *items, *writers)
	case "copy":
		err = copyItems(ctx, db, gen, 0, *items)
	default:
		return fmt.Errorf("-load %q: want store or copy", *load)
	}
	if err != nil {
		return err
	}
	el := time.Since(t0)
	fmt.Fprintf(os.Stderr, "appended %d items (%s, %d writers) in %s: %.0f events/s\n",
		*items, *load, *writers, el.Round(time.Millisecond), float64(*items)/el.Seconds())

	if *catchUp {
		if err := catchUpAll(ctx, db, store, logger(*verbose), os.Stderr); err != nil {
			return err
		}
		// What autovacuum would soon do for an insert-only table: fresh
		// statistics and a current visibility map (index-only scans).
		if _, err := db.Pool.Exec(ctx, `VACUUM (ANALYZE)`); err != nil {
			return err
		}
	}
	// Shell-friendly, last: eval "$(go run ./bench/seed api ...)".
	fmt.Fprintf(stdout, "KEY=%s\nORG=%s\nBIG_FEED=%s\nITEMS_BASE=%s\nSINCE_HALF=%s\n",
		key, orgID, bigFeedState.ID, itemsBase.Format(time.RFC3339),
		itemsBase.Add(time.Duration(*items/2)*time.Minute).Format(time.RFC3339))
	return nil
}

// itemGen builds NewsItemAdded events shaped like real ones.
type itemGen struct {
	org, source, attachment uuid.UUID
	feeds                   []uuid.UUID
	meta                    []byte
	// topics varies the text (seed api -topics).
	topics bool
}

// searchTopics are the topics -topics items are about, one in 20 each;
// "markets" titles hold the phrase "interest rates".
var searchTopics = []string{
	"climate", "election", "football", "markets", "health", "science", "music", "film", "travel", "food",
	"housing", "transport", "energy", "education", "technology", "crime", "weather", "fashion", "books", "space",
}

func newItemGen(org uuid.UUID, feeds []uuid.UUID) *itemGen {
	meta, _ := json.Marshal(map[string]any{"schemaVersion": domain.SchemaVersion, "organizationId": org})
	return &itemGen{org: org, source: uuid.New(), attachment: uuid.New(), feeds: feeds, meta: meta}
}

// event i goes to feed i % len(feeds); its stream is the item's own.
func (g *itemGen) event(i int) (string, eventstore.EventData, error) {
	feed := g.feeds[i%len(g.feeds)]
	at := itemsBase.Add(time.Duration(i) * time.Minute)
	pub := at.Add(-time.Hour)
	// Version 7 ids, as commands mint them (time-ordered, so index
	// inserts land near each other as they do in production).
	page := uuid.Must(uuid.NewV7())
	e := domain.NewsItemAdded{
		ItemID: uuid.Must(uuid.NewV7()), FeedID: feed, OrganizationID: g.org, AttachmentID: g.attachment,
		SourceID: g.source, SourceType: domain.SourceType("site"), NewsPageID: page, VersionID: uuid.Must(uuid.NewV7()),
		Content: domain.ArticleContent{
			URL:         fmt.Sprintf("https://news.example.com/%d/%02d/story-%d-a-reasonably-long-slug-for-a-news-article", at.Year(), at.Month(), i),
			Title:       fmt.Sprintf("Story %d: a reasonably long headline about something that happened", i),
			Description: "A paragraph-long summary of the article, as feeds and pages usually provide one, long enough to look like the real thing in a response body.",
			ImageURL:    fmt.Sprintf("https://cdn.example.com/images/%d.jpg", i),
			PublishedAt: &pub,
		},
		At: at,
	}
	if g.topics {
		topic := searchTopics[i%len(searchTopics)]
		e.Content.Title = fmt.Sprintf("Story %d: %s news, a reasonably long headline about something that happened", i, topic)
		if topic == "markets" {
			e.Content.Title = fmt.Sprintf("Story %d: markets react as interest rates rise again, a reasonably long headline", i)
		}
		if i%997 == 0 {
			e.Content.Description = "A volcano erupted: " + e.Content.Description
		}
		e.Content.Language = "en"
	}
	data, err := domain.EncodeEvent(e)
	if err != nil {
		return "", eventstore.EventData{}, err
	}
	return domain.NewsItemStream(feed, page), eventstore.EventData{
		ID: uuid.Must(uuid.NewV7()), Type: e.EventType(), Data: data, Metadata: g.meta,
	}, nil
}

// appendItems is the command path: one AppendToStream per item with
// NoStream, from several writers at once.
func appendItems(ctx context.Context, store *eventstore.Postgres, gen *itemGen, n, writers int) error {
	return inParallel(ctx, n, writers, func(i int) error {
		stream, ev, err := gen.event(i)
		if err != nil {
			return err
		}
		_, err = store.AppendToStream(ctx, stream, eventstore.NoStream(), ev)
		return err
	})
}

// inParallel runs do(0) … do(n-1) from several writers; a writer stops at
// its first error, and all errors are returned.
func inParallel(ctx context.Context, n, writers int, do func(i int) error) error {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range writers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := do(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// copyItems writes events [from, to) with COPY, 10,000 per transaction. It
// is only a fast way to fill the log; appends are measured elsewhere.
func copyItems(ctx context.Context, db *database.DB, gen *itemGen, from, to int) error {
	const chunk = 10_000
	for lo := from; lo < to; lo += chunk {
		hi := min(lo+chunk, to)
		rows := make([][]any, 0, hi-lo)
		for i := lo; i < hi; i++ {
			stream, ev, err := gen.event(i)
			if err != nil {
				return err
			}
			rows = append(rows, []any{stream, int64(0), ev.ID, ev.Type, json.RawMessage(ev.Data), json.RawMessage(ev.Metadata)})
		}
		if _, err := db.Pool.CopyFrom(ctx, pgx.Identifier{"events"},
			[]string{"stream_id", "stream_revision", "event_id", "event_type", "data", "metadata"},
			pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("copy events %d-%d: %w", lo, hi, err)
		}
	}
	return nil
}

func head(ctx context.Context, db *database.DB) (eventstore.Position, int64, error) {
	var commit, prepare, n int64
	err := db.Pool.QueryRow(ctx, `SELECT coalesce(max(transaction_id::text::bigint), 0), coalesce(max(global_position), 0), count(*) FROM events`).
		Scan(&commit, &prepare, &n)
	if err != nil {
		return eventstore.Position{}, 0, fmt.Errorf("read head of log: %w", err)
	}
	// The last event of the log is the one with the highest xid; among
	// those, the highest position.
	err = db.Pool.QueryRow(ctx, `SELECT global_position FROM events WHERE transaction_id::text::bigint = $1 ORDER BY global_position DESC LIMIT 1`, commit).
		Scan(&prepare)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return eventstore.Position{}, 0, fmt.Errorf("read head of log: %w", err)
	}
	return eventstore.Position{Commit: uint64(commit), Prepare: uint64(prepare)}, n, nil
}

// catchUpAll runs every projector as `feedsvc serve` does (same runner
// configuration) until each has reached the head of the log.
func catchUpAll(ctx context.Context, db *database.DB, store *eventstore.Postgres, log *slog.Logger, w io.Writer) error {
	pos, n, err := head(ctx, db)
	if err != nil {
		return err
	}
	runner, err := projections.NewRunner(store, db.Bun, log, projections.RunnerConfig{}, projectors.All()...)
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	times := make([]time.Duration, len(runner.Projectors()))
	behind := make([]int64, len(runner.Projectors()))
	for i, p := range runner.Projectors() {
		// Events after the checkpoint the projector starts from.
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE (transaction_id::text::bigint, global_position) >
			coalesce((SELECT (commit_position, prepare_position) FROM projection_checkpoints WHERE name = $1), (0::bigint, 0::bigint))`, p.Name()).
			Scan(&behind[i]); err != nil {
			return err
		}
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- runner.Run(runCtx) }()
	<-runner.Running()
	for i, p := range runner.Projectors() {
		wg.Go(func() {
			if runner.Progress(p.Name()).WaitFor(ctx, pos) == nil {
				times[i] = time.Since(start)
			}
		})
	}
	wg.Wait()
	total := time.Since(start)
	stop()
	<-done
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fmt.Fprintf(w, "catch-up: %d events in the log; all %d projectors (run together, as serve does) at the head after %s\n",
		n, len(times), total.Round(time.Millisecond))
	for i, p := range runner.Projectors() {
		fmt.Fprintf(w, "  %-11s %8d events behind, caught up in %8s = %7.0f events/s\n",
			p.Name(), behind[i], times[i].Round(time.Millisecond), float64(behind[i])/times[i].Seconds())
	}
	return nil
}

// ---- seed rebuild ----------------------------------------------------------

func benchRebuild(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("seed rebuild", flag.ContinueOnError)
	dsn := fs.String("db", rebuildDB(), "database URL (created if missing)")
	fresh := fs.Bool("fresh", false, "drop the database first")
	drop := fs.Bool("drop", false, "drop the database afterwards")
	events := fs.Int("events", 1_000_000, "NewsItemAdded events in the log (missing ones are added)")
	feeds := fs.Int("feeds", 100, "feeds the items are spread over")
	name := fs.String("projector", "newsitems", "projector to rebuild, or all (every projector of projectors.All, together: one read of the log)")
	runs := fs.Int("runs", 1, "rebuilds to time, one after the other")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the rebuilds to this file")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after this long")
	verbose := fs.Bool("v", false, "log rebuild progress")
	separately := fs.Bool("separately", false, "with -projector all: rebuild the projectors one after the other, each reading the log itself, instead of together")
	peer := fs.Bool("copy-peer", false, "after each run, load the rows it wrote again with COPY into tables of the same definition, and print the rebuild's rate per row written beside COPY's")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *events < 1 || *events > 20_000_000 || *feeds < 1 || *runs < 1 || *runs > 10 {
		return errors.New("-events must be in [1, 2e7], -feeds >= 1, -runs in [1, 10]")
	}
	ps := projectors.All()
	if *name != "all" {
		p, ok := projectors.ByName(*name)
		if !ok {
			return fmt.Errorf("no projector %q", *name)
		}
		ps = []projections.Projector{p}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	db, err := open(ctx, *dsn, *fresh)
	if err != nil {
		return err
	}
	defer func() {
		db.Close()
		if *drop {
			if err := database.DropDatabase(context.Background(), *dsn); err != nil {
				fmt.Fprintln(os.Stderr, "seed:", err)
			}
		}
	}()

	var have int64
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE event_type = 'NewsItemAdded'`).Scan(&have); err != nil {
		return err
	}
	if int(have) < *events {
		ids := make([]uuid.UUID, *feeds)
		for i := range ids {
			ids[i] = uuid.New()
		}
		gen := newItemGen(uuid.New(), ids)
		t0 := time.Now()
		if err := copyItems(ctx, db, gen, int(have), *events); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "loaded %d events with COPY in %s\n", *events-int(have), time.Since(t0).Round(time.Millisecond))
		// A log that has been read before has its hint bits set and its
		// visibility map current; start from that state, not from a table
		// whose first reader pays for writing them.
		t0 = time.Now()
		if _, err := db.Pool.Exec(ctx, `VACUUM (ANALYZE) events`); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "vacuum analyze events: %s\n", time.Since(t0).Round(time.Millisecond))
	}
	_, n, err := head(ctx, db)
	if err != nil {
		return err
	}

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	store := eventstore.NewPostgres(db.Pool)
	for run := 1; run <= *runs; run++ {
		fmt.Fprintf(stdout, "run %d, load average %s\n", run, loadAverage())
		t0 := time.Now()
		var written int64
		var wrote []string
		// Together (the default): one rebuild of every projector, reading
		// the log once, as `feedsvc projections rebuild all` does;
		// -separately: one rebuild per projector, one after the other.
		groups := [][]projections.Projector{ps}
		if *separately {
			groups = nil
			for _, p := range ps {
				groups = append(groups, []projections.Projector{p})
			}
		}
		for _, group := range groups {
			t1 := time.Now()
			if err := projections.RebuildAll(ctx, *dsn, db, store, group, logger(*verbose)); err != nil {
				return err
			}
			el := time.Since(t1)
			for _, p := range group {
				var rows int64
				if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{p.Tables()[0]}.Sanitize()).Scan(&rows); err != nil {
					return err
				}
				if len(group) == 1 {
					fmt.Fprintf(stdout, "  rebuild %-10s %d events in %8s = %7.0f events/s (%s rows: %d)\n",
						p.Name(), n, el.Round(time.Millisecond), float64(n)/el.Seconds(), p.Tables()[0], rows)
				}
				for _, t := range p.Tables() {
					var rows int64
					if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{t}.Sanitize()).Scan(&rows); err != nil {
						return err
					}
					if rows > 0 {
						written += rows
						wrote = append(wrote, t)
					}
				}
			}
			if len(group) > 1 {
				fmt.Fprintf(stdout, "  rebuild of %d projectors together: %d events in %s = %.0f events/s, %d rows written\n",
					len(group), n, el.Round(time.Millisecond), float64(n)/el.Seconds(), written)
			}
		}
		el := time.Since(t0)
		if len(ps) > 1 {
			fmt.Fprintf(stdout, "  all %d projectors: %s\n", len(ps), el.Round(time.Millisecond))
		}
		if *peer {
			fmt.Fprintf(stdout, "  copy peer, load average %s\n", loadAverage())
			rows, took, err := copyPeer(ctx, db, wrote)
			if err != nil {
				return fmt.Errorf("copy peer: %w", err)
			}
			fmt.Fprintf(stdout, "  COPY of the %d rows written (%v): %s = %.0f rows/s; rebuild: %.0f rows written/s; ratio %.2f\n",
				rows, wrote, took.Round(time.Millisecond), float64(rows)/took.Seconds(), float64(written)/el.Seconds(), took.Seconds()/el.Seconds())
		}
	}
	return nil
}
