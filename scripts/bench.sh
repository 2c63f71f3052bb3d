#!/usr/bin/env bash
# Builds callapi in release and runs the benchmark suite against our server on loopback, then writes
# bench/results.md (the tables, the machine, and each bench's JSON line). Every run is bounded: the whole suite
# takes a few minutes and stops by itself.
#
#   scripts/bench.sh                      # everything, default sizes
#   BENCH_CONNECTIONS=20000 scripts/bench.sh
#   BENCH_SCRATCH=.build scripts/bench.sh # reuse another build directory
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=${BENCH_SCRATCH:-.build-bench}
connections=${BENCH_CONNECTIONS:-10000}
relay_pairs=${BENCH_RELAY_PAIRS:-50}
call_pairs=${BENCH_CALL_PAIRS:-100}
out=bench/results.md

echo "bench: building callapi (release, scratch path $scratch)" >&2
swift build -c release --scratch-path "$scratch" --product callapi >&2
bin="$scratch/release/callapi"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME SECONDS ARGS...: one bench, bounded by `timeout`; its table and JSON line land in $work/NAME.
run() {
    local name=$1 limit=$2
    shift 2
    echo "bench: $name" >&2
    if ! timeout --kill-after=10 "$limit" "$bin" bench "$@" >"$work/$name" 2>"$work/$name.log"; then
        echo "bench: $name failed or timed out; see below" >&2
        tail -5 "$work/$name.log" >&2 || true
        printf '### %s\n\nDid not finish within %s s.\n' "$name" "$limit" >"$work/$name"
    fi
}

run relay 240 relay --pairs "$relay_pairs" --rates 1000,10000,50000 --seconds 3
run calls 120 calls --pairs "$call_pairs" --seconds 10
run connections 240 connections --count "$connections"
run machine 120 machine --calls 200000

cores=$(nproc)
memory=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)
toolchain=$(swift --version 2>&1 | head -1)
load=$(cut -d' ' -f1-3 /proc/loadavg)

mkdir -p bench
{
    echo "# callapi benchmark results"
    echo
    echo "- When: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "- Machine: $cores cores ($cpu), $memory, $(uname -sr); load average before the tables: $load"
    echo "- Build: release (\`swift build -c release\`), $toolchain"
    echo "- Everything on 127.0.0.1; the relay and call benches run server and clients in one process."
    echo
    for name in relay calls connections machine; do
        grep -v '^{' "$work/$name" || true
        echo
    done
    echo "## JSON lines"
    echo
    echo '```'
    for name in relay calls connections machine; do grep '^{' "$work/$name" || true; done
    echo '```'
} >"$out"
echo "bench: wrote $out" >&2
