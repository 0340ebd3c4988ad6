#!/bin/sh
# Runs once, when the postgres image creates its cluster (docker-entrypoint-initdb.d): lets the
# hot standby of `docker compose --profile scale` stream WAL, as the database's own user (a
# superuser in the official image), with the same password as every other connection.
set -e
echo "host replication ${POSTGRES_USER} all scram-sha-256" >>"$PGDATA/pg_hba.conf"
