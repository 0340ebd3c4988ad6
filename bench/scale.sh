#!/usr/bin/env bash
# bench/scale.sh — run by hand: throughput of 1 and 2 `capledger serve` instances behind
# HAProxy (deploy/scale/haproxy.cfg) on a PostgreSQL primary with a hot standby
# (pg_basebackup -R), all on this machine, loopback only. Baseline in the same run: the same
# server's GET /healthz, straight to instance 1. wrk (Debian package `wrk`) drives HTTP with
# keep-alive; the token-authenticated GET rotates over 16 tokens so HAProxy's per-token
# affinity spreads it over both instances.
#
# Environment: CAPLEDGER_BIN (default build/capledger), SECONDS_EACH (default 10), CLIENTS
# (default 32), CAPLEDGER_DB_POOL (per instance, default 16). Needs haproxy, wrk, PostgreSQL 15
# server binaries (as root, the clusters belong to the postgres user) and node.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
for tool in wrk haproxy node; do
  command -v "$tool" >/dev/null || { echo "install $tool (apt-get install -y $tool; node 20+)" >&2; exit 1; }
done
export CAPLEDGER_BIN=${CAPLEDGER_BIN:-$ROOT/build/capledger}
[ -x "$CAPLEDGER_BIN" ] || { echo "build first: $CAPLEDGER_BIN not found" >&2; exit 1; }
cd "$ROOT"
exec node bench/scale.mjs
