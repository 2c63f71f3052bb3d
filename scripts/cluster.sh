#!/usr/bin/env bash
# A callapi cluster on this machine to try (docs/scale-out.md): PostgreSQL, three `callapi serve` nodes and HAProxy
# with deploy/haproxy.cfg in front of them, all on loopback. Prints where to connect, then runs until Ctrl-C, which
# stops everything and deletes its files.
#
#   scripts/cluster.sh
#
# The proxy listens on wss://localhost:18443 (a self-signed certificate), the nodes on 127.0.0.1:18081-18083
# (CALLAPI_CLUSTER_PROXY_PORT and CALLAPI_CLUSTER_BASE_PORT move them). The nodes run with the public development
# secret: this is for a person to try, not to deploy (deploy/ is).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/services/lib.sh
export PATH="/opt/swift/usr/bin:$PATH"
proxy_port=${CALLAPI_CLUSTER_PROXY_PORT:-18443}
base_port=${CALLAPI_CLUSTER_BASE_PORT:-18081}
bin=.build/debug/callapi
[ -x "$bin" ] || swift build --product callapi >&2

work=$(mktemp -d)
pids=()
pg_pid=""
cleanup() {
    # The nodes and the proxy first (the nodes leave the cluster through the database), then the database.
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [ -z "$pg_pid" ] || kill "$pg_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

read -r pg_port pg_pid pg_user <<<"$(scripts/services/start-postgres.sh "$work/postgres")"
database="postgres://$pg_user@127.0.0.1:$pg_port/callapi"
haproxy=$(scripts/services/install-haproxy.sh)

for i in 1 2 3; do
    port=$((base_port + i - 1))
    "$bin" serve --port "$port" --node-id "node$i" --ledger-database "$database" --data-dir "$work/node$i" \
        --cluster-url "ws://127.0.0.1:$port" --log-level notice >"$work/node$i.log" 2>&1 &
    pids+=("$!")
    wait_for 60 curl -sf "http://127.0.0.1:$port/healthz" ||
        { echo "cluster: node$i did not start:" >&2; tail -20 "$work/node$i.log" >&2; exit 1; }
done

openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj /CN=localhost \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
cat "$work/cert.pem" "$work/key.pem" >"$work/proxy.pem"
CALLAPI_PROXY_BIND="127.0.0.1:$proxy_port" CALLAPI_PROXY_CERT="$work/proxy.pem" \
    CALLAPI_NODE1="127.0.0.1:$base_port" CALLAPI_NODE2="127.0.0.1:$((base_port + 1))" \
    CALLAPI_NODE3="127.0.0.1:$((base_port + 2))" "$haproxy" -db -f deploy/haproxy.cfg >"$work/haproxy.log" 2>&1 &
pids+=("$!")
wait_for 30 curl -skf "https://localhost:$proxy_port/healthz" ||
    { echo "cluster: the proxy did not start:" >&2; tail -20 "$work/haproxy.log" >&2; exit 1; }

cat <<TEXT
cluster up: wss://localhost:$proxy_port (HAProxy, self-signed) in front of
  node1 ws://127.0.0.1:$base_port   node2 ws://127.0.0.1:$((base_port + 1))   node3 ws://127.0.0.1:$((base_port + 2))
  database $database
  logs $work/*.log
try: .build/debug/callapi phone --server ws://127.0.0.1:$base_port,ws://127.0.0.1:$((base_port + 1)) --user 1001 \\
       --token \$(.build/debug/callapi token --user 1001)
     kill a node (kill -9 <pid>): its clients move to the others; Ctrl-C stops everything
TEXT
wait -n || true
echo "cluster: a process ended; stopping" >&2
