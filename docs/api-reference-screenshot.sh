#!/usr/bin/env bash
# Renders GET /docs of a real `feedsvc serve` in headless Chromium, saves a
# screenshot (docs/api-reference.png by default), and fails if opening the
# page made any request to another address than the service's.
#
# Needs Postgres (DOCS_DATABASE_URL, by default the local server's database
# feedsvc_docs, which the service creates) and Debian's chromium
# (apt-get install chromium).
# Usage: bash docs/api-reference-screenshot.sh [OUT.png]
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-docs/api-reference.png}
port=${DOCS_PORT:-18089}
base="http://127.0.0.1:$port"
db=${DOCS_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/feedsvc_docs?sslmode=disable}
work=$(mktemp -d)
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
	echo "chromium not found: apt-get install chromium" >&2
	exit 1
fi

go build -o "$work/feedsvc" ./cmd/feedsvc
DATABASE_URL="$db" FEEDSVC_ADDR="127.0.0.1:$port" FEEDSVC_ROLES=api \
	FEEDSVC_LOG_LEVEL=warn "$work/feedsvc" serve >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
	curl -fsS "$base/healthz" >/dev/null 2>&1 && break
	kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
	sleep 0.2
done
curl -fsS "$base/healthz" >/dev/null

# Every name but the service's address resolves to nothing, so even a
# request the page's Content-Security-Policy let through could not leave;
# Chromium's network log shows whether the page attempted one. Chromium
# makes requests of its own (updates, sign-in), which the log tells apart:
# a page's requests name the page's origin as their initiator.
shoot() { # shoot FRAGMENT OUT
	local log="$work/netlog-$(basename "$2").json"
	"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
		--host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" \
		--log-net-log="$log" --window-size=1440,4000 --virtual-time-budget=15000 \
		--screenshot="$2" "$base/docs$1" >"$work/chromium.log" 2>&1 || { cat "$work/chromium.log" >&2; exit 1; }
	local urls outside
	urls=$(grep -F "\"initiator\":\"$base\"" "$log" | grep -oE '"url":"[^"]*"' | sed 's/^"url":"//; s/"$//' | sort -u)
	[ -n "$urls" ] || { echo "the network log shows no request of the page" >&2; exit 1; }
	echo "requests of $base/docs$1:"
	printf '  %s\n' $urls
	outside=$(printf '%s\n' "$urls" | grep -vE "^$base/" || true)
	if [ -n "$outside" ]; then
		echo "the page requested outside addresses:" >&2
		printf '  %s\n' $outside >&2
		exit 1
	fi
	echo "screenshot: $2"
}

# A tall window: the introduction and the first operations with their
# samples. (Redoc's deep links scroll after the budget runs out.)
shoot "" "$out"
