#!/usr/bin/env bash
# bench/usage_report.sh — run by hand: how long GET /api/v1/reports/usage takes over RUNS runs
# (default 10,000,000), against baselines measured in the same run.
#
# 1. Starts `capledger serve` on a scratch database (it migrates: runs partitioned by month),
#    makes an owner and a token, two offers and four clusters whose maps price two of their
#    three partitions (the third is classed but unpriced, so "runs with no price" is not empty).
# 2. Generates RUNS runs over 24 months (20 teams, 4 clusters, 3 partitions, every state, 3 %
#    never started, lognormal-ish queue waits and durations, 20 % without a utilization) and
#    loads them with `psql \copy` straight into the partitioned `run` (and their keys into
#    run_key, and the daily rollup rebuilt from them: what an upload would have written).
# 3. Times, each REPEAT times (median reported): the server's GET /healthz; `SELECT count(*)
#    FROM run` in psql; and the usage report over HTTP — all runs by team and class, all runs by
#    cluster and state, one month by team (from/to on whole days), one team for 90 days with
#    from/to at odd times (the rollup's edges read from run).
# 4. Prints each report's time and its ratio to the psql count(*), and the server's VmRSS.
#
# Environment: CAPLEDGER_BENCH_DATABASE_URL — libpq conninfo of a database from which the
# script may CREATE and DROP a scratch database (default: host=/tmp/devpg user=postgres
# dbname=postgres); CAPLEDGER_BIN (default build/capledger); RUNS; REPEAT (default 5); PORT
# (default 18932); KEEP=1 keeps the scratch database (its name is printed).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
BIN=${CAPLEDGER_BIN:-$ROOT/build/capledger}
RUNS=${RUNS:-10000000}
REPEAT=${REPEAT:-5}
PORT=${PORT:-18932}
BASE=${CAPLEDGER_BENCH_DATABASE_URL:-host=/tmp/devpg user=postgres dbname=postgres}
DB=capledger_usage_$$
DBURL="${BASE/dbname=postgres/dbname=$DB}"
case "$DBURL" in *"dbname=$DB"*) ;; *) DBURL="$BASE dbname=$DB" ;; esac
WORK=$(mktemp -d "${TMPDIR:-/tmp}/capledger-bench.XXXXXX")
SERVER_PID=
CL=http://127.0.0.1:$PORT

cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  if [ "${KEEP:-0}" = 1 ]; then echo "kept database $DB"; else
    psql -X -q -d "$BASE" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

[ -x "$BIN" ] || { echo "build first: $BIN not found" >&2; exit 1; }
psql -X -q -d "$BASE" -c "CREATE DATABASE $DB" >/dev/null

echo "starting capledger serve on 127.0.0.1:$PORT (database $DB)"
(cd "$ROOT" && CAPLEDGER_DATABASE_URL="$DBURL" CAPLEDGER_LISTEN="127.0.0.1:$PORT" \
  CAPLEDGER_KEY_FILE="$WORK/server.key" CAPLEDGER_ADMIN_PASSWORD="bench-admin-$$-password" \
  CAPLEDGER_DRIFT_SWEEP_S=0 exec "$BIN" serve >"$WORK/server.log" 2>&1) &
SERVER_PID=$!
for _ in $(seq 100); do curl -sf "$CL/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "$CL/healthz" >/dev/null || { cat "$WORK/server.log"; exit 1; }
(cd "$ROOT" && printf 'bench-owner-password-%s\n' $$ |
  CAPLEDGER_DATABASE_URL="$DBURL" "$BIN" user add benchowner --role owner >/dev/null)
TOKEN=$(cd "$ROOT" && CAPLEDGER_DATABASE_URL="$DBURL" "$BIN" token create benchowner | tail -1)
rss_mib() { awk '/^VmRSS:/ {printf "%.1f", $2 / 1024}' "/proc/$SERVER_PID/status"; }
RSS_IDLE=$(rss_mib)

