package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
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
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tTABLES\tCHECKPOINT\tUPDATED")
	for _, p := range projections.All() {
		var commit, prepare int64
		var updated string
		err := db.Bun.NewRaw(`SELECT commit_position, prepare_position, to_char(updated_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
			FROM projection_checkpoints WHERE name = ?`, p.Name()).Scan(ctx, &commit, &prepare, &updated)
		if err != nil {
			updated = "never run"
		}
		fmt.Fprintf(w, "%s\t%v\t%d/%d\t%s\n", p.Name(), p.Tables(), commit, prepare, updated)
	}
	return w.Flush()
}
