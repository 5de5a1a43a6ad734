#!/usr/bin/env bash
# Quick benchmark pass (about a minute): a projection rebuild over 100,000
# events, then the read API under fixed-rate load on a small seeded
# database. The full runs and the recorded figures are in bench/README.md.
#
# Needs Go and Postgres at DATABASE_URL's server (default
# postgres://postgres@127.0.0.1:5432). It creates two databases,
# feedsvc_bench_quick and feedsvc_bench_quick_rebuild, and drops them at
# the end. Only 127.0.0.1 is contacted.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
PORT=${FEEDSVC_BENCH_PORT:-18089}
server=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
base=${server%%\?*}
base=${base%/*}
query=""
[[ "$server" == *\?* ]] && query="?${server#*\?}"
api_db="$base/feedsvc_bench_quick$query"
rebuild_db="$base/feedsvc_bench_quick_rebuild$query"

bin=$(mktemp -d)
serve_pid=""
cleanup() {
	if [[ -n "$serve_pid" ]]; then
		kill "$serve_pid" 2>/dev/null || true
		wait "$serve_pid" 2>/dev/null || true
	fi
	"$bin/seed" drop -db "$api_db" 2>/dev/null || true
	rm -rf "$bin"
}
trap cleanup EXIT

echo "== build"
$GO build -o "$bin/seed" ./bench/seed
$GO build -o "$bin/loadgen" ./bench/loadgen
$GO build -o "$bin/feedsvc" ./cmd/feedsvc
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)"

echo
echo "== projection rebuild: newsitems over 100,000 NewsItemAdded events"
"$bin/seed" rebuild -db "$rebuild_db" -fresh -drop -events 100000

echo
echo "== seed: 20 feeds + one feed of 20,000 items, appended through the event store; projections catch up"
eval "$("$bin/seed" api -db "$api_db" -fresh -feeds 20 -items 20000)"

# The load generator is one client address: no per-address connection cap.
DATABASE_URL="$api_db" FEEDSVC_ADDR="127.0.0.1:$PORT" FEEDSVC_ROLES=api,projections FEEDSVC_LOG_LEVEL=warn FEEDSVC_MAX_CONNS_PER_IP=0 \
	"$bin/feedsvc" serve >"$bin/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1 100); do
	if curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; then break; fi
	sleep 0.1
done
curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat "$bin/serve.log"; exit 1; }

load() { # name url rate
	echo
	echo "== $1 at $3 req/s"
	"$bin/loadgen" -url "$2" -header "Authorization: Bearer $KEY" -rate "$3" -duration 6s -warmup 1s | grep -E '^(completed|status|latency)'
}
api="http://127.0.0.1:$PORT"
load "GET /feeds/news" "$api/feeds/news" 500
load "GET /feeds/news" "$api/feeds/news" 1000
load "GET items?limit=50 (first page)" "$api/feeds/news/$BIG_FEED/items?limit=50" 500
load "GET items?limit=50&offset=15000 (deep page)" "$api/feeds/news/$BIG_FEED/items?limit=50&offset=15000" 200
load "GET items?limit=50&since=<middle of the feed>" "$api/feeds/news/$BIG_FEED/items?limit=50&since=$SINCE_HALF" 200
