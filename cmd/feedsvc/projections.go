package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/config"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/projections"
)

const projectionsUsage = `usage:
  feedsvc projections list           every projector, its tables and checkpoint
  feedsvc projections rebuild NAME   rebuild NAME's read model from position 0 while
                                     the running service keeps serving the old one
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
		if len(args) != 2 {
			return fmt.Errorf("projections rebuild takes one projector name\n%s", projectionsUsage)
		}
		p, ok := projections.ByName(args[1])
		if !ok {
			return fmt.Errorf("no projector named %q (see feedsvc projections list)", args[1])
		}
		store := eventstore.NewPostgres(db.Pool)
		return projections.Rebuild(ctx, cfg.DatabaseURL, db, store, p, logger)
	}
	return fmt.Errorf("unknown projections command %q\n%s", args[0], projectionsUsage)
}

func listProjections(ctx context.Context, db *database.DB, stdout io.Writer) error {
	var rows []struct {
		Name    string `bun:"name"`
		Commit  int64  `bun:"commit_position"`
		Prepare int64  `bun:"prepare_position"`
		Updated string `bun:"updated"`
	}
	err := db.Bun.NewRaw(`SELECT name, commit_position, prepare_position,
		to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS updated FROM projection_checkpoints`).Scan(ctx, &rows)
	if err != nil {
		return fmt.Errorf("read checkpoints: %w", err)
	}
	byName := map[string]string{}
	for _, r := range rows {
		byName[r.Name] = fmt.Sprintf("%d/%d\t%s", r.Commit, r.Prepare, r.Updated)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tTABLES\tCHECKPOINT\tUPDATED")
	for _, p := range projections.All() {
		state, ok := byName[p.Name()]
		if !ok {
			state = "0/0\tnever run"
		}
		delete(byName, p.Name())
		fmt.Fprintf(w, "%s\t%v\t%s\n", p.Name(), p.Tables(), state)
	}
	// Checkpoints of projectors that must never be rebuilt (the webhook
	// dispatcher: a replay would send every past event again).
	for _, r := range rows {
		if state, ok := byName[r.Name]; ok && !strings.HasSuffix(r.Name, "@rebuild") {
			fmt.Fprintf(w, "%s\t(not rebuildable)\t%s\n", r.Name, state)
		}
	}
	return w.Flush()
}