call() { # call METHOD PATH [JSON]
  curl -sf -X "$1" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    ${3:+--data "$3"} "$CL/api/v1$2"
}
offer() { # offer GPU_MODEL PRICE → id
  call POST /offers "{\"provider\":\"bench\",\"region\":\"r1\",\"instance_type\":\"$1-x8\",\"gpu_model\":\"$1\",\"gpus_per_instance\":8,\"gpu_memory_gb\":80,\"purchase_option\":\"on_demand\",\"price_per_hour\":$2,\"currency\":\"USD\"}" |
    sed 's/.*"id": *"\([^"]*\)".*/\1/'
}
H100=$(offer H100-80GB 98.32)
A100=$(offer A100-80GB 14.32)
for c in c0 c1 c2 c3; do
  call PUT "/clusters/$c" "{\"default_class\":\"exploratory\",\"partitions\":[{\"partition\":\"gpu-h100\",\"workload_class\":\"production\",\"offer_id\":\"$H100\"},{\"partition\":\"gpu-a100\",\"gpu_model\":\"a100\",\"workload_class\":\"exploratory\",\"offer_id\":\"$A100\"},{\"partition\":\"debug\",\"workload_class\":\"exploratory\"}]}" >/dev/null
done

echo "generating and loading $RUNS runs (psql \\copy into run, then run_key and the rollup)"
# the 24 months' partitions first (as the server makes them), so the rows go straight to them
psql -X -q -v ON_ERROR_STOP=1 -d "$DBURL" -c "SELECT count(*) FILTER (WHERE capledger_partition_month('run', 'submitted_at', m::date)) FROM generate_series(date '2025-01-01', date '2026-12-01', interval '1 month') m" >/dev/null
t0=$(date +%s.%N)
# Times are computed in awk (mawk has no strftime): civil_from_days is H. Hinnant's algorithm.
awk -v rows="$RUNS" '
function civil(days,   z, era, doe, yoe, y, doy, mp, d, m) {
  z = days + 719468; era = int(z / 146097); doe = z - era * 146097
  yoe = int((doe - int(doe / 1460) + int(doe / 36524) - int(doe / 146096)) / 365)
  y = yoe + era * 400; doy = doe - (365 * yoe + int(yoe / 4) - int(yoe / 100))
  mp = int((5 * doy + 2) / 153); d = doy - int((153 * mp + 2) / 5) + 1
  m = mp < 10 ? mp + 3 : mp - 9
  return sprintf("%04d-%02d-%02d", y + (m <= 2), m, d)
}
function ts(s,   days) { days = int(s / 86400); s -= days * 86400
  return sprintf("%sT%02d:%02d:%02dZ", civil(days), int(s / 3600), int(s % 3600 / 60), s % 60) }
