package systems

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Recreate drops the database db (with its connections) and creates it
// empty, through the admin DSN.
func Recreate(ctx context.Context, admin, db string) error {
	if err := Drop(ctx, admin, db); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{db}.Sanitize()); err != nil {
		return fmt.Errorf("create %s: %w", db, err)
	}
	return nil
}

// Drop drops the database db, with its connections, if it exists.
func Drop(ctx context.Context, admin, db string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{db}.Sanitize()+` WITH (FORCE)`); err != nil {
		return fmt.Errorf("drop %s: %w", db, err)
	}
	return nil
}

// DSNOf is the admin DSN pointed at the database db.
func DSNOf(admin, db string) string { return strings.Replace(admin, "/postgres?", "/"+db+"?", 1) }

// WaitCount waits until query counts at least n, for at most limit.
func WaitCount(ctx context.Context, dsn, query string, n int, limit time.Duration) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to count: %w", err)
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(limit)
	for {
		var got int
		if err := conn.QueryRow(ctx, query).Scan(&got); err != nil {
			return fmt.Errorf("count: %w", err)
		}
		if got >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d after %v", got, n, limit)
		}
		time.Sleep(2 * time.Second)
	}
}

// VacuumAnalyze does what autovacuum would have done by now (it is off on
// the machine's shared server): without statistics the planner guesses,
// and dead row versions of a setup slow every scan after it.
func VacuumAnalyze(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to vacuum: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		return fmt.Errorf("vacuum analyze: %w", err)
	}
	return nil
}
