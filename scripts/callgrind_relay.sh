#!/usr/bin/env bash
# Instructions per relayed message, counted by callgrind: stable on a shared, noisy machine where wall-clock
# figures move by 2–3× between runs.
#
#   scripts/callgrind_relay.sh BENCH_BINARY ours|mosquitto
#
# The server (ours: `callapi-bench serve`; Mosquitto) runs under `valgrind --tool=callgrind` in its own process,
# and `callapi-bench relay` sends through it twice, in two fresh server processes: a short run and a long one at
# the same rate, with the same pairs, logins and warm-up. The difference in the server's instructions divided by
# the difference in messages is what one relayed message costs (sender's frame in, its acknowledgement, the
# receiver's frame out, and for MQTT the receiver's PUBACK), with start-up, logins and warm-up cancelled out.
# Prints a markdown table and a JSON line.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/services/lib.sh
bin=$1
peer=$2
pairs=${CALLGRIND_PAIRS:-10}
rate=${CALLGRIND_RATE:-200}
short=${CALLGRIND_SHORT_SECONDS:-5}
long=${CALLGRIND_LONG_SECONDS:-15}
# Ours runs on as many event loops as in scripts/bench.sh's wall-clock runs (one unless BENCH_EVENT_LOOPS says
# otherwise), so that the count describes the server those runs measured.
event_loops=${BENCH_EVENT_LOOPS:-1}
command -v valgrind >/dev/null || { echo "callgrind_relay: valgrind not installed" >&2; exit 1; }

work=$(mktemp -d)
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# Starts the server under callgrind, writing its counts to $1; sets server_pid and client_args.
start_server() {
    local out=$1 port
    port=$(free_port)
    case "$peer" in
    ours)
        local secret
        secret=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
        # valgrind 3.19 cannot read the DWARF 5 the Swift toolchain writes, so ours runs from a copy without
        # debug information (the instructions are the same).
        [ -x "$work/server-stripped" ] || strip --strip-debug -o "$work/server-stripped" "$bin"
        valgrind --tool=callgrind --callgrind-out-file="$out" "$work/server-stripped" serve --port "$port" --secret "$secret" \
            --rate 10000000 --burst 100000 --event-loops "$event_loops" --log-level error >"$work/server.log" 2>&1 &
        server_pid=$!
        wait_for 120 python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/healthz', timeout=5)" ||
            { valgrind_gave_up; echo "callgrind_relay: the server did not start" >&2; exit 1; }
        client_args=(--peer ours --peer-url "ws://127.0.0.1:$port" --peer-secret "$secret")
        ;;
    mosquitto)
        local mosquitto
        mosquitto=$(scripts/services/install-mosquitto.sh)
        printf '%s\n' "listener $port 127.0.0.1" "allow_anonymous true" "max_inflight_messages 0" \
            "max_queued_messages 0" "persistence false" "set_tcp_nodelay true" \
            "user root" >"$work/mosquitto.conf"
        valgrind --tool=callgrind --callgrind-out-file="$out" "$mosquitto" -c "$work/mosquitto.conf" \
            >"$work/server.log" 2>&1 &
        server_pid=$!
        wait_for 120 python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 5)" ||
            { valgrind_gave_up; echo "callgrind_relay: the broker did not start" >&2; exit 1; }
        client_args=(--peer mosquitto --peer-url "mqtt://127.0.0.1:$port")
        ;;
    *)
        echo "usage: scripts/callgrind_relay.sh BENCH_BINARY ours|mosquitto" >&2
        exit 2
        ;;
    esac
}

# valgrind itself gave up on the server: say so and exit 3, which scripts/bench.sh reports as "not measured" rather
# than as a failed run. (It did on ours until `callapi-bench` stopped using Swift's async entry point, whose
# `dispatch_main()` valgrind cannot run: see Benchmarks/Sources/callapi-bench/main.swift.)
valgrind_gave_up() {
    local why
    why=$(grep -m1 -E "VALGRIND INTERNAL ERROR|I can't recover|the 'impossible' happened" "$work/server.log" 2>/dev/null) ||
        return 1
    echo "callgrind_relay: valgrind could not run the $peer server: ${why#*-- }" >&2
    exit 3
}

# One run: server under callgrind, relay at $rate for $1 seconds, server stopped; prints "INSTRUCTIONS DELIVERED".
measure() {
    local seconds=$1 out="$work/callgrind.$1" delivered
    start_server "$out"
    if ! timeout 600 "$bin" relay --pairs "$pairs" --rates "$rate" --seconds "$seconds" --no-saturation \
        "${client_args[@]}" >"$work/relay.$seconds" 2>"$work/relay.$seconds.log"; then
        valgrind_gave_up
        echo "callgrind_relay: the relay run failed: $(tail -1 "$work/relay.$seconds.log")" >&2
        exit 1
    fi
    delivered=$(python3 -c "import json,sys
for line in open(sys.argv[1]):
    if line.startswith('{'): print(sum(step['delivered'] for step in json.loads(line)['steps']))" "$work/relay.$seconds")
    # SIGTERM, not SIGINT: a non-interactive shell starts background jobs with SIGINT ignored, and our server keeps
    # the default actions. valgrind writes the counts out when the signal ends the process.
    kill -TERM "$server_pid"
    timeout 120 tail --pid="$server_pid" -f /dev/null || kill -9 "$server_pid"
    server_pid=""
    local instructions
    instructions=$(awk '/^(summary|totals):/ { print $2; exit }' "$out")
    [ -n "$instructions" ] || { valgrind_gave_up; echo "callgrind_relay: callgrind wrote no counts" >&2; exit 1; }
    echo "$instructions $delivered"
}

result=$(measure "$short") || exit $?
read -r short_instructions short_delivered <<<"$result"
result=$(measure "$long") || exit $?
read -r long_instructions long_delivered <<<"$result"
messages=$((long_delivered - short_delivered))
[ "$messages" -gt 0 ] || { echo "callgrind_relay: the long run delivered no more than the short one" >&2; exit 1; }
per_message=$(((long_instructions - short_instructions) / messages))

title=$([ "$peer" = ours ] && echo "our server" || echo "Mosquitto (MQTT 3.1.1, QoS 1)")
echo "### Instructions per relayed message, $title (callgrind, scripts/callgrind_relay.sh)"
[ "$peer" = ours ] && echo && echo "Our server on $event_loops event loop(s), as in the wall-clock runs."
echo
echo "| run | messages delivered | server instructions |"
echo "| --- | --- | --- |"
echo "| ${short} s at $rate msg/s, $pairs pairs | $short_delivered | $short_instructions |"
echo "| ${long} s at $rate msg/s, $pairs pairs | $long_delivered | $long_instructions |"
echo "| difference | $messages | $((long_instructions - short_instructions)) ($per_message per message) |"
echo
printf '{"bench":"relay-instructions","peer":"%s","pairs":%d,"rate":%d,"messages":%d,"instructionsPerMessage":%d}\n' \
    "$peer" "$pairs" "$rate" "$messages" "$per_message"
