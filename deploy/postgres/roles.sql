-- obook's PostgreSQL roles (issue 19, item 9). Run once by a superuser with psql variables:
--   psql -v ON_ERROR_STOP=1 -v owner=obook_owner -v owner_password=... -v app=obook_app \
--        -v app_password=... -v database=obook -f roles.sql
-- * owner: owns the database and its schema; only `obook db upgrade` (migrations) logs in as it.
-- * app: what workers, the driver, `obook build` and the service log in as. It reads and writes rows
--   and nothing else: no DDL, no superuser powers (COPY ... TO PROGRAM, reading server files),
--   no other database.
CREATE ROLE :"owner" LOGIN PASSWORD :'owner_password' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION;
CREATE ROLE :"app" LOGIN PASSWORD :'app_password' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION;
CREATE DATABASE :"database" OWNER :"owner";
REVOKE ALL ON DATABASE :"database" FROM PUBLIC;
GRANT CONNECT ON DATABASE :"database" TO :"app";
\connect :"database"
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO :"app";
-- tables and sequences the migrations create later (as the owner) are open to the app for rows only
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO :"app";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO :"app";
