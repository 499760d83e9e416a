#!/usr/bin/env bash
# Starts a disposable PostgreSQL cluster on a free loopback port and prints shell exports for it:
#   eval "$(scripts/throwaway_postgres.sh start)"; ...; scripts/throwaway_postgres.sh stop "$PG_DIR"
# PG_EXTRA_OPTIONS adds server options (e.g. "-c wal_level=logical" for change data capture).
# initdb refuses to run as root, so as root the cluster runs as the 'postgres' user.
set -euo pipefail
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[[ -n "$PG_BIN" ]] || PG_BIN=$(dirname "$(command -v initdb)")

as_owner() {
  if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
  start)
    dir=$(mktemp -d /tmp/streamhub-pg.XXXXXX)
    [[ $(id -u) == 0 ]] && chown postgres: "$dir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_owner "$PG_BIN/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null
    # Durability settings are off: this cluster lives for one test run only.
    as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o \
      "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off ${PG_EXTRA_OPTIONS:-}" \
      start >/dev/null
    as_owner "$PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U postgres streamhub
    echo "export PG_DIR=$dir"
    echo "export DATABASE_URL=postgres://postgres@127.0.0.1:$port/streamhub"
    ;;
  stop)
    dir=${2:?usage: stop PG_DIR}
    as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start | stop PG_DIR" >&2
    exit 2
    ;;
esac
