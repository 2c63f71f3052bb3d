#!/usr/bin/env bash
# The relayed body's coding cost (decode a `send`, encode the `message`), release build of the protocol module
# alone: seconds to build, no server. Usage: scripts/bench-frame-coding.sh [--instructions]
# --instructions: instructions per call of each measurement instead of times (callgrind, two runs of 2,000 and
# 4,000 calls; stable where the times are noisy). FRAME_BENCH_ONLY=TEXT runs the measurements naming TEXT.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# CallAPIWire (the JSON reader and writer) is a module of its own, as in the package: built first, then imported.
swiftc -O -wmo -package-name callapi -parse-as-library -module-name CallAPIWire -emit-module \
    -emit-module-path "$out/CallAPIWire.swiftmodule" -emit-library -static -o "$out/libCallAPIWire.a" \
    $(find Sources/CallAPIWire -name '*.swift')
swiftc -O -wmo -package-name callapi -module-name CallAPISignalProtocol -I "$out" -L "$out" -lCallAPIWire \
    $(find Sources/CallAPISignalProtocol -name '*.swift') scripts/microbench/frame-coding/main.swift \
    -o "$out/frame-coding-bench"
if [[ "${1:-}" != --instructions ]]; then
    "$out/frame-coding-bench"
    exit 0
fi
names=$(FRAME_BENCH_COUNT=1 "$out/frame-coding-bench" | grep -v '^send frame' | cut -c1-60 | sed 's/ *$//')
while IFS= read -r name; do
    for count in 2000 4000; do
        FRAME_BENCH_ONLY="$name" FRAME_BENCH_COUNT=$count valgrind --tool=callgrind \
            --callgrind-out-file="$out/cg.$count" "$out/frame-coding-bench" >/dev/null 2>&1
    done
    short=$(awk '/^(summary|totals):/ { print $2; exit }' "$out/cg.2000")
    long=$(awk '/^(summary|totals):/ { print $2; exit }' "$out/cg.4000")
    printf '%-62s %9d instructions\n' "$name" $(((long - short) / 2000))
done <<<"$names"
