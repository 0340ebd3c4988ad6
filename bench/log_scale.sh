#!/usr/bin/env bash
# bench/log_scale.sh — run by hand: the decision log at scale (default 1,000,000 leaves), each
# figure next to a baseline measured in the same run on the same machine.
#
#   build     bench_loggen writes N key-enrolment leaves, their tiles and the signed head as COPY
#             text; psql \copy loads them (the point is proof latency at that size, not append
#             speed). Then the server starts on it (its start-up check reads every leaf).
#   proofs    GET /api/v1/log/proof/inclusion and /consistency at random indexes of the N-leaf
#             tree, one keep-alive connection, sequential (curl, many URLs per invocation)
#             baseline: the same server's GET /healthz the same way, and pgbench running the
#             primary-key SELECT of one tile row (what a proof reads a few of)
#   bundle    GET /api/v1/audit/bundle of all N leaves, the server's VmRSS sampled every 0.1 s
#             baseline: psql \copy of the same leaf rows (base64, as the bundle has them) to a file
#   verify    capledger verify of that bundle: wall time and peak RSS (/usr/bin/time)
#   backfill  the tiles deleted and the server restarted: its start-up rebuild of every tile
#             baseline: the start-up on the same log with its tiles in place
#
# Environment: CAPLEDGER_BENCH_DATABASE_URL (libpq conninfo of a database from which the script
# may CREATE and DROP a scratch database; default host=/tmp/devpg user=postgres dbname=postgres),
# CAPLEDGER_BIN (default build/capledger), LEAVES (default 1000000), REQUESTS (default 300),
# PORT (default 18933).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
BIN=${CAPLEDGER_BIN:-$ROOT/build/capledger}
GEN=${CAPLEDGER_LOGGEN:-$(dirname "$BIN")/bench_loggen}
BASE=${CAPLEDGER_BENCH_DATABASE_URL:-host=/tmp/devpg user=postgres dbname=postgres}
LEAVES=${LEAVES:-1000000}
REQUESTS=${REQUESTS:-300}
PORT=${PORT:-18933}
DB=capledger_logbench_$$
DBURL=$(printf '%s' "$BASE" | sed "s/dbname=[^ ]*/dbname=$DB/")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/capledger-logbench.XXXXXX")
SERVER_PID=
stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=
}
cleanup() {
  stop_server
  psql -X -q -d "$BASE" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
for tool in curl pgbench psql /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
[ -x "$BIN" ] && [ -x "$GEN" ] || { echo "build first: $BIN and $GEN" >&2; exit 1; }
psql -X -q -d "$BASE" -c "CREATE DATABASE $DB" >/dev/null
q() { psql -X -q -At -d "$DBURL" -c "$1"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# start_server: until /healthz answers; the seconds it took in STARTED_S.
STARTED_S=
start_server() {
  local t0
  t0=$(now)
  CAPLEDGER_DATABASE_URL=$DBURL CAPLEDGER_LISTEN=127.0.0.1:$PORT CAPLEDGER_KEY_FILE=$WORK/key \
    CAPLEDGER_ADMIN_PASSWORD="bench-$(head -c 12 /dev/urandom | base64)" \
    "$BIN" serve >>"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 6000); do
    curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
    kill -0 "$SERVER_PID" 2>/dev/null || { tail -5 "$WORK/server.log" >&2; exit 1; }
    sleep 0.05
  done
  # Ready means the log checked out (readyz fails when the log is inconsistent).
  curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null || { tail -5 "$WORK/server.log" >&2; exit 1; }
  STARTED_S=$(secs "$t0" "$(now)")
}

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$SERVER_PID/status"; }

# ---- build ----
echo "machine: $(nproc) cores; log of $LEAVES leaves"
start_server # migrations, the log head with this key
stop_server
ORIGIN=$(q "SELECT origin FROM log_head")
t0=$(now)
"$GEN" "$LEAVES" "$ORIGIN" "$WORK/key" "$WORK" >/dev/null
gen_s=$(secs "$t0" "$(now)")
t0=$(now)
psql -X -q -v ON_ERROR_STOP=1 -d "$DBURL" <<SQL
SET session_replication_role = replica; -- bulk load: the per-row no-gap trigger is not the point
\copy log_leaf (leaf_index, leaf, leaf_hash) FROM '$WORK/leaves.copy'
\copy log_tile (level, tile_index, hashes) FROM '$WORK/tiles.copy'
\i $WORK/head.sql
SQL
load_s=$(secs "$t0" "$(now)")
q "VACUUM ANALYZE log_leaf" >/dev/null
q "VACUUM ANALYZE log_tile" >/dev/null
rm -f "$WORK/leaves.copy" "$WORK/tiles.copy"
echo "build: bench_loggen $gen_s s, psql \\copy of leaves and tiles $load_s s ($(q "SELECT pg_size_pretty(pg_total_relation_size('log_leaf'))") leaves, $(q "SELECT count(*) FROM log_tile") tiles)"
start_server
start_s=$STARTED_S
TOKEN=$(CAPLEDGER_DATABASE_URL=$DBURL "$BIN" token create admin --label bench 2>/dev/null)
idle_kb=$(rss_kb)
echo "server start on the log (reads every leaf to check it): $start_s s; idle RSS $((idle_kb / 1024)) MB"

# ---- proofs ----
# lat NAME URL...: mean and p99 in ms of sequential requests over one keep-alive connection.
lat() {
  local name=$1
  shift
  local args=() u
  for u in "$@"; do args+=(-o /dev/null "$u"); done # one -o per URL: curl pairs them in order
  curl -s -H "Authorization: Bearer $TOKEN" -w '%{http_code} %{time_total}\n' "${args[@]}" >"$WORK/$name.t"
  if grep -qv '^200 ' "$WORK/$name.t"; then
    echo "$name: a request failed: $(grep -v '^200 ' "$WORK/$name.t" | head -1)" >&2
    exit 1
  fi
  awk '{print $2 * 1000}' "$WORK/$name.t" | sort -n |
    awk '{v[NR] = $1; s += $1} END {i = int(NR * 0.99); if (i < 1) i = 1; printf "%.3f %.3f\n", s / NR, v[i]}'
}
urls() { # urls KIND: REQUESTS URLs at random indexes
  awk -v n="$LEAVES" -v k="$REQUESTS" -v kind="$1" -v port="$PORT" 'BEGIN {
    srand(42);
    for (i = 0; i < k; i++) {
      if (kind == "healthz") print "http://127.0.0.1:" port "/healthz";
      else if (kind == "inclusion") printf "http://127.0.0.1:%s/api/v1/log/proof/inclusion?index=%d&size=%d\n", port, int(rand() * n), n;
      else printf "http://127.0.0.1:%s/api/v1/log/proof/consistency?first=%d&second=%d\n", port, 1 + int(rand() * (n - 1)), n;
    }
  }'
}
mapfile -t H < <(urls healthz)
mapfile -t I < <(urls inclusion)
mapfile -t C < <(urls consistency)
lat warm "${I[@]:0:20}" >/dev/null
read -r h_mean h_p99 < <(lat healthz "${H[@]}")
read -r i_mean i_p99 < <(lat inclusion "${I[@]}")
read -r c_mean c_p99 < <(lat consistency "${C[@]}")
tiles=$(q "SELECT count(*) FROM log_tile WHERE level = 0")
cat >"$WORK/tile.sql" <<SQL
\set t random(0, $((tiles - 1)))
SELECT hashes FROM log_tile WHERE level = 0 AND tile_index = :t;
SQL
pg_ms=$(pgbench -n -c1 -t "$REQUESTS" -f "$WORK/tile.sql" "$DBURL" 2>/dev/null | awk '/latency average/ {print $4}')
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
echo "inclusion proof, $REQUESTS at random indexes: mean $i_mean ms, p99 $i_p99 ms ($(ratio "$i_mean" "$h_mean")x /healthz, $(ratio "$i_mean" "$pg_ms")x pgbench tile read)"
echo "consistency proof, $REQUESTS random first: mean $c_mean ms, p99 $c_p99 ms ($(ratio "$c_mean" "$h_mean")x /healthz, $(ratio "$c_mean" "$pg_ms")x pgbench tile read)"
echo "baselines: /healthz mean $h_mean ms, p99 $h_p99 ms; pgbench one tile row by primary key $pg_ms ms"
t0=$(now)
q "SELECT length(string_agg(leaf_hash, ''::bytea ORDER BY leaf_index)) FROM log_leaf" >/dev/null
echo "for scale: reading every leaf hash once (what each proof did before the tiles) $(secs "$t0" "$(now)") s"

# ---- bundle ----
max_kb=$idle_kb
(
  while kill -0 "$SERVER_PID" 2>/dev/null; do
    rss_kb
    sleep 0.1
  done
) >"$WORK/rss" 2>/dev/null &
SAMPLER=$!
t0=$(now)
code=$(curl -s -H "Authorization: Bearer $TOKEN" -o "$WORK/bundle.json" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/audit/bundle")
bundle_s=$(secs "$t0" "$(now)")
kill "$SAMPLER" 2>/dev/null || true
wait "$SAMPLER" 2>/dev/null || true
[ "$code" = 200 ] || { echo "bundle: HTTP $code" >&2; exit 1; }
max_kb=$(sort -n "$WORK/rss" | tail -1)
bytes=$(stat -c %s "$WORK/bundle.json")
t0=$(now)
q "\\copy (SELECT translate(encode(leaf, 'base64'), E'\\n', '') FROM log_leaf ORDER BY leaf_index) TO '$WORK/raw.txt'"
raw_s=$(secs "$t0" "$(now)")
rm -f "$WORK/raw.txt"
echo "bundle of $LEAVES leaves: $bundle_s s, $((bytes / 1048576)) MB; server RSS idle $((idle_kb / 1024)) MB, peak while streaming $((max_kb / 1024)) MB ($(wc -l <"$WORK/rss") samples)"
echo "baseline: psql \\copy of the same leaf rows as base64 to a file: $raw_s s (bundle/copy = $(ratio "$bundle_s" "$raw_s")x)"

# ---- verify ----
curl -fs -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/v1/log/key" >"$WORK/log.key"
if /usr/bin/time -f '%e %M' -o "$WORK/verify.t" "$BIN" verify "$WORK/bundle.json" --key "$WORK/log.key" >"$WORK/verify.out" 2>&1; then
  read -r v_s v_kb <"$WORK/verify.t"
  echo "capledger verify of that bundle: $v_s s, peak RSS $((v_kb / 1024)) MB: $(tail -1 "$WORK/verify.out")"
else
  echo "capledger verify FAILED: $(tail -3 "$WORK/verify.out")" >&2
  exit 1
fi
rm -f "$WORK/bundle.json"

# ---- backfill ----
stop_server
start_server
with_s=$STARTED_S
stop_server
q "DELETE FROM log_tile" >/dev/null
start_server
rebuild_s=$STARTED_S
grep -q 'log tiles built from the leaves' "$WORK/server.log" || { echo "no rebuild logged" >&2; exit 1; }
read -r i_mean2 _ < <(lat inclusion2 "${I[@]:0:50}")
echo "start-up with the tiles missing (rebuilds all $(q "SELECT count(*) FROM log_tile") tiles): $rebuild_s s; with them: $with_s s; inclusion proofs after it: mean $i_mean2 ms"
