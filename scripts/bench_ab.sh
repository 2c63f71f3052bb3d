#!/usr/bin/env bash
# A/B of two builds of callapi-bench, side by side in one run: each build's server (`callapi-bench serve`, its own
# process) driven by that build's clients, and (reference) Mosquitto driven by OLD's, in turn, ROUNDS times, so
# both builds see the same machine load. Prints the medians.
#   scripts/bench_ab.sh OLD_BENCH_BINARY NEW_BENCH_BINARY [ROUNDS] [OUTDIR]
set -u
old=$1 new=$2 rounds=${3:-3} out=${4:-$(mktemp -d)}
mkdir -p "$out"
cd "$(dirname "$0")/.."
. scripts/services/lib.sh
secret=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
pids=()
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
serve() { # serve BINARY NAME: starts it on a free port, kept in NAME_port
    local port
    port=$(free_port)
    "$1" serve --port "$port" --secret "$secret" --rate 10000000 --burst 100000 --max-sessions 1000 \
        ${AB_EVENT_LOOPS:+--event-loops "$AB_EVENT_LOOPS"} --log-level error >"$out/serve-$2.out" 2>&1 &
    pids+=($!)
    printf -v "$2_port" '%s' "$port"
}
serve "$old" old
serve "$new" new
peers=(old new)
if info=$(scripts/services/start-mosquitto.sh "$out/mosquitto"); then
    read -r mqtt_port mqtt_pid <<<"$info"
    pids+=("$mqtt_pid")
    peers+=(mosquitto)
fi
for port in "$old_port" "$new_port"; do
    wait_for 10 python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/healthz', timeout=2)"
done
for round in $(seq 1 "$rounds"); do
    for peer in "${peers[@]}"; do
        case $peer in
            old) bin=$old args=(--peer ours --peer-url "ws://127.0.0.1:$old_port" --peer-secret "$secret") ;;
            new) bin=$new args=(--peer ours --peer-url "ws://127.0.0.1:$new_port" --peer-secret "$secret") ;;
            mosquitto) bin=$old args=(--peer mosquitto --peer-url "mqtt://127.0.0.1:$mqtt_port") ;;
        esac
        echo "bench_ab: round $round, $peer" >&2
        timeout 120 "$bin" relay --pairs 50 --rates 1000,10000 --seconds 3 --no-saturation "${args[@]}" \
            >"$out/relay-$peer-$round" 2>"$out/relay-$peer-$round.log"
        timeout 60 "$bin" calls --pairs 100 --seconds 8 "${args[@]}" >"$out/calls-$peer-$round" 2>"$out/calls-$peer-$round.log"
    done
done
python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
def last_json(path):
    try:
        return json.loads(open(path).read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return None
rows = {}
for path in sorted(glob.glob(os.path.join(out, "relay-*-[0-9]*"))):
    if path.endswith(".log"): continue
    peer = os.path.basename(path)[len("relay-"):].rsplit("-", 1)[0]
    report = last_json(path)
    for step in (report or {}).get("steps", []):
        rows.setdefault((f"relay {int(step['offeredRate'])} msg/s one-way p50 µs", peer), []).append(step["oneWay"]["p50"])
for path in sorted(glob.glob(os.path.join(out, "calls-*-[0-9]*"))):
    if path.endswith(".log"): continue
    peer = os.path.basename(path)[len("calls-"):].rsplit("-", 1)[0]
    report = last_json(path)
    if report:
        rows.setdefault(("calls/s (100 pairs)", peer), []).append(report["callsPerSecond"])
print(f"results in {out}")
for (figure, peer), values in sorted(rows.items()):
    print(f"{figure:40} {peer:10} median {statistics.median(values):>10.0f}  runs {', '.join(f'{v:.0f}' for v in values)}")
PY
