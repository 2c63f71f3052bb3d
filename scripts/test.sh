#!/usr/bin/env bash
# The project's test command: every test suite (unit, end-to-end over real sockets, CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
swift test "$@"
