#!/usr/bin/env bash
# The relayed body's coding cost (decode a `send`, encode the `message`), release build of the protocol module
# alone: seconds to build, no server. Usage: scripts/bench-frame-coding.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
swiftc -O -wmo -package-name callapi -module-name CallAPISignalProtocol $(find Sources/CallAPISignalProtocol -name '*.swift') \
    scripts/microbench/frame-coding/main.swift -o "$out/frame-coding-bench"
"$out/frame-coding-bench"
