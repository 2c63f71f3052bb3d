#!/usr/bin/env bash
# Starts Mosquitto on a free loopback port in the background and prints `PORT PID` once it accepts connections.
#
#   scripts/services/start-mosquitto.sh DIR [extra configuration lines...]
#
# DIR holds its configuration and log. Anonymous clients, unlimited in-flight and queued QoS 1 messages, no
# persistence. The caller stops it (kill PID).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
dir=$1
shift
bin=$("$(dirname "$0")/install-mosquitto.sh")
mkdir -p "$dir"
port=$(free_port)
{
    echo "listener $port 127.0.0.1"
    echo "allow_anonymous true"
    echo "max_inflight_messages 0"
    echo "max_queued_messages 0"
    echo "persistence false"
    echo "set_tcp_nodelay true"
    echo "log_dest file $dir/mosquitto.log"
    echo "log_type error"
    echo "log_type warning"
    for line in "$@"; do echo "$line"; done
} >"$dir/mosquitto.conf"
"$bin" -c "$dir/mosquitto.conf" >"$dir/mosquitto.out" 2>&1 </dev/null &
pid=$!
if ! wait_for 10 python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)"; then
    kill "$pid" 2>/dev/null || true
    echo "services: mosquitto did not start; $(tail -3 "$dir/mosquitto.out" "$dir/mosquitto.log" 2>/dev/null)" >&2
    exit 1
fi
echo "$port $pid"
