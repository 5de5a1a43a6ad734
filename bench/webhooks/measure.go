package main

import (
	"context"
	"syscall"
	"time"

	"github.com/feedsvc/feedsvc/bench/internal/systems"
)

// measure samples every interval until the returned stop is called, which
// returns the Postgres CPU and this process's CPU over the span.
// It counts the backends of the database as sampling sees them
// (systems.BackendCPU.Sampled), as bench/ingest does.
func measure(ctx context.Context, b *systems.BackendCPU, interval time.Duration) func() (pg, self time.Duration) {
	b.Reset()
	_ = b.Sample(ctx)
	self0 := selfCPU()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); b.Run(ctx, interval) }()
	return func() (time.Duration, time.Duration) {
		cancel()
		<-done
		_ = b.Sample(context.Background())
		pg, _ := b.Sampled()
		return pg, selfCPU() - self0
	}
}

// selfCPU is this process's CPU time so far (user + system).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
