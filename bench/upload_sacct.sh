#!/usr/bin/env bash
# bench/upload_sacct.sh — run by hand: how fast a large `sacct --parsable2` upload goes through
# POST /api/v1/runs, and how much memory the server uses meanwhile.
#
# 1. Generates ROWS (default 1,000,000) finished jobs as sacct --parsable2 text (header line,
#    typed and plain gres/gpu, `CANCELLED by N`, a few FAILED/TIMEOUT/OUT_OF_MEMORY).
# 2. Starts `capledger serve` on a scratch database, makes an owner and a token.
# 3. ROUNDS times (default 3), alternating so each sees the same load on a shared machine:
#    a. baseline: `psql \copy` of the same rows (already in COPY text form) into a plain table
#       with a primary key (cluster, external_id) — the issue's baseline;
#    b. second baseline: the same into a table shaped like `run` (LIKE run INCLUDING ALL: its
#       columns, constraints and indexes, not partitioned, no run_key, no rollups);
#    c. the upload through the API into an emptied store (run, run_key, the rollups, the
#       per-upload rollup and the histograms truncated after the previous round, those of them
#       the schema has, so an older CAPLEDGER_BIN can be measured too), sampling the server's VmRSS every 0.1 s.
#    Prints each figure and each round's ratios, then the medians and the API's ratio to each
#    baseline (the median of the rates, and the median of the rounds' own ratios).
# 4. Uploads the file once more: every row is a duplicate (the ON CONFLICT path), timed too.
#
# Environment: CAPLEDGER_BENCH_DATABASE_URL — libpq conninfo of a database from which the
# script may CREATE and DROP a scratch database (default: host=/tmp/devpg user=postgres
# dbname=postgres); CAPLEDGER_BIN (default build/capledger); ROWS; ROUNDS; PORT (default 18931).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
BIN=${CAPLEDGER_BIN:-$ROOT/build/capledger}
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18931}
BASE=${CAPLEDGER_BENCH_DATABASE_URL:-host=/tmp/devpg user=postgres dbname=postgres}
DB=capledger_bench_$$
DBURL="${BASE/dbname=postgres/dbname=$DB}"
case "$DBURL" in *"dbname=$DB"*) ;; *) DBURL="$BASE dbname=$DB" ;; esac
WORK=$(mktemp -d "${TMPDIR:-/tmp}/capledger-bench.XXXXXX")
SERVER_PID=

cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  psql -X -q -d "$BASE" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

[ -x "$BIN" ] || { echo "build first: $BIN not found" >&2; exit 1; }
psql -X -q -d "$BASE" -c "CREATE DATABASE $DB" >/dev/null

echo "generating $ROWS sacct lines (and the same rows as COPY text for the baseline)"
# Times are computed in awk (mawk has no strftime): civil_from_days is H. Hinnant's algorithm.
awk -v rows="$ROWS" -v sacct="$WORK/sacct.txt" -v copy="$WORK/rows.copy" '
function civil(days,   z, era, doe, yoe, y, doy, mp, d, m) {
  z = days + 719468; era = int(z / 146097); doe = z - era * 146097
  yoe = int((doe - int(doe / 1460) + int(doe / 36524) - int(doe / 146096)) / 365)
  y = yoe + era * 400; doy = doe - (365 * yoe + int(yoe / 4) - int(yoe / 100))
  mp = int((5 * doy + 2) / 153); d = doy - int((153 * mp + 2) / 5) + 1
  m = mp < 10 ? mp + 3 : mp - 9
  return sprintf("%04d-%02d-%02d", y + (m <= 2), m, d)
}
function ts(s,   days) { days = int(s / 86400); s -= days * 86400
  return sprintf("%sT%02d:%02d:%02d", civil(days), int(s / 3600), int(s % 3600 / 60), s % 60) }
