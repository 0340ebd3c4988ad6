# shellcheck shell=bash disable=SC2034 # (PG_* results are read by the scripts that source this)
# scripts/lib.sh — shared by scripts/run and scripts/test; sourced, never executed.
#
# Every step is idempotent and cheap when there is nothing to do: packages are checked with
# dpkg-query before apt is touched, cmake rebuilds only what changed, an existing PostgreSQL
# cluster is reused. Messages go to stderr ("==> step", "    detail"); the only thing written
# to stdout is pg_start's conninfo, so `conninfo=$(pg_start DIR)` also works.

CAPLEDGER_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
PG_BIN=/usr/lib/postgresql/15/bin

# A message that cannot be written (the reader is gone) must not abort the step it describes.
log() { printf '==> %s\n' "$*" >&2 || true; }
note() { printf '    %s\n' "$*" >&2 || true; }
die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

# What building and running needs, then what only the tests need. docker-compose is optional:
# it serves one check (`docker-compose config -q`) and is skipped where apt does not have it.
BASE_PACKAGES=(build-essential cmake pkg-config libcivetweb-dev libpq-dev libjansson-dev
  libsodium-dev libcmocka-dev libcurl4-openssl-dev zlib1g-dev postgresql postgresql-contrib
  ca-certificates libjs-chart.js)
TEST_PACKAGES=(chromium clang-format curl jq haproxy) # haproxy: tests/scale (deploy/scale/haproxy.cfg)
OPTIONAL_TEST_PACKAGES=(docker-compose)
DEMO_PACKAGES=(curl jq) # scripts/run --demo: scripts/demo talks to the API with them

package_installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

# ensure_packages [test|demo] — apt-get install whatever is missing; a ready machine pays one
# dpkg-query per package and never runs apt-get.
ensure_packages() {
  command -v dpkg-query >/dev/null ||
    die "these scripts install their dependencies with apt: they need Debian bookworm (or a derivative)"
  local wanted=("${BASE_PACKAGES[@]}") optional=() missing=() missing_optional=() p
  if [ "${1:-}" = test ]; then
    wanted+=("${TEST_PACKAGES[@]}")
    optional+=("${OPTIONAL_TEST_PACKAGES[@]}")
  fi
  if [ "${1:-}" = demo ]; then
    wanted+=("${DEMO_PACKAGES[@]}")
  fi
  for p in "${wanted[@]}"; do package_installed "$p" || missing+=("$p"); done
  for p in "${optional[@]}"; do package_installed "$p" || missing_optional+=("$p"); done
  if [ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ]; then
    log "packages: all $((${#wanted[@]} + ${#optional[@]})) Debian packages already installed"
    return 0
  fi

  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null ||
      die "missing Debian packages: ${missing[*]} ${missing_optional[*]} — run this as root, or install them with apt-get first"
    sudo=(sudo)
  fi
  local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y -o DPkg::Lock::Timeout=300)
  log "packages: missing ${missing[*]} ${missing_optional[*]} — apt-get update"
  "${apt[@]}" update >/dev/null || die "apt-get update failed"
  for p in "${missing_optional[@]}"; do
    if apt-cache show --no-all-versions "$p" >/dev/null 2>&1; then
      missing+=("$p")
    else
      note "$p is not available from apt here: skipping it (its check will be skipped)"
    fi
  done
  log "packages: apt-get install --no-install-recommends ${missing[*]}"
  "${apt[@]}" install --no-install-recommends "${missing[@]}" || die "apt-get install failed"
}

