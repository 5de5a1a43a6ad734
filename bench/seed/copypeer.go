package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/internal/database"
)

// copyPeer is the peer a rebuild is measured beside (issue 22): the rows
// the rebuild wrote, loaded again with COPY into empty tables of the same
// definition (LIKE … INCLUDING ALL: the same constraints and indexes) in a
// scratch schema, in one transaction. The rows are first copied out to a
// file, untimed, so that the figure is COPY FROM alone. It returns the
// rows and the time COPY FROM took.
func copyPeer(ctx context.Context, db *database.DB, tables []string) (int64, time.Duration, error) {
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Release()
	pg := conn.Conn().PgConn()
	if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS copy_peer CASCADE`); err != nil {
		return 0, 0, err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `DROP SCHEMA IF EXISTS copy_peer CASCADE`) //nolint:errcheck // scratch
	if _, err := conn.Exec(ctx, `CREATE SCHEMA copy_peer`); err != nil {
		return 0, 0, err
	}
	var rows int64
	var took time.Duration
	for _, t := range tables {
		name := pgx.Identifier{t}.Sanitize()
		f, err := os.CreateTemp("", "copy-peer-*")
		if err != nil {
			return 0, 0, err
		}
		defer os.Remove(f.Name())
		defer f.Close()
		if _, err := pg.CopyTo(ctx, f, "COPY public."+name+" TO STDOUT (FORMAT binary)"); err != nil {
			return 0, 0, fmt.Errorf("copy %s out: %w", t, err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return 0, 0, err
		}
		if _, err := conn.Exec(ctx, "CREATE TABLE copy_peer."+name+" (LIKE public."+name+" INCLUDING ALL)"); err != nil {
			return 0, 0, err
		}
		t0 := time.Now()
		tag, err := pg.CopyFrom(ctx, f, "COPY copy_peer."+name+" FROM STDIN (FORMAT binary)")
		if err != nil {
			return 0, 0, fmt.Errorf("copy %s in: %w", t, err)
		}
		took += time.Since(t0)
		rows += tag.RowsAffected()
	}
	return rows, took, nil
}
