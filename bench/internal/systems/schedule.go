package systems

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ScheduleSampler reads a system's schedule table (id, when the last poll
// ended, when the next is due) and sees each poll as a change of the
// first: its lag is that time minus the due time the row held before.
// Its own backend (Pids) is to be left out of the Postgres CPU.
type ScheduleSampler struct {
	conn  *pgx.Conn
	query string
	Pids  []int32
	prev  map[string][2]time.Time
	// in the window:
	polls int
	lags  []time.Duration
	on    bool
}

// NewScheduleSampler connects to the system's database; query is its
// System.Table.
func NewScheduleSampler(ctx context.Context, dsn, query string) (*ScheduleSampler, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect the sampler: %w", err)
	}
	var pid int32
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		return nil, err
	}
	return &ScheduleSampler{conn: conn, query: query, Pids: []int32{pid}, prev: map[string][2]time.Time{}}, nil
}

// Close ends the sampler's connection.
func (s *ScheduleSampler) Close() { _ = s.conn.Close(context.Background()) }

// PolledOnce samples and counts the sources polled at least once.
func (s *ScheduleSampler) PolledOnce(ctx context.Context) (int, error) {
	if err := s.Sample(ctx); err != nil {
		return 0, err
	}
	n := 0
	for _, v := range s.prev {
		if !v[0].IsZero() {
			n++
		}
	}
	return n, nil
}

// StartWindow starts counting polls and their lags.
func (s *ScheduleSampler) StartWindow() { s.polls, s.lags, s.on = 0, nil, true }

// EndWindow stops counting and returns the window's polls and lags.
func (s *ScheduleSampler) EndWindow() (int, []time.Duration) {
	s.on = false
	return s.polls, s.lags
}

// Sample reads the schedule once.
func (s *ScheduleSampler) Sample(ctx context.Context) error {
	rows, err := s.conn.Query(ctx, s.query)
	if err != nil {
		return fmt.Errorf("read the schedule: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var last, next *time.Time
		if err := rows.Scan(&id, &last, &next); err != nil {
			return err
		}
		var cur [2]time.Time
		if last != nil {
			cur[0] = *last
		}
		if next != nil {
			cur[1] = *next
		}
		p, seen := s.prev[id]
		if seen && s.on && !cur[0].Equal(p[0]) && !p[0].IsZero() {
			s.polls++
			s.lags = append(s.lags, cur[0].Sub(p[1]))
		}
		s.prev[id] = cur
	}
	return rows.Err()
}
