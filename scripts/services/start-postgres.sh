#!/usr/bin/env bash
# Starts a throwaway PostgreSQL on a free loopback port in the background and prints `PORT PID USER` once it
# accepts connections.
#
#   scripts/services/start-postgres.sh DIR
#   POSTGRES_PORT=PORT scripts/services/start-postgres.sh DIR   # again, after it was stopped: a restart
#
# DIR holds the cluster (initdb), its socket and log. Trust authentication, loopback only, no fsync (a test
# database); with POSTGRES_DURABLE=1, PostgreSQL's own defaults (fsync, synchronous commits: what benchmarks
# measure). As root, the cluster belongs to the `postgres` user (initdb refuses root). The database `callapi`
# exists; connect as USER: postgres://USER@127.0.0.1:PORT/callapi. The caller stops it (kill PID, or
# scripts/services/stop-postgres.sh DIR, a fast shutdown that does not wait for clients to leave).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
dir=$1
bin=$("$(dirname "$0")/install-postgres.sh")
mkdir -p "$dir"
run_as=()
user=$(id -un)
if [ "$(id -u)" = 0 ]; then
    user=postgres
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres "$dir"
    # The postgres user must be able to reach DIR: let it traverse (not list) the folders above it.
    up=$(dirname "$(realpath "$dir")")
    while [ "$up" != / ]; do
        [ -O "$up" ] && chmod o+x "$up"
        up=$(dirname "$up")
    done
    run_as=(runuser -u postgres --)
fi
# POSTGRES_PORT: the port (a restart of a DIR started before gives its port again; its data is kept).
port=${POSTGRES_PORT:-$(free_port)}
restart=false
[ -f "$dir/data/PG_VERSION" ] && restart=true
$restart || "${run_as[@]}" "$bin/initdb" -D "$dir/data" -U "$user" -A trust --no-sync >"$dir/initdb.log" 2>&1 ||
    { echo "services: initdb failed; $(tail -3 "$dir/initdb.log")" >&2; exit 1; }
fast=(-c fsync=off -c synchronous_commit=off -c full_page_writes=off)
[ "${POSTGRES_DURABLE:-0}" = 1 ] && fast=()
detached "${run_as[@]}" "$bin/postgres" -D "$dir/data" -p "$port" -k "$dir" -c listen_addresses=127.0.0.1 \
    "${fast[@]}" >"$dir/postgres.log" 2>&1 </dev/null
pid=$!
if ! wait_for 20 "$bin/pg_isready" -h 127.0.0.1 -p "$port" -U "$user"; then
    kill "$pid" 2>/dev/null || true
    echo "services: postgres did not start; $(tail -3 "$dir/postgres.log")" >&2
    exit 1
fi
$restart || "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$user" callapi
echo "$port $pid $user"
