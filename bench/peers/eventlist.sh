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
#   RATES="300 500 700 900 1100 1300" SECS=15 bash bench/peers/eventlist.sh
#       # steps the rate instead of ROUNDS: at each rate the event list, then
#       # the news list; one line per step (load, answers/s, p50/p99, CPU per
#       # request, the load generator's own CPU), then for each list the first
#       # rate whose p99 exceeds LIMIT_MS (30): bracketed by the step below it,
#       # and interpolated linearly in p99 between the two steps. Stepping
#       # stops after a rate at which both lists answered under 90% of it.
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

run() { # name url rate -> "server_ms pg_ms loadgen_ms achieved p50 p99 errors lag_p99"
	# (CPU per answered request: the server, the Postgres backends serving its
	# database, and the load generator itself; latencies in ms)
	local pids s0 b0 s1 b1 out n st0 st1 lg sum
	curl -fsS -H "Authorization: Bearer $KEY" "$2" >/dev/null
	pids=$(backends)
	s0=$(cpu "$serve_pid"); b0=$(cpu $pids)
	# The generator's CPU is what this shell's reaped children gained
	# (cutime + cstime) across its run; read with a builtin, no fork between.
	read -r -a st0 <"/proc/$BASHPID/stat"
	# loadgen exits non-zero when requests fail or time out; the figures still count.
	out=$("$bin/loadgen" -url "$2" -header "Authorization: Bearer $KEY" -rate "$3" -duration "${SECS}s") || true
	read -r -a st1 <"/proc/$BASHPID/stat"
	lg=$((st1[15] + st1[16] - st0[15] - st0[16]))
	pids=$(backends)   # the pool may have opened more; those started at 0
	s1=$(cpu "$serve_pid"); b1=$(cpu $pids)
	n=$(echo "$out" | sed -n 's/^completed.*(\([0-9]*\) answered).*/\1/p')
	echo "$out" | grep -E '^(completed|status|latency|send lag)' | sed "s/^/  $1 @$3: /" >&2
	sum=$(echo "$out" | sed -n 's/^summary *//p')
	awk -v n="$n" -v s="$((s1 - s0))" -v b="$((b1 - b0))" -v g="$lg" -v t="$ticks" -v sum="$sum" \
		-v lag="$(echo "$out" | sed -n 's/^send lag.* p99 \([0-9.]*\)ms.*/\1/p')" \
		'BEGIN { k = split(sum, f, " "); for (i = 1; i <= k; i++) { split(f[i], kv, "="); v[kv[1]] = kv[2] + 0 }
			if (n == 0) n = 1e-9
			printf "%.3f %.3f %.3f %.1f %.2f %.2f %d %.2f\n", s*1000/t/n, b*1000/t/n, g*1000/t/n, v["achieved"], v["p50"], v["p99"], v["errors"], lag + 0 }'
}
ev="http://127.0.0.1:$PORT/feeds/events/$EVENT_FEED/items?limit=20"
news="http://127.0.0.1:$PORT/feeds/news/$NEWS_FEED/items?limit=20"
if [[ -n "${RATES:-}" ]]; then
	LIMIT_MS=${LIMIT_MS:-30}
	echo "machine: $(nproc) cores; rates $RATES req/s, ${SECS}s per run, limit=20; at each rate events then news"
	echo "step: list rate | load (1/5/15 min, before the run) | answers/s p50 p99 ms, errors, send lag p99 ms | CPU ms per request: server + postgres, loadgen"
	steps="" sat=""
	for rate in $RATES; do
		for list in events news; do
			url=$ev; [[ $list == news ]] && url=$news
			load=$(cut -d' ' -f1-3 /proc/loadavg)
			read -r sv pg lg ach p50 p99 errs lag < <(run "$list" "$url" "$rate")
			printf 'step: %-6s %5d | load %s | %7.1f/s p50 %7.2f p99 %8.2f ms, errors %d, lag p99 %.2f ms | %.3f + %.3f ms, loadgen %.3f ms\n' \
				"$list" "$rate" "$load" "$ach" "$p50" "$p99" "$errs" "$lag" "$sv" "$pg" "$lg"
			steps+="$list $rate $p99"$'\n'
			sat+=$(awk -v a="$ach" -v r="$rate" 'BEGIN { print (a < 0.9 * r) ? 1 : 0 }')
		done
		# Both lists answered under 90% of the rate asked: both saturated,
		# higher rates tell nothing more and only load the shared machine.
		[[ $sat == 11 ]] && { echo "step: both lists saturated at $rate/s; higher rates not run"; break; }
		sat=""
	done
	# The first rate whose p99 exceeds the limit, per list, in the order stepped.
	printf '%s' "$steps" | awk -v lim="$LIMIT_MS" '
		{ if (!($1 in seen)) { order[++k] = $1; seen[$1] = 1 }
		  if (crossed[$1] == "") { if ($3 > lim) crossed[$1] = $2 " " $3 " " prev[$1]; else prev[$1] = $2 " " $3 }
		  else if ($3 <= lim) back[$1] = back[$1] " " $2 }
		END { for (i = 1; i <= k; i++) { l = order[i]
			if (crossed[l] == "") { printf "crossing: %-6s p99 <= %g ms at every rate stepped (last %s ms)\n", l, lim, prev[l]; continue }
			split(crossed[l], c, " ")
			if (c[3] == "") { printf "crossing: %-6s p99 %.2f ms > %g ms already at the first rate, %d/s\n", l, c[2], lim, c[1]; continue }
			r = c[3] + (lim - c[4]) * (c[1] - c[3]) / (c[2] - c[4])
			printf "crossing: %-6s between %d/s (p99 %.2f ms) and %d/s (p99 %.2f ms); interpolated %.0f/s%s\n", l, c[3], c[4], c[1], c[2], r,
				back[l] == "" ? "" : "; p99 back under the limit at" back[l] }
		}'
	exit 0
fi
echo "machine: $(nproc) cores; rate $RATE req/s, ${SECS}s per run, limit=20"
for r in $(seq 1 "$ROUNDS"); do
	l1=$(cut -d' ' -f1 /proc/loadavg); read -r es eb _ < <(run events "$ev" "$RATE")
	l2=$(cut -d' ' -f1 /proc/loadavg); read -r ns nb _ < <(run news "$news" "$RATE")
	printf 'round %d: events (load %s) server %s ms + postgres %s ms per request | news (load %s) server %s ms + postgres %s ms | ratio server %.2f, postgres %.2f, both %.2f\n' \
		"$r" "$l1" "$es" "$eb" "$l2" "$ns" "$nb" "$(echo "$es / $ns" | bc -l)" "$(echo "$eb / $nb" | bc -l)" "$(echo "($es + $eb) / ($ns + $nb)" | bc -l)"
done
