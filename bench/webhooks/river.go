package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/bench/internal/systems"
	"github.com/feedsvc/feedsvc/internal/database"
)

// noopArgs has the shape of a delivery job (webhook.deliveryArgs): two
// fields, unique by args.
type noopArgs struct {
	DeliveryID uuid.UUID `json:"deliveryId" river:"unique"`
	Run        int       `json:"run" river:"unique"`
}

func (noopArgs) Kind() string { return "bench_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	done func()
}

func (w *noopWorker) Work(context.Context, *river.Job[noopArgs]) error {
	w.done()
	return nil
}

// peer is one run of the River no-op peer.
type peer struct {
	jobs    int
	elapsed time.Duration
	pgCPU   time.Duration
	goCPU   time.Duration
}

func (p peer) rate() float64 { return float64(p.jobs) / p.elapsed.Seconds() }

// riverNoop measures River alone on the same database with the settings
// the webhooks role gives it (webhook.Service.riverConfig and open): the
// database/sql driver over a pgx pool of 16 connections with
// synchronous_commit off, a LISTEN pool of one, 64 workers, a fetch
// cooldown of 10 ms and a poll of 250 ms (a backoff base of 1 s, as this
// command configures the webhooks), five attempts. Jobs shaped like
// deliveries (unique by args) are inserted as the dispatcher inserts them,
// batch per transaction on the main pool, while the client works them;
// each does nothing. The rate is every job worked over the time from the
// first insert to the last job run.
func riverNoop(ctx context.Context, db *database.DB, cpu *systems.BackendCPU, jobs, batch int) (peer, error) {
	pcfg := db.Pool.Config().Copy()
	pcfg.MinConns, pcfg.MaxConns = 0, int32(senderConns)
	pcfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return peer{}, fmt.Errorf("open peer pool: %w", err)
	}
	defer pool.Close()
	lcfg := db.Pool.Config().Copy()
	lcfg.MinConns, lcfg.MaxConns = 0, 1
	listener, err := pgxpool.NewWithConfig(ctx, lcfg)
	if err != nil {
		return peer{}, fmt.Errorf("open peer listener: %w", err)
	}
	defer listener.Close()
	sqldb := stdlib.OpenDBFromPool(pool)
	defer sqldb.Close()

	var worked atomic.Int64
	var last time.Time
	var once sync.Once
	all := make(chan struct{})
	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{done: func() {
		if worked.Add(1) == int64(jobs) {
			once.Do(func() { last = time.Now(); close(all) })
		}
	}})
	const queue = "bench_noop"
	client, err := river.NewClient(riverdatabasesql.NewWithPgxListener(sqldb, listener), &river.Config{
		MaxAttempts: 5, Queues: map[string]river.QueueConfig{queue: {MaxWorkers: 64}}, Workers: workers,
		FetchPollInterval: 250 * time.Millisecond, FetchCooldown: 10 * time.Millisecond,
		JobTimeout: 15 * time.Second, RescueStuckJobsAfter: 45 * time.Second,
	})
	if err != nil {
		return peer{}, fmt.Errorf("peer client: %w", err)
	}
	if err := client.Start(ctx); err != nil {
		return peer{}, fmt.Errorf("start peer: %w", err)
	}
	defer func() {
		stop, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = client.Stop(stop)
	}()
	time.Sleep(time.Second) // the listener and producer settle, as for the webhooks

	measured := measure(ctx, cpu, 200*time.Millisecond)
	start := time.Now()
	for from := 0; from < jobs; from += batch {
		n := min(batch, jobs-from)
		params := make([]river.InsertManyParams, n)
		for i := range params {
			params[i] = river.InsertManyParams{Args: noopArgs{DeliveryID: uuid.New(), Run: 1}, InsertOpts: &river.InsertOpts{
				Queue: queue, MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true},
			}}
		}
		err := db.Bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := client.InsertManyTx(ctx, tx.Tx, params)
			return err
		})
		if err != nil {
			return peer{}, fmt.Errorf("insert peer jobs: %w", err)
		}
	}
	select {
	case <-all:
	case <-time.After(10 * time.Minute):
		return peer{}, fmt.Errorf("peer: only %d of %d jobs worked in 10 minutes", worked.Load(), jobs)
	case <-ctx.Done():
		return peer{}, ctx.Err()
	}
	// River completes jobs in batches after they ran: wait for the last
	// completions so that their cost is in the figures.
	for range 100 {
		var left int
		if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE queue = $1 AND state <> 'completed'", queue).Scan(&left); err != nil || left == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	pg, self := measured()
	return peer{jobs: jobs, elapsed: last.Sub(start), pgCPU: pg, goCPU: self}, nil
}
