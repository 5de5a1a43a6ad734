// Package database opens the service's Postgres database: one pgx pool for
// the event store and a bun handle over the same pool for read models. It
// also creates the database when the server has none of that name, so a
// fresh machine needs no manual createdb (D11).
package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// DefaultURL is the database of D11 when DATABASE_URL is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/feedsvc?sslmode=disable"

// DB bundles the pgx pool and the bun handle that share it.
type DB struct {
	Pool *pgxpool.Pool
	SQL  *sql.DB
	Bun  *bun.DB
}

// Open connects to dsn, creating the database first if it does not exist.
func Open(ctx context.Context, dsn string) (*DB, error) {
	if err := EnsureDatabase(ctx, dsn); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	// A URL that sizes its pool (pool_max_conns, as WithPool sets it from
	// the process's budget) gets that; tools and tests get 16.
	if !strings.Contains(dsn, "pool_max_conns=") && cfg.MaxConns < 16 {
		cfg.MaxConns = 16
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping database: %w", err)
	}
	sqldb := stdlib.OpenDBFromPool(pool)
	return &DB{Pool: pool, SQL: sqldb, Bun: bun.NewDB(sqldb, pgdialect.New())}, nil
}

// Close releases every connection.
func (d *DB) Close() {
	_ = d.Bun.Close()
	d.Pool.Close()
}

// EnsureDatabase creates the database named in dsn when the server is
// reachable but has no database of that name.
func EnsureDatabase(ctx context.Context, dsn string) error {
	name, adminDSN, err := splitDatabase(dsn)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, connDSN(dsn))
	if err == nil {
		return conn.Close(ctx)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" { // invalid_catalog_name
		return fmt.Errorf("connect to database %s: %w", name, err)
	}
	admin, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return fmt.Errorf("connect to server to create database %s: %w", name, err)
	}
	defer admin.Close(ctx)
	_, err = admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	if err != nil && !errors.As(err, &pgErr) {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	// duplicate_database: another process won the race; or, when both
	// got past the check at once, unique_violation on pg_database's name.
	if err != nil && pgErr.Code != "42P04" && pgErr.Code != "23505" {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// DropDatabase removes the database named in dsn, ending its sessions.
func DropDatabase(ctx context.Context, dsn string) error {
	name, adminDSN, err := splitDatabase(dsn)
	if err != nil {
		return err
	}
	admin, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return fmt.Errorf("connect to server to drop database %s: %w", name, err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// WithDatabase returns dsn pointing at another database on the same server.
func WithDatabase(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("parse database url: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// connDSN is dsn for a single connection: without the pool's settings,
// which a lone connection would send to the server as unknown parameters.
func connDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || !strings.Contains(u.RawQuery, "pool_") {
		return dsn
	}
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func splitDatabase(dsn string) (name, adminDSN string, err error) {
	u, err := url.Parse(connDSN(dsn))
	if err != nil {
		return "", "", fmt.Errorf("parse database url: %w", err)
	}
	name = strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return "", "", fmt.Errorf("database url %q names no database", u.Redacted())
	}
	u.Path = "/postgres"
	return name, u.String(), nil
}
