#!/usr/bin/env bash
# The event item list beside the news item list of the same page size,
# interleaved in one run against one `feedsvc serve` (issue 22): for each
# round, GET /feeds/events/{id}/items?limit=20 (10,000 events, 100,000
# occurrences, the next 30 days) then GET /feeds/news/{id}/items?limit=20
# (10,000 items), each at RATE req/s for SECS seconds. For each run it prints
# answers/s, p50/p99, and CPU per request of the server process and of the
# Postgres backends serving its database (from /proc), with the load
# average before it; then the event list's ratios to the news list.
#
#   bash bench/peers/eventlist.sh          # RATE=500 SECS=15 ROUNDS=3
#   SEEDED=1 bash bench/peers/eventlist.sh # reuse feedsvc_bench_eventlist as seeded
#   SERVER_BIN=/path/to/feedsvc ...          # measure another build of the server
#
# The event feed is scored (config with geo and keywords), as a feed of a
# city's events would be: relevanceScore is on every item.
# Seeding (`seed events -news-items 10000`) takes a minute or two. The
# database, feedsvc_bench_eventlist, is kept for reruns (seed drop removes it).
set -euo pipefail
cd "$(dirname "$0")/../.."
RATE=${RATE:-500}
SECS=${SECS:-15}
ROUNDS=${ROUNDS:-3}
PORT=${FEEDSVC_BENCH_PORT:-18187}
server=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
base=${server%%\?*}
base=${base%/*}
dbname=feedsvc_bench_eventlist
db="$base/$dbname?sslmode=disable"
bin=${BIN:-$(mktemp -d)}
serve_pid=""
trap '[[ -n "$serve_pid" ]] && kill "$serve_pid" 2>/dev/null; wait 2>/dev/null' EXIT

go build -o "$bin/" ./bench/seed ./bench/loadgen ./cmd/feedsvc
if [[ -z "${SEEDED:-}" || ! -s "$bin/eventlist.env" ]]; then
	"$bin/seed" events -db "$db" -fresh -news-items 10000 \
		-config '{"geo":{"lat":52.52,"lng":13.405,"radiusKm":25},"keywords":["jazz","festival","kids"]}' >"$bin/eventlist.env"
fi
. "$bin/eventlist.env"
DATABASE_URL="$db" FEEDSVC_ADDR="127.0.0.1:$PORT" FEEDSVC_ROLES=api FEEDSVC_LOG_LEVEL=warn FEEDSVC_MAX_CONNS_PER_IP=0 \
	FEEDSVC_RATE_LIMIT=unlimited "${SERVER_BIN:-$bin/feedsvc}" serve >"$bin/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.2; done

ticks=$(getconf CLK_TCK)
# cpu PID...: user+system ticks of the processes (children not included).
cpu() { for p in "$@"; do awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null || echo 0; done | awk '{s+=$1} END {print s+0}'; }
# grep fails when a process it lists exits meanwhile (other work on the
# machine); with pipefail that ended the script halfway through a round.
backends() { { grep -l -a "postgres: .* $dbname " /proc/[0-9]*/cmdline 2>/dev/null || true; } | cut -d/ -f3 | tr '\n' ' '; }

run() { # name url -> "answers p50 p99 server_ms pg_ms" per request
	local pids s0 b0 s1 b1 out n
	curl -fsS -H "Authorization: Bearer $KEY" "$2" >/dev/null
	pids=$(backends)
	s0=$(cpu "$serve_pid"); b0=$(cpu $pids)
	# loadgen exits non-zero when requests fail or time out; the figures still count.
	out=$("$bin/loadgen" -url "$2" -header "Authorization: Bearer $KEY" -rate "$RATE" -duration "${SECS}s") || true
	pids=$(backends)   # the pool may have opened more; those started at 0
	s1=$(cpu "$serve_pid"); b1=$(cpu $pids)
	n=$(echo "$out" | sed -n 's/^completed.*(\([0-9]*\) answered).*/\1/p')
	echo "$out" | grep -E '^(completed|status|latency)' | sed "s/^/  $1: /" >&2
	awk -v n="$n" -v s="$((s1 - s0))" -v b="$((b1 - b0))" -v t="$ticks" \
		'BEGIN { printf "%.3f %.3f\n", s*1000/t/n, b*1000/t/n }'
}
echo "machine: $(nproc) cores; rate $RATE req/s, ${SECS}s per run, limit=20"
ev="http://127.0.0.1:$PORT/feeds/events/$EVENT_FEED/items?limit=20"
news="http://127.0.0.1:$PORT/feeds/news/$NEWS_FEED/items?limit=20"
for r in $(seq 1 "$ROUNDS"); do
	l1=$(cut -d' ' -f1 /proc/loadavg); read -r es eb < <(run events "$ev")
	l2=$(cut -d' ' -f1 /proc/loadavg); read -r ns nb < <(run news "$news")
	printf 'round %d: events (load %s) server %s ms + postgres %s ms per request | news (load %s) server %s ms + postgres %s ms | ratio server %.2f, postgres %.2f, both %.2f\n' \
		"$r" "$l1" "$es" "$eb" "$l2" "$ns" "$nb" "$(echo "$es / $ns" | bc -l)" "$(echo "$eb / $nb" | bc -l)" "$(echo "($es + $eb) / ($ns + $nb)" | bc -l)"
done
