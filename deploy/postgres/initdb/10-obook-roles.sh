#!/bin/sh
# Run by the postgres image at the first start of an empty data directory (docker-entrypoint-initdb.d):
# creates obook's owner and application roles and its database (deploy/postgres/roles.sql).
set -eu
: "${OBOOK_DB_OWNER_PASSWORD:?}" "${OBOOK_DB_PASSWORD:?}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v owner=obook_owner -v owner_password="$OBOOK_DB_OWNER_PASSWORD" \
  -v app=obook_app -v app_password="$OBOOK_DB_PASSWORD" -v database=obook \
  -f /obook/roles.sql
