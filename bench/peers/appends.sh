#!/usr/bin/env bash
# Single appends beside raw single-row INSERTs, interleaved in one run
# (issue 22): pgbench inserting one row per transaction into a table of the
# events table's shape and indexes (the peer), then
# BenchmarkAppendSingle16Writers (eventstore.Postgres.AppendToStream, one
# event per call, Exact expectation), both with 16 writers, ROUNDS times.
# Prints each figure, the ratio, and the load average before each run.
#
#   bash bench/peers/appends.sh            # ROUNDS=3 SECONDS_PER_RUN=15 N=40000
#   BEFORE=/path/to/other/eventstore.test bash bench/peers/appends.sh
#
# pgbench runs twice per round: with the simple protocol (its default:
# each INSERT parsed and planned) and with -M prepared (as the store's
# statements are). BEFORE, a test binary of another commit's eventstore
# (`go test -c ./eventstore` in a checkout of it), runs in each round too.
#
# Needs pgbench and psql, and Postgres at DATABASE_URL's server (default
# postgres://postgres@127.0.0.1:5432). The peer uses its own database,
# feedsvc_bench_raw_inserts, dropped at the end; the benchmark creates and
# drops its own (testdb).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
SECS=${SECONDS_PER_RUN:-15}
N=${N:-40000}
server=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
base=${server%%\?*}
base=${base%/*}
peer_db="$base/feedsvc_bench_raw_inserts"
psql -qX "$server" -c 'DROP DATABASE IF EXISTS feedsvc_bench_raw_inserts' -c 'CREATE DATABASE feedsvc_bench_raw_inserts'
trap 'psql -qX "$server" -c "DROP DATABASE IF EXISTS feedsvc_bench_raw_inserts" >/dev/null 2>&1 || true' EXIT
# The events table as eventstore/migrations creates it.
sed -n '/CREATE TABLE IF NOT EXISTS events/,/^);/p' eventstore/migrations/20261122000001_events.up.sql | psql -qX "$peer_db"
payload='{"feed_id":"0b8e3c1e-6f3a-4a57-9a8e-3f1f2b7c9d10","item_id":"https://example.com/posts/2026/11/22/a-reasonably-long-slug","title":"A reasonably long title of a feed item","published_at":"2026-11-22T10:00:00Z"}'
script=$(mktemp)
# One new stream per insert (revision 0), a random event id: the benchmark
# payload, type and empty metadata.
printf "INSERT INTO events (stream_id, stream_revision, event_id, event_type, data) VALUES (gen_random_uuid()::text, 0, gen_random_uuid(), 'ItemDiscovered', '%s');\n" "$payload" >"$script"
go test -c -o /tmp/eventstore.bench.test ./eventstore
load() { cut -d' ' -f1 /proc/loadavg; }
echo "machine: $(nproc) cores"
raw() { # protocol
	psql -qX "$peer_db" -c 'TRUNCATE events' >/dev/null
	pgbench -n -M "$1" -c 16 -j 2 -T "$SECS" -f "$script" "$peer_db" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}
ours() { # test binary, its package directory
	(cd "$2" && "$1" -test.run '^$' -test.bench 'AppendSingle16Writers$' -test.benchtime "${N}x" | grep AppendSingle |
		awk '{for (i = 1; i < NF; i++) { if ($(i+1) == "appends/s") a = $i; if ($(i+1) == "p99_ms") p = $i } } END { print a, p }')
}
for r in $(seq 1 "$ROUNDS"); do
	l=$(load)
	simple=$(raw simple)
	prepared=$(raw prepared)
	read -r a p99 < <(ours /tmp/eventstore.bench.test eventstore)
	printf 'round %d (load %s): raw INSERT %.0f tps simple, %.0f prepared | AppendToStream %.0f appends/s, p99 %s ms | ratio %.2f to simple, %.2f to prepared\n' \
		"$r" "$l" "$simple" "$prepared" "$a" "$p99" "$(echo "$a / $simple" | bc -l)" "$(echo "$a / $prepared" | bc -l)"
	if [[ -n "${BEFORE:-}" ]]; then
		read -r b bp99 < <(ours "$BEFORE" "$(dirname "$BEFORE")")
		printf '         before: %.0f appends/s, p99 %s ms | ratio %.2f to simple, %.2f to prepared\n' \
			"$b" "$bp99" "$(echo "$b / $simple" | bc -l)" "$(echo "$b / $prepared" | bc -l)"
	fi
done
rm -f "$script"
