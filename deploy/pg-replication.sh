#!/bin/sh
# Run once by the postgres image at the primary's first start (docker-entrypoint-initdb.d):
# lets the streaming replica (postgres-replica in docker-compose.yml) connect for replication.
set -e
echo "host replication all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
