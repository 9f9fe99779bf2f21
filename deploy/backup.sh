#!/bin/sh
# obook's scheduled backups (compose's `backup` service; tests/store/test_backup_restore.py runs it too).
#   backup.sh        a dump now, then one every OBOOK_BACKUP_INTERVAL seconds (default 86400)
#   backup.sh once   one dump, then exit
# Each dump is `pg_dump -Fc` (one consistent snapshot, even while a build writes) of the database that
# libpq's environment names (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE: the read-only backup
# role), written to OBOOK_BACKUP_DIR (default /backups) as obook-<database>-<UTC time>.dump under a
# temporary name first, so that a dump cut short is never taken for a whole one. The newest
# OBOOK_BACKUP_KEEP (default 7) are kept. Restore: README, "Backups and restore".
set -eu

dir=${OBOOK_BACKUP_DIR:-/backups}
keep=${OBOOK_BACKUP_KEEP:-7}
interval=${OBOOK_BACKUP_INTERVAL:-86400}
database=${PGDATABASE:?set PGDATABASE (and PGHOST, PGUSER, PGPASSWORD) to the database to back up}
case "$keep" in ''|*[!0-9]*|0) echo "backup.sh: OBOOK_BACKUP_KEEP must be a whole number above 0, not '$keep'" >&2; exit 2;; esac
case "$interval" in ''|*[!0-9]*|0) echo "backup.sh: OBOOK_BACKUP_INTERVAL must be whole seconds above 0, not '$interval'" >&2; exit 2;; esac

dump_once() {
    stamp=$(date -u +%Y%m%dT%H%M%SZ)
    final="$dir/obook-$database-$stamp.dump"
    partial="$dir/.obook-$database-$stamp.dump.partial"
    umask 077
    mkdir -p "$dir"
    rm -f "$dir"/.obook-"$database"-*.dump.partial  # a dump cut short by a stop
    if ! pg_dump -Fc --file "$partial"; then
        rm -f "$partial"
        echo "backup.sh: pg_dump of $database failed; the older dumps are kept" >&2
        return 1
    fi
    mv "$partial" "$final"
    echo "backup.sh: $final ($(wc -c < "$final") bytes)"
    # the newest $keep dumps stay (the names sort by time)
    ls -1 "$dir" | grep "^obook-$database-[0-9TZ]*\.dump\$" | sort -r | tail -n +"$((keep + 1))" | while read -r old; do
        rm -f "$dir/$old" && echo "backup.sh: removed $dir/$old"
    done
}

# a stop (compose sends SIGTERM to this script, PID 1 of its container) ends it at once
partial= sleeper=
trap 'rm -f "$partial"; [ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null; exit 143' TERM INT

if [ "${1:-}" = once ]; then
    dump_once
    exit
fi
while :; do
    dump_once || true  # a failed dump (the server restarting) is retried at the next interval
    sleep "$interval" &
    sleeper=$!
    wait "$sleeper"
    sleeper=
done
