#!/bin/sh
# The hot standby of `docker compose --profile scale`: on first start a base backup of the
# primary with -R (standby.signal and primary_conninfo written for us), then PostgreSQL in hot
# standby. Runs as the postgres user of the official postgres image.
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until pg_basebackup -h "$PRIMARY_HOST" -U "$POSTGRES_USER" -D "$PGDATA" -R -X stream -c fast; do
    echo "standby: waiting for the primary" >&2
    sleep 2
  done
  chmod 0700 "$PGDATA"
fi
exec postgres -c hot_standby=on -c hot_standby_feedback=on