BEGIN {
  print "JobID|JobIDRaw|User|Account|Partition|State|Submit|Start|End|ExitCode|AllocTRES" > sacct
  base = 1735689600  # 2025-01-01T00:00:00Z
  for (i = 0; i < rows; i++) {
    id = 5000000 + i; sub_s = base + i * 3; start = sub_s + (i % 900); end = start + 60 + (i % 7200)
    k = i % 100
    state = k < 85 ? "COMPLETED" : k < 92 ? "FAILED" : k < 96 ? "CANCELLED by 1234" : k < 99 ? "TIMEOUT" : "OUT_OF_MEMORY"
    norm = state; sub(/ by .*/, "", norm)
    gpus = (i % 4) * 2
    tres = gpus ? "billing=8,cpu=8,gres/gpu:a100=" gpus ",gres/gpu=" gpus ",mem=64G" : "billing=4,cpu=4,mem=16G"
    team = "team" (i % 8); user = "u" (i % 50); part = (i % 3) ? "production" : "exploratory"
    exitc = norm == "COMPLETED" ? "0:0" : "1:0"
    printf "%d|%d|%s|%s|%s|%s|%s|%s|%s|%s|%s\n", id, id, user, team, part, state, ts(sub_s), ts(start), ts(end), exitc, tres > sacct
    printf "bench\t%d\t%s\t%s\t%s\t%sZ\t%sZ\t%sZ\t%d\t%s\t%s\t\\N\t00000000-0000-4000-8000-000000000000\n", id, team, user, part, ts(sub_s), ts(start), ts(end), gpus, norm, exitc > copy
  }
}'
BYTES=$(stat -c %s "$WORK/sacct.txt")
echo "  $(wc -l <"$WORK/sacct.txt") lines, $BYTES bytes"

echo "starting capledger serve on 127.0.0.1:$PORT (database $DB)"
(cd "$ROOT" && CAPLEDGER_DATABASE_URL="$DBURL" CAPLEDGER_LISTEN="127.0.0.1:$PORT" \
  CAPLEDGER_KEY_FILE="$WORK/server.key" CAPLEDGER_ADMIN_PASSWORD="bench-admin-$$-password" \
  exec "$BIN" serve >"$WORK/server.log" 2>&1) &
SERVER_PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat "$WORK/server.log"; exit 1; }
(cd "$ROOT" && printf 'bench-owner-password-%s\n' $$ |
  CAPLEDGER_DATABASE_URL="$DBURL" "$BIN" user add benchowner --role owner >/dev/null)
TOKEN=$(cd "$ROOT" && CAPLEDGER_DATABASE_URL="$DBURL" "$BIN" token create benchowner | tail -1)

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$SERVER_PID/status"; }

# upload LABEL: POST the file, sample RSS, print figures; the reply goes to $WORK/LABEL.json,
# the rows/s to $WORK/LABEL.rate, the peak RSS (KiB) to $WORK/LABEL.peak
upload() {
  local label=$1 t0 t1 pid samples=$WORK/$1.rss
  : >"$samples"
  t0=$(date +%s.%N)
  curl -s -o "$WORK/$label.json" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: text/csv' --data-binary @"$WORK/sacct.txt" \
    "http://127.0.0.1:$PORT/api/v1/runs?cluster=bench" >"$WORK/$label.status" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do rss_kb >>"$samples"; sleep 0.1; done
  wait "$pid"
  t1=$(date +%s.%N)
  local secs status
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
  status=$(cat "$WORK/$label.status")
  [ "$status" = 201 ] || { echo "  $label: HTTP $status — $(head -c 400 "$WORK/$label.json")" >&2; exit 1; }
  echo "  $label: HTTP $status in ${secs}s — $(head -c 160 "$WORK/$label.json")"
  case "$label" in api*) grep -q "\"inserted\":$ROWS," "$WORK/$label.json" || { echo "  $label: not every row was stored" >&2; exit 1; } ;; esac
  awk -v rows="$ROWS" -v secs="$secs" 'BEGIN {printf "%.0f\n", rows / secs}' >"$WORK/$label.rate"
  sort -n "$samples" | tail -1 >"$WORK/$label.peak"
  sort -n "$samples" | awk -v rows="$ROWS" -v secs="$secs" -v label="$label" '
    { v[NR] = $1 } END {
      printf "  %s: %.0f rows/s; server VmRSS during the upload: median %.1f MiB, peak %.1f MiB (%d samples)\n",
        label, rows / secs, v[int((NR + 1) / 2)] / 1024, v[NR] / 1024, NR }'
}

