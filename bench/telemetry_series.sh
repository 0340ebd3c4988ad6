#!/usr/bin/env bash
# bench/telemetry_series.sh — run by hand: how long GET /api/v1/benchmarks/{id}/telemetry/series
# (the duty-cycle chart's data: SAMPLES samples downsampled to 300 points, idle stretches found)
# takes through the real server, against a baseline measured in the same run: `psql \copy` of
# the same benchmark's raw samples (ts, gpu, duty_cycle) to /dev/null — what a client that
# plotted the raw samples would at least have to read out.
#
# 1. Starts `capledger serve` on a scratch database; makes a team, an owner, a workload, an
#    offer and a benchmark through the API.
# 2. Writes SAMPLES (default 1,000,000) samples for it straight into telemetry_sample: 8 GPUs at
#    1 s, idle (1 %) for 10 minutes in every 70, busy (50–90 %) otherwise.
# 3. Times RUNS (default 5) GET …/telemetry/series and RUNS \copy baselines, interleaved, and
#    prints the medians and their ratio.
#
# Environment: CAPLEDGER_BENCH_DATABASE_URL — libpq conninfo of a database from which the
# script may CREATE and DROP a scratch database (default: host=/tmp/devpg user=postgres
# dbname=postgres); CAPLEDGER_BIN (default build/capledger); SAMPLES; RUNS; PORT (default 18932).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
BIN=${CAPLEDGER_BIN:-$ROOT/build/capledger}
SAMPLES=${SAMPLES:-1000000}
RUNS=${RUNS:-5}
PORT=${PORT:-18932}
BASE=${CAPLEDGER_BENCH_DATABASE_URL:-host=/tmp/devpg user=postgres dbname=postgres}
DB=capledger_bench_series_$$
DBURL="${BASE/dbname=postgres/dbname=$DB}"
case "$DBURL" in *"dbname=$DB"*) ;; *) DBURL="$BASE dbname=$DB" ;; esac
WORK=$(mktemp -d "${TMPDIR:-/tmp}/capledger-bench.XXXXXX")
SERVER_PID=
URL="http://127.0.0.1:$PORT/api/v1"

cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  psql -X -q -d "$BASE" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

[ -x "$BIN" ] || { echo "build first: $BIN not found" >&2; exit 1; }
psql -X -q -d "$BASE" -c "CREATE DATABASE $DB" >/dev/null

echo "starting capledger serve on 127.0.0.1:$PORT (database $DB)"
(cd "$ROOT" && CAPLEDGER_DATABASE_URL="$DBURL" CAPLEDGER_LISTEN="127.0.0.1:$PORT" \
  CAPLEDGER_KEY_FILE="$WORK/server.key" CAPLEDGER_ADMIN_PASSWORD="bench-admin-$$-password" \
  exec "$BIN" serve >"$WORK/server.log" 2>&1) &
SERVER_PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat "$WORK/server.log"; exit 1; }
(cd "$ROOT" && CAPLEDGER_DATABASE_URL="$DBURL" "$BIN" team add bench >/dev/null)
(cd "$ROOT" && printf 'bench-owner-password-%s\n' $$ |
  CAPLEDGER_DATABASE_URL="$DBURL" "$BIN" user add benchowner --role owner >/dev/null)
TOKEN=$(cd "$ROOT" && CAPLEDGER_DATABASE_URL="$DBURL" "$BIN" token create benchowner | tail -1)
post() { curl -sf -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d "$2" "$URL$1"; }
W=$(post /workloads '{"team":"bench","name":"bench-wl","kind":"training","class":"production"}' | jq -r .id)
O=$(post /offers '{"provider":"lambda","region":"us-east-1","instance_type":"gpu_8x_h100_sxm5","gpu_model":"H100-80GB","gpus_per_instance":8,"gpu_memory_gb":80,"purchase_option":"on_demand","price_per_hour":23.92,"currency":"USD"}' | jq -r .id)
B=$(post /benchmarks "{\"workload_id\":\"$W\",\"offer_id\":\"$O\",\"measured_at\":\"2025-01-01T00:00:00Z\",\"throughput_units_per_s\":100}" | jq -r .id)

echo "writing $SAMPLES samples for benchmark $B"
psql -X -q -d "$DBURL" -c "INSERT INTO telemetry_sample (upload_id, benchmark_id, ts, gpu, duty_cycle)
  SELECT gen_random_uuid(), '$B', timestamptz '2025-01-01' + (i / 8) * interval '1 second', (i % 8)::text,
         CASE WHEN (i / 8 / 600) % 7 = 3 THEN 0.01 ELSE 0.5 + 0.4 * random() END
  FROM generate_series(0, $SAMPLES - 1) i; ANALYZE telemetry_sample"

now() { date +%s.%N; }
series=() copy=()
for _ in $(seq "$RUNS"); do
  t0=$(now)
  curl -sf -H "Authorization: Bearer $TOKEN" "$URL/benchmarks/$B/telemetry/series" >"$WORK/series.json"
  t1=$(now)
  psql -X -q -d "$DBURL" -c "\\copy (SELECT ts, gpu, duty_cycle FROM telemetry_sample WHERE benchmark_id = '$B') TO '/dev/null'"
  t2=$(now)
  series+=("$(echo "$t1 - $t0" | bc)") copy+=("$(echo "$t2 - $t1" | bc)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ms=$(median "${series[@]}") mc=$(median "${copy[@]}")
echo "response: $(jq '.points | length' "$WORK/series.json") points, $(jq '.idle_stretches_total' "$WORK/series.json") idle stretches, $(stat -c %s "$WORK/series.json") bytes"
awk -v s="$ms" -v c="$mc" -v n="$SAMPLES" -v r="$RUNS" 'BEGIN {
  printf "GET …/telemetry/series over %d samples: median %.3f s (%d runs)\n", n, s, r
  printf "baseline psql \\copy of the same raw samples: median %.3f s\n", c
  printf "ratio series / baseline: %.2f\n", s / c }'
