#!/usr/bin/env bash
# bench/http_api.sh — run by hand: request rates of the HTTP stack, with baselines measured in
# the same run on the same machine.
#
#   /healthz                      Civetweb + router + access log, no database
#   GET /api/v1/teams/{id}        + bearer-token lookup + one primary-key SELECT (2 queries)
#   baseline: pgbench             the same two statements, prepared, straight to PostgreSQL
#
# wrk (Debian package `wrk`) drives HTTP with keep-alive; pgbench with the same number of
# clients. The ratio API/pgbench is what capledger's own layers cost per request.
#
# Environment: CAPLEDGER_BENCH_DATABASE_URL (libpq conninfo of a database from which the script
# may CREATE and DROP a scratch database; default host=/tmp/devpg user=postgres dbname=postgres),
# CAPLEDGER_BIN (default build/capledger), SECONDS_EACH (default 10), CLIENTS (default 16),
# PORT (default 18932).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
BIN=${CAPLEDGER_BIN:-$ROOT/build/capledger}
BASE=${CAPLEDGER_BENCH_DATABASE_URL:-host=/tmp/devpg user=postgres dbname=postgres}
SECONDS_EACH=${SECONDS_EACH:-10}
CLIENTS=${CLIENTS:-16}
PORT=${PORT:-18932}
DB=capledger_httpbench_$$
DBURL="${BASE/dbname=postgres/dbname=$DB}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/capledger-httpbench.XXXXXX")
SERVER_PID=
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  psql -X -q -d "$BASE" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
command -v wrk >/dev/null || { echo "install wrk: apt-get install -y wrk" >&2; exit 1; }
[ -x "$BIN" ] || { echo "build first: $BIN not found" >&2; exit 1; }
psql -X -q -d "$BASE" -c "CREATE DATABASE $DB" >/dev/null

CAPLEDGER_DATABASE_URL=$DBURL CAPLEDGER_LISTEN=127.0.0.1:$PORT CAPLEDGER_KEY_FILE=$WORK/key \
  CAPLEDGER_ADMIN_PASSWORD="bench-$(head -c 12 /dev/urandom | base64)" \
  CAPLEDGER_THREADS=$((CLIENTS + 8)) "$BIN" serve 2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
TOKEN=$(CAPLEDGER_DATABASE_URL=$DBURL "$BIN" token create admin --label bench 2>/dev/null)
TEAM_ID=$(curl -fs -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"name":"bench"}' "http://127.0.0.1:$PORT/api/v1/teams" | sed 's/.*"id":"\([^"]*\)".*/\1/')
TOKEN_SHA=$(printf '%s' "$TOKEN" | sha256sum | cut -d' ' -f1)

rate() { awk '/Requests\/sec/ {print $2}'; }
echo "clients: $CLIENTS, $SECONDS_EACH s each, $(nproc) cores"
healthz=$(wrk -t1 -c"$CLIENTS" -d"${SECONDS_EACH}s" "http://127.0.0.1:$PORT/healthz" | rate)
cat >"$WORK/auth.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $TOKEN"
LUA
team=$(wrk -t1 -c"$CLIENTS" -d"${SECONDS_EACH}s" -s "$WORK/auth.lua" \
  "http://127.0.0.1:$PORT/api/v1/teams/$TEAM_ID" | rate)
# The same work without HTTP: the token lookup (an UPDATE … RETURNING joined to the user and
# teams, as the server runs it) and the team SELECT.
cat >"$WORK/pgbench.sql" <<SQL
WITH t AS (UPDATE api_token SET last_used_at = now() WHERE token_sha256 = '$TOKEN_SHA' AND revoked_at IS NULL RETURNING id, user_id) SELECT u.id FROM t JOIN app_user u ON u.id = t.user_id;
SELECT json_build_object('id', id, 'name', name, 'created_at', created_at) FROM team WHERE id::text = '$TEAM_ID' OR name = '$TEAM_ID';
SQL
pg=$(pgbench -n -M prepared -c "$CLIENTS" -j 2 -T "$SECONDS_EACH" -f "$WORK/pgbench.sql" "$DBURL" 2>/dev/null |
  awk '/^tps/ {print $3; exit}')
printf '%-34s %12s req/s\n' "GET /healthz" "$healthz" "GET /api/v1/teams/{id} (token)" "$team" \
  "baseline: pgbench same 2 statements" "$pg"
awk -v a="$team" -v b="$pg" 'BEGIN { printf "API / pgbench ratio: %.2f\n", a / b }'
