#!/usr/bin/env bash
# bench/http_api.sh — run by hand: the rate of a token-authenticated read against the machine's
# limits, measured in the same run on the same machine.
#
#   GET /api/v1/workloads/{id}    bearer token (cached, core/auth/tokencache.h) + one
#                                 primary-key SELECT, as a pipeline polling evidence does
#   limit 1: GET /healthz         the same server's HTTP stack with no database at all
#   limit 2: pgbench -S           PostgreSQL's own primary-key selects (pgbench_accounts,
#                                 prepared), the same number of clients
#
# wrk (Debian package `wrk`) drives HTTP with keep-alive; the ratios printed are what the
# read costs relative to each limit (targets: >= 0.5 of /healthz, p99 <= 10 ms at 32
# connections). RSS of the server is sampled idle and at the end of each load.
#
# Environment: CAPLEDGER_BENCH_DATABASE_URL (libpq conninfo of a database from which the script
# may CREATE and DROP a scratch database; default host=/tmp/devpg user=postgres dbname=postgres),
# CAPLEDGER_BIN (default build/capledger), SECONDS_EACH (default 10), CLIENTS (default 32),
# PORT (default 18932).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
BIN=${CAPLEDGER_BIN:-$ROOT/build/capledger}
BASE=${CAPLEDGER_BENCH_DATABASE_URL:-host=/tmp/devpg user=postgres dbname=postgres}
SECONDS_EACH=${SECONDS_EACH:-10}
CLIENTS=${CLIENTS:-32}
PORT=${PORT:-18932}
DB=capledger_httpbench_$$
DBURL="${BASE/dbname=postgres/dbname=$DB}"
case "$DBURL" in *"dbname=$DB"*) ;; *) DBURL="$BASE dbname=$DB" ;; esac
WORK=$(mktemp -d "${TMPDIR:-/tmp}/capledger-httpbench.XXXXXX")
SERVER_PID=
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  psql -X -q -d "$BASE" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
command -v wrk >/dev/null || { echo "install wrk: apt-get install -y wrk" >&2; exit 1; }
command -v pgbench >/dev/null || { echo "pgbench (postgresql-contrib) is needed" >&2; exit 1; }
[ -x "$BIN" ] || { echo "build first: $BIN not found" >&2; exit 1; }
psql -X -q -d "$BASE" -c "CREATE DATABASE $DB" >/dev/null

(cd "$ROOT" && CAPLEDGER_DATABASE_URL=$DBURL CAPLEDGER_LISTEN=127.0.0.1:$PORT \
  CAPLEDGER_KEY_FILE=$WORK/key CAPLEDGER_ADMIN_PASSWORD="bench-$(head -c 12 /dev/urandom | base64)" \
  CAPLEDGER_MAX_CONNS_PER_ADDRESS=0 exec "$BIN" serve 2>"$WORK/server.log") &
SERVER_PID=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
rss() { awk '/VmRSS/ {printf "%.1f MiB", $2 / 1024}' "/proc/$SERVER_PID/status"; }
export CAPLEDGER_DATABASE_URL=$DBURL
"$BIN" team add bench >/dev/null
printf 'bench-member-password-%s\n' $$ | "$BIN" user add benchmember --role team --team bench >/dev/null
TOKEN=$("$BIN" token create benchmember --label bench 2>/dev/null | tail -1)
W=$(curl -fs -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"team":"bench","name":"resnet50","kind":"training","class":"production","memory_required_gb":30}' \
  "http://127.0.0.1:$PORT/api/v1/workloads" | sed 's/.*"id":"\([^"]*\)".*/\1/')
curl -fs -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/v1/workloads/$W" >/dev/null

run_wrk() { # run_wrk URL [LUA] — prints "rate p99_ms"
  local args=(-t2 -c"$CLIENTS" -d"${SECONDS_EACH}s" --latency)
  [ -n "${2:-}" ] && args+=(-s "$2")
  wrk "${args[@]}" "$1" | awk '
    /Requests\/sec/ { rate = $2 }
    /^ +99%/ { v = $2; if (v ~ /us$/) ms = v / 1000; else if (v ~ /ms$/) ms = v + 0; else ms = v * 1000 }
    END { printf "%s %.2f\n", rate, ms }'
}
echo "clients: $CLIENTS, $SECONDS_EACH s each, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "server RSS idle: $(rss)"
read -r healthz healthz_p99 < <(run_wrk "http://127.0.0.1:$PORT/healthz")
echo "server RSS after /healthz load: $(rss)"
printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$TOKEN" >"$WORK/auth.lua"
read -r get get_p99 < <(run_wrk "http://127.0.0.1:$PORT/api/v1/workloads/$W" "$WORK/auth.lua")
echo "server RSS after GET load: $(rss)"
# how the reads were answered (the row cache: hits, misses, stale; http/reads.h req_row)
curl -fs -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/metrics" 2>/dev/null |
  grep -E '^capledger_row_cache_(requests_total|fills_total)' | sed 's/^/  /' || true
grep -q '"status":5' "$WORK/server.log" && echo "WARNING: the server answered 5xx during the run"
pgbench -i -q -s 10 "$DBURL" >/dev/null 2>&1
pg=$(pgbench -n -S -M prepared -c "$CLIENTS" -j 2 -T "$SECONDS_EACH" "$DBURL" 2>/dev/null |
  awk '/^tps/ {print $3; exit}')
printf '%-44s %10.0f req/s  p99 %6.2f ms\n' "limit: GET /healthz (same server)" "$healthz" "$healthz_p99" \
  "GET /api/v1/workloads/{id} (token)" "$get" "$get_p99"
printf '%-44s %10.0f tps\n' "limit: pgbench -S (primary-key select)" "$pg"
awk -v a="$get" -v h="$healthz" -v p="$pg" \
  'BEGIN { printf "ratio GET / healthz: %.2f   GET / pgbench -S: %.2f\n", a / h, a / p }'
