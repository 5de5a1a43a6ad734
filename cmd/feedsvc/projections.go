package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/service/projectors"
)

const projectionsUsage = `usage:
  feedsvc projections list           every projector: the version of its read model (and
                                     of the code, when they differ), its tables, its
                                     checkpoint, and its running or last rebuild
  feedsvc projections rebuild NAME [NAME...]|all
                                     rebuild the named read models (or every one) from
                                     position 0 while the running service keeps serving
                                     the old ones, reading the log once for all of them
                                     (feedsvc serve does so by itself for read models
                                     an older version of their projector built)
`

func runProjections(ctx context.Context, cfg config.Config, db *database.DB, args []string, stdout io.Writer, logger *slog.Logger) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, projectionsUsage)
		return nil
	}
	switch args[0] {
	case "list":
		return listProjections(ctx, db, stdout)
	case "rebuild":
		ps, err := rebuildArgs(args[1:])
		if err != nil {
			return err
		}
		store := eventstore.NewPostgres(db.Pool)
		return projections.RebuildAll(ctx, cfg.DatabaseURL, db, store, ps, logger)
	}
	return fmt.Errorf("unknown projections command %q\n%s", args[0], projectionsUsage)
}

// rebuildArgs are the projectors a rebuild names: one or more, each once,
// or all of them.
func rebuildArgs(names []string) ([]projections.Projector, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("projections rebuild takes projector names, or all\n%s", projectionsUsage)
	}
	if len(names) == 1 && names[0] == "all" {
		return projectors.All(), nil
	}
	var ps []projections.Projector
	seen := map[string]bool{}
	for _, name := range names {
		p, ok := projectors.ByName(name)
		if !ok {
			return nil, fmt.Errorf("no projector named %q (see feedsvc projections list)", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("projector %q named twice", name)
		}
		seen[name] = true
		ps = append(ps, p)
	}
	return ps, nil
}

func listProjections(ctx context.Context, db *database.DB, stdout io.Writer) error {
	var rows []struct {
		Name    string `bun:"name"`
		Commit  int64  `bun:"commit_position"`
		Prepare int64  `bun:"prepare_position"`
		Version int    `bun:"version"`
		Updated string `bun:"updated"`
	}
	err := db.Bun.NewRaw(`SELECT name, commit_position, prepare_position, version,
		to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS updated FROM projection_checkpoints`).Scan(ctx, &rows)
	if err != nil {
		return fmt.Errorf("read checkpoints: %w", err)
	}
	rebuilds, err := readRebuilds(ctx, db)
	if err != nil {
		return err
	}
	type state struct {
		checkpoint string
		version    int
	}
	byName := map[string]state{}
	for _, r := range rows {
		byName[r.Name] = state{fmt.Sprintf("%d/%d\t%s", r.Commit, r.Prepare, r.Updated), r.Version}
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tVERSION\tTABLES\tCHECKPOINT\tUPDATED\tREBUILD")
	for _, p := range projectors.All() {
		st, ok := byName[p.Name()]
		version := describeVersion(st.version, p.Version(), ok)
		if !ok {
			st.checkpoint = "0/0\tnever run"
		}
		delete(byName, p.Name())
		fmt.Fprintf(w, "%s\t%s\t%v\t%s\t%s\n", p.Name(), version, p.Tables(), st.checkpoint, rebuilds[p.Name()].describe())
	}
	// Checkpoints of projectors that must never be rebuilt (the webhook
	// dispatcher: a replay would send every past event again).
	for _, r := range rows {
		if st, ok := byName[r.Name]; ok && !strings.HasSuffix(r.Name, "@rebuild") {
			fmt.Fprintf(w, "%s\t%d\t(not rebuildable)\t%s\t-\n", r.Name, st.version, st.checkpoint)
		}
	}
	return w.Flush()
}

// describeVersion puts the read model's version beside the code's when
// they differ.
func describeVersion(stored, code int, built bool) string {
	switch {
	case !built:
		return fmt.Sprintf("- (code %d)", code)
	case stored < code:
		return fmt.Sprintf("%d (code %d: outdated, serve rebuilds it)", stored, code)
	case stored > code:
		return fmt.Sprintf("%d (code %d is older)", stored, code)
	}
	return fmt.Sprint(stored)
}

// rebuildRow is a projector's last rebuild as projection_rebuilds keeps it.
type rebuildRow struct {
	Name     string     `bun:"name"`
	Version  int        `bun:"version"`
	Owner    string     `bun:"owner"`
	Started  time.Time  `bun:"started_at"`
	Updated  time.Time  `bun:"updated_at"`
	Events   int64      `bun:"events"`
	Total    *int64     `bun:"total"`
	Position string     `bun:"position"`
	Finished *time.Time `bun:"finished_at"`
	Error    *string    `bun:"error"`
	Now      time.Time  `bun:"now"`
}

func readRebuilds(ctx context.Context, db *database.DB) (map[string]*rebuildRow, error) {
	var rows []*rebuildRow
	if err := db.Bun.NewRaw(`SELECT *, now() AS now FROM projection_rebuilds`).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read rebuilds: %w", err)
	}
	out := make(map[string]*rebuildRow, len(rows))
	for _, r := range rows {
		out[r.Name] = r
	}
	return out, nil
}

// staleRebuild is how long a running rebuild may go without recording its
// progress (every two seconds) before it is shown as stopped.
const staleRebuild = 30 * time.Second

func (r *rebuildRow) describe() string {
	if r == nil {
		return "-"
	}
	at := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	switch {
	case r.Finished != nil && r.Error != nil:
		return fmt.Sprintf("v%d failed %s: %s", r.Version, at(*r.Finished), *r.Error)
	case r.Finished != nil:
		return fmt.Sprintf("v%d done %s (%d events in %s)", r.Version, at(*r.Finished), r.Events, r.Finished.Sub(r.Started).Round(time.Second))
	case r.Now.Sub(r.Updated) > staleRebuild:
		return fmt.Sprintf("v%d stopped at %d events (%s, last heard of %s)", r.Version, r.Events, r.Owner, at(r.Updated))
	}
	of := ""
	if r.Total != nil && *r.Total > 0 {
		of = fmt.Sprintf(" of %d (%d%%)", *r.Total, min(100, r.Events*100 / *r.Total))
	}
	return fmt.Sprintf("rebuilding to v%d: %d events%s at %s, %s, since %s", r.Version, r.Events, of, r.Position, r.Owner, at(r.Started))
}
