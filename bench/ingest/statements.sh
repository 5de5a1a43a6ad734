#!/usr/bin/env bash
# Where Postgres's time and transactions go in one `bench/ingest` run, on a
# private Postgres cluster with pg_stat_statements (bench/ingest/README.md,
# "Transactions per item"). Start the cluster once (as a user that may run
# Postgres, e.g. `runuser -u postgres --` when root):
#
#   initdb -D /tmp/pgpriv -U postgres -A trust
#   cat >> /tmp/pgpriv/postgresql.conf <<'CONF'
#   port = 5499
#   shared_preload_libraries = 'pg_stat_statements'
#   log_line_prefix = '%m [%p] v=%v x=%x db=%d '
#   CONF
#   pg_ctl -D /tmp/pgpriv -l /tmp/pgpriv.log start
#
# then: bench/ingest/statements.sh /tmp/bench-ingest /tmp/feedsvc
# With LOG=1 it also logs every statement for the run and groups them by
# transaction (bench/ingest/txsplit.py), which shows where each
# transaction per item goes.
set -euo pipefail
BENCH=${1:?path of a built bench/ingest}
FEEDSVC=${2:?path of a built feedsvc}
PORT=${PORT:-5499}
LOGFILE=${LOGFILE:-/tmp/pgpriv.log}
P="psql -h 127.0.0.1 -p $PORT -U postgres -Atq"
DB=feedsvc_bench_ingest
$P -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
if [[ ${LOG:-} == 1 ]]; then
  $P -c "ALTER SYSTEM SET log_statement = 'all'" -c "SELECT pg_reload_conf()" >/dev/null
  : > "$LOGFILE"
fi
# -keep: the statistics of a dropped database can no longer be told apart.
"$BENCH" -feedsvc "$FEEDSVC" -runs 1 -keep -db "postgres://postgres@127.0.0.1:$PORT/$DB?sslmode=disable" &
# Count from the moment the service connects (after migrate and keys).
for _ in $(seq 1 400); do
  sleep 0.05
  n=$($P -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$DB' AND application_name LIKE '%main%'")
  [[ $n -gt 0 ]] && break
done
$P -c "SELECT pg_stat_statements_reset()" >/dev/null
wait
if [[ ${LOG:-} == 1 ]]; then
  $P -c "ALTER SYSTEM RESET log_statement" -c "SELECT pg_reload_conf()" >/dev/null
  python3 "$(dirname "$0")/txsplit.py" "$LOGFILE" 25
fi
echo "execution time (ms), calls, rows, statement:"
$P -c "SELECT round(sum(total_exec_time)::numeric) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '$DB'"
$P -F ' | ' -c "SELECT round(total_exec_time::numeric), calls, rows, left(regexp_replace(query, '\s+', ' ', 'g'), 100)
  FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '$DB'
  ORDER BY total_exec_time DESC LIMIT 15"