# require_node — the tests' tooling (node:test, playwright-core, @redocly/cli) needs Node 20.19+;
# Debian bookworm's own nodejs is 18, so the node already on PATH is used and never apt's.
require_node() {
  local need="Node.js >= 20.19 on PATH (Debian bookworm's nodejs package is 18, too old; install Node 20 or newer, e.g. from nodejs.org, and put it first on PATH)"
  command -v node >/dev/null || die "the tests need $need: no node found"
  local version major minor
  version=$(node --version) || die "'node --version' failed; the tests need $need"
  version=${version#v}
  major=${version%%.*}
  minor=${version#*.}
  minor=${minor%%.*}
  if ! [[ $major =~ ^[0-9]+$ && $minor =~ ^[0-9]+$ ]] || ((major < 20 || (major == 20 && minor < 19))); then
    die "node on PATH is v$version; the tests need $need"
  fi
  command -v npm >/dev/null || die "npm not found next to node v$version"
  log "node: v$version ($(command -v node))"
}

# build [release|asan] [TARGET...] — configure and build into build/ (release: RelWithDebInfo,
# the default), or build-asan/ with AddressSanitizer + UBSan; all targets unless some are named.
build() {
  local dir=build flags=() what="RelWithDebInfo" targets=()
  case "${1:-}" in
    asan)
      dir=build-asan
      flags=(-DCAPLEDGER_SANITIZE=ON)
      what="RelWithDebInfo, ASan+UBSan"
      shift
      ;;
    release) shift ;;
  esac
  if [ $# -gt 0 ]; then targets=(--target "$@"); fi
  log "build: $dir/ ($what)${1:+, target $*}"
  cmake -S "$CAPLEDGER_ROOT" -B "$CAPLEDGER_ROOT/$dir" --log-level=WARNING \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "${flags[@]}" || die "cmake configure of $dir/ failed"
  cmake --build "$CAPLEDGER_ROOT/$dir" -j "$(nproc)" "${targets[@]}" || die "build of $dir/ failed"
}

# --- private PostgreSQL 15 cluster ---------------------------------------------------------
#
# initdb refuses to run as root, so as root the cluster belongs to the `postgres` system user
# that Debian's package creates; as anyone else it belongs to that user. The server listens on
# a Unix socket only (listen_addresses=''), trust authentication is allowed on that socket and
# nowhere else, and the socket directory is 0700 so only the cluster's owner (and root) can
# connect at all.
#
# Layout of a cluster "DIR": DIR/data (PGDATA), DIR/socket, DIR/postgres.log. Two cases move
# parts of it, and pg_start says so when they do:
#  - the postgres user cannot reach DIR (a parent such as /root is not traversable): the
#    cluster lives in /var/lib/capledger/pg-<hash of DIR> instead, and DIR/relocated links to it;
#  - the socket path would be too long for sockaddr_un (107 bytes): the socket goes to
#    /tmp/capledger-<hash of DIR>.

pg_os_user() {
  if [ "$(id -u)" = 0 ]; then echo postgres; else id -un; fi
}

# Run a command as the cluster's owner, from / (initdb and pg_ctl fail when they cannot read
# the caller's working directory, e.g. a project under /root).
as_pg_user() {
  if [ "$(id -u)" = 0 ]; then
    (cd / && runuser -u postgres -- "$@")
  else
    (cd / && "$@")
  fi
}

# libpq conninfo values: quote only when needed (spaces, quotes, backslashes, empty).
pg_conninfo_value() {
  local v=$1
  if [[ -z $v || $v =~ [[:space:]\'\\] ]]; then
    v=${v//\\/\\\\}
    v=${v//\'/\\\'}
    printf "'%s'" "$v"
  else
    printf '%s' "$v"
  fi
}

# _pg_layout DIR (absolute, existing) — sets PG_BASE, PG_DATA, PG_SOCKET, PG_LOG, PG_RELOCATED.
_pg_layout() {
  local dir=$1 hash
  hash=$(printf '%s' "$dir" | sha256sum | cut -c1-12)
  PG_BASE=$dir
  PG_RELOCATED=
  if [ -L "$dir/relocated" ]; then
    PG_BASE=$(readlink "$dir/relocated")
    PG_RELOCATED=1
  elif ! as_pg_user test -x "$dir" -a -w "$dir" 2>/dev/null; then
    PG_BASE=/var/lib/capledger/pg-$hash
    PG_RELOCATED=1
  fi
  PG_DATA=$PG_BASE/data
  PG_LOG=$PG_BASE/postgres.log
  PG_SOCKET=$PG_BASE/socket
  # ".s.PGSQL.5432" and its slash take 14 of the 107 usable bytes.
  if ((${#PG_SOCKET} > 90)); then PG_SOCKET=/tmp/capledger-$hash; fi
}

# Make a directory that the cluster's owner owns and only it can enter.
_pg_owned_dir() {
  mkdir -p "$1"
  if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$1"; fi
  chmod 0700 "$1"
}

_pg_running() {
  [ -f "$PG_DATA/postmaster.pid" ] && as_pg_user "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1
}

# pg_start DIR [throwaway] — create (first time) and start the cluster, create database
# `capledger`, set PG_CONNINFO and print it. "throwaway" turns durability off (fsync,
# synchronous_commit, full_page_writes): only for clusters deleted after the run. Sets
# PG_STARTED=1 when this call started the server (it was not already running).
pg_start() {
  local throwaway=${2:-} user dir
  [ -x "$PG_BIN/initdb" ] || die "PostgreSQL 15 server binaries not found in $PG_BIN (Debian package postgresql-15)"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || die "user 'postgres' does not exist (the postgresql-common package creates it)"
  fi
  user=$(pg_os_user)
  mkdir -p "$1"
  dir=$(cd "$1" && pwd -P)
  _pg_owned_dir "$dir"
  _pg_layout "$dir"
  if [ -n "$PG_RELOCATED" ]; then
    note "the '$user' user cannot traverse every parent of $dir:"
    note "the cluster lives in $PG_BASE (linked from $dir/relocated)"
    install -d -m 0755 "$(dirname "$PG_BASE")"
    _pg_owned_dir "$PG_BASE"
    ln -sfn "$PG_BASE" "$dir/relocated"
  fi
  if [ "$PG_SOCKET" != "$PG_BASE/socket" ]; then
    note "the socket path under $PG_BASE would be too long for a Unix socket: using $PG_SOCKET"
  fi
  _pg_owned_dir "$PG_SOCKET"

  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    log "postgres: initdb $PG_DATA (owner: $user)"
    local sync=()
    [ -n "$throwaway" ] && sync=(--no-sync)
    as_pg_user "$PG_BIN/initdb" -D "$PG_DATA" --encoding=UTF8 --locale=C.UTF-8 \
      --auth-local=trust --auth-host=reject "${sync[@]}" >"$PG_BASE/initdb.log" 2>&1 || {
      cat "$PG_BASE/initdb.log" >&2
      die "initdb failed (log above, also in $PG_BASE/initdb.log)"
    }
    printf '\n# Settings owned by capledger scripts/lib.sh (rewritten at every pg_start).\ninclude_if_exists %s\n' \
      "'capledger.conf'" >>"$PG_DATA/postgresql.conf"
  fi
  local version
  version=$(cat "$PG_DATA/PG_VERSION")
  [ "$version" = 15 ] || die "$PG_DATA holds a PostgreSQL $version cluster; these scripts run PostgreSQL 15"

  {
    echo "# Written by scripts/lib.sh pg_start on every start: edit that script, not this file."
    echo "listen_addresses = ''"
    echo "unix_socket_directories = '${PG_SOCKET//\'/\'\'}'"
    echo "unix_socket_permissions = 0700"
    if [ -n "$throwaway" ]; then
      echo "# Throwaway test cluster: durability is not wanted, speed is."
      echo "fsync = off"
      echo "synchronous_commit = off"
      echo "full_page_writes = off"
      echo "# Parallel test files each start servers with their own pools (16 connections each)."
      echo "max_connections = 300"
    fi
  } >"$PG_DATA/capledger.conf"
  if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$PG_DATA/capledger.conf"; fi

  PG_STARTED=
  if _pg_running; then
    log "postgres: already running ($PG_DATA)"
  else
    log "postgres: starting ($PG_DATA, socket in $PG_SOCKET, no TCP port)"
    # setsid: a Ctrl-C in the terminal must reach scripts/run, which stops the server first and
    # PostgreSQL after it; it must not hit the postmaster directly.
    as_pg_user setsid "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 start >/dev/null || {
      tail -n 20 "$PG_LOG" >&2
      die "PostgreSQL did not start (log: $PG_LOG)"
    }
    PG_STARTED=1
  fi

  PG_CONNINFO="host=$(pg_conninfo_value "$PG_SOCKET") dbname=capledger user=$(pg_conninfo_value "$user")"
  local admin exists
  admin="host=$(pg_conninfo_value "$PG_SOCKET") dbname=postgres user=$(pg_conninfo_value "$user")"
  exists=$("$PG_BIN/psql" -X -q -t -A -v ON_ERROR_STOP=1 -d "$admin" \
    -c "SELECT 1 FROM pg_database WHERE datname = 'capledger'") || die "cannot connect to PostgreSQL at $PG_SOCKET"
  if [ "$exists" != 1 ]; then
    log "postgres: creating database capledger"
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$admin" -c "CREATE DATABASE capledger" ||
      die "CREATE DATABASE capledger failed"
  fi
  echo "$PG_CONNINFO"
}

# pg_stop DIR — fast shutdown (open sessions are ended, data is kept) if the cluster runs.
pg_stop() {
  [ -d "$1" ] || return 0
  local dir
  dir=$(cd "$1" && pwd -P)
  _pg_layout "$dir"
  if _pg_running; then
    log "postgres: stopping ($PG_DATA)"
    as_pg_user "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 60 stop >/dev/null ||
      note "pg_ctl stop failed (log: $PG_LOG)"
  fi
}

# pg_destroy DIR — stop the cluster and delete it, wherever its parts were put.
pg_destroy() {
  [ -d "$1" ] || return 0
  local dir
  dir=$(cd "$1" && pwd -P)
  pg_stop "$dir"
  _pg_layout "$dir"
  if [ "$PG_SOCKET" != "$PG_BASE/socket" ]; then rm -rf "$PG_SOCKET"; fi
  if [ -n "$PG_RELOCATED" ]; then rm -rf "$PG_BASE"; fi
  rm -rf "$dir"
}
