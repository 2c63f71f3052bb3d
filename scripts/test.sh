#!/usr/bin/env bash
# The project's test command: every test suite (unit, end-to-end over real sockets, CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
# One test at a time: the real-media tests encode and decode video in real time, and on a small machine tests
# running beside them starve them past their waits (the whole suite takes about a minute either way).
swift test --no-parallel "$@"