BEGIN {
  srand(42)
  base = 1735689600; span = 730 * 86400  # 2025-01-01T00:00:00Z, two years
  split("COMPLETED FAILED CANCELLED TIMEOUT PREEMPTED NODE_FAIL OUT_OF_MEMORY", st, " ")
  for (i = 0; i < rows; i++) {
    sub_s = base + int(i * (span / rows))
    r = rand(); part = r < 0.4 ? "gpu-h100" : r < 0.8 ? "gpu-a100" : "debug"
    model = part == "gpu-h100" ? "h100" : part == "gpu-a100" ? "a100" : "\\N"
    klass = rand() < 0.05 ? "\\N" : part == "gpu-h100" ? "production" : "exploratory"
    r = rand(); s = r < 0.80 ? 1 : r < 0.88 ? 2 : r < 0.93 ? 3 : r < 0.96 ? 4 : r < 0.98 ? 5 : r < 0.99 ? 6 : 7
    g = rand(); gpus = g < 0.05 ? 0 : g < 0.35 ? 1 : g < 0.6 ? 2 : g < 0.85 ? 4 : 8
    qw = int(exp(rand() * 11)) - 1; dur = int(exp(rand() * 11))
    started = rand() < 0.03 ? "" : ts(sub_s + qw)
    end_s = started == "" ? sub_s + qw : sub_s + qw + dur
    util = rand() < 0.2 ? "\\N" : sprintf("%.3f", rand())
    printf "c%d\tj%d\tteam%02d\tu%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t00000000-0000-4000-8000-000000000000\n",
      i % 4, i, int(rand() * 20), int(rand() * 200), klass, part, model, ts(sub_s),
      started == "" ? "\\N" : started, ts(end_s), gpus, st[s], s == 1 ? "0:0" : "1:0", util
  }
}' | psql -X -q -v ON_ERROR_STOP=1 -d "$DBURL" -c "\\copy run (cluster, external_id, team, \"user\", workload_class, partition, gpu_model, submitted_at, started_at, ended_at, gpus, state, exit_code, gpu_utilization, upload_id) FROM STDIN"
t1=$(date +%s.%N)
psql -X -q -v ON_ERROR_STOP=1 -d "$DBURL" <<'SQL'
INSERT INTO run_key (cluster, external_id) SELECT cluster, external_id FROM run;
-- the rollups, as the uploads would have kept them
SELECT capledger_usage_rollup_rebuild() AS rollup_rows \gset
VACUUM ANALYZE;
SQL
t2=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$RUNS" 'BEGIN {
  printf "  \\copy of %d runs: %.1f s (%.0f rows/s); keys, rollup and VACUUM ANALYZE: %.1f s\n", n, b - a, n / (b - a), c - b }'
echo "  partitions: $(psql -X -qtA -d "$DBURL" -c "SELECT count(*) FROM pg_inherits WHERE inhparent = 'run'::regclass")"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# timed LABEL COMMAND…: runs it REPEAT times, prints the median in ms, keeps it in $MS
timed() {
  local label=$1; shift
  for _ in $(seq "$REPEAT"); do
    local a b; a=$(date +%s%N); "$@" >"$WORK/out" || { echo "$label failed" >&2; cat "$WORK/out" >&2; exit 1; }
    b=$(date +%s%N); echo $(((b - a) / 1000)); done | median >"$WORK/ms"
  MS=$(awk '{printf "%.1f", $1 / 1000}' "$WORK/ms")
}
report() { curl -sf -o "$WORK/report.json" -H "Authorization: Bearer $TOKEN" "$CL/api/v1/reports/usage?$1"; }

timed healthz curl -sf -o /dev/null "$CL/healthz"; HEALTHZ=$MS
timed count psql -X -qtA -d "$DBURL" -c 'SELECT count(*) FROM run'; COUNT=$MS
echo "baselines (median of $REPEAT): GET /healthz $HEALTHZ ms; psql SELECT count(*) FROM run $COUNT ms ($(cat "$WORK/out" | tr -d ' \n') runs)"
RSS_PEAK=$RSS_IDLE
for q in "group_by=team,workload_class" "group_by=cluster,state" \
         "group_by=team&from=2026-03-01T00:00:00Z&to=2026-04-01T00:00:00Z" \
         "team=team07&from=2025-10-03T13:17:00Z&to=2026-01-01T05:00:00.5Z"; do
  timed "$q" report "$q"
  RSS_PEAK=$(awk -v a="$RSS_PEAK" -v b="$(rss_mib)" 'BEGIN {print (b > a ? b : a)}')
  runs=$(jq '[.groups[].runs] | add' "$WORK/report.json")
  awk -v q="$q" -v ms="$MS" -v c="$COUNT" -v h="$HEALTHZ" -v runs="$runs" -v g="$(jq '.groups | length' "$WORK/report.json")" 'BEGIN {
    printf "usage report ?%s: %s ms (%d groups, %d runs) — %.2f× psql count(*), %.0f× /healthz\n", q, ms, g, runs, ms / c, ms / h }'
done
echo "server VmRSS: idle $RSS_IDLE MiB, after the reports $(rss_mib) MiB (peak sampled $RSS_PEAK MiB)"