COLS='cluster, external_id, team, "user", workload_class, submitted_at, started_at, ended_at, gpus, state, exit_code, gpu_utilization, upload_id'
# baseline TABLE_DDL LABEL: \copy the rows into a fresh table made by TABLE_DDL (named bench_copy)
baseline() {
  psql -X -q -v ON_ERROR_STOP=1 -d "$DBURL" -c "DROP TABLE IF EXISTS bench_copy" -c "$1" >/dev/null
  local t0 t1
  t0=$(date +%s.%N)
  psql -X -q -v ON_ERROR_STOP=1 -d "$DBURL" -c "\\copy bench_copy ($COLS) FROM '$WORK/rows.copy'"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v rows="$ROWS" 'BEGIN {printf "%.0f\n", rows / (b - a)}' >"$WORK/$2.rate"
  awk -v a="$t0" -v b="$t1" -v rows="$ROWS" -v l="$2" 'BEGIN {printf "  %s: psql \\copy %.2fs, %.0f rows/s\n", l, b - a, rows / (b - a)}'
  psql -X -q -d "$DBURL" -c "DROP TABLE bench_copy" >/dev/null
}
PK_DDL='CREATE TABLE bench_copy (cluster text NOT NULL, external_id text NOT NULL, team text, "user" text, workload_class text, submitted_at timestamptz, started_at timestamptz, ended_at timestamptz, gpus integer, state text, exit_code text, gpu_utilization double precision, upload_id uuid, PRIMARY KEY (cluster, external_id))'
RUN_DDL='CREATE TABLE bench_copy (LIKE run INCLUDING ALL)'

echo "server VmRSS before the uploads: $(awk -v k="$(rss_kb)" 'BEGIN {printf "%.1f", k / 1024}') MiB"
for r in $(seq "$ROUNDS"); do
  echo "round $r of $ROUNDS:"
  baseline "$PK_DDL" "pk$r"
  baseline "$RUN_DDL" "runlike$r"
  # (a DO block: psql's \gexec in a -c of its own ran nothing, so rounds 2 and up used to
  # re-upload into a full store — every row a duplicate)
  [ "$r" = 1 ] || psql -X -q -v ON_ERROR_STOP=1 -d "$DBURL" -c "DO \$\$ BEGIN EXECUTE (SELECT 'TRUNCATE ' || string_agg(quote_ident(tablename), ', ') FROM pg_tables WHERE schemaname = 'public' AND tablename IN ('run', 'run_key', 'run_usage_day', 'run_usage_month', 'run_qw_hist', 'run_qw_hist_all', 'run_usage_upload')); END \$\$" -c "VACUUM ANALYZE run_key" >/dev/null
  [ "$(psql -X -qtA -d "$DBURL" -c 'SELECT count(*) FROM run_key')" = 0 ] || { echo "the store was not emptied" >&2; exit 1; }
  upload "api$r"
  awk -v a="$(cat "$WORK/api$r.rate")" -v p="$(cat "$WORK/pk$r.rate")" -v l="$(cat "$WORK/runlike$r.rate")" \
    'BEGIN {printf "%.3f %.3f\n", a / p, a / l}' >"$WORK/ratio$r"
  echo "  round $r ratios: API / primary-key table $(cut -d' ' -f1 "$WORK/ratio$r"), API / run-shaped table $(cut -d' ' -f2 "$WORK/ratio$r")"
done
echo "upload again (the same file: every row a duplicate):"
upload again
echo "server VmRSS after: $(awk -v k="$(rss_kb)" 'BEGIN {printf "%.1f", k / 1024}') MiB"
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
PK=$(cat "$WORK"/pk*.rate | median)
RL=$(cat "$WORK"/runlike*.rate | median)
API=$(cat "$WORK"/api*.rate | median)
PEAK=$(cat "$WORK"/api*.peak "$WORK/again.peak" | sort -n | tail -1)
awk -v pk="$PK" -v rl="$RL" -v api="$API" -v n="$ROUNDS" -v rows="$ROWS" -v peak="$PEAK" 'BEGIN {
  printf "median of %d rounds, %d rows: API %d rows/s; psql \\copy into a table with a primary key %d rows/s (ratio %.2f); into a table shaped like run %d rows/s (ratio %.2f); server VmRSS peak %.1f MiB\n",
    n, rows, api, pk, api / pk, rl, api / rl, peak / 1024 }'
echo "median of the rounds' own ratios (each round's API run against its own baselines): primary-key table $(cut -d' ' -f1 "$WORK"/ratio* | median), run-shaped table $(cut -d' ' -f2 "$WORK"/ratio* | median)"
echo "stored by the API: $(psql -X -qtA -d "$DBURL" -c 'SELECT count(*) FROM run')"
