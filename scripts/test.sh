#!/usr/bin/env bash
# The project's test command: every test suite (unit, end-to-end over real sockets, CLI, a real browser), and the
# JavaScript client's own tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
# The JavaScript client (Web/callapi): its machine and helpers under Node's test runner.
if command -v node >/dev/null; then
    node --test Tests/Web/
else
    echo "test.sh: node is not installed: the JavaScript client's tests (Tests/Web) did not run" \
        "(scripts/services/install-node.sh installs it)" >&2
fi
# One test at a time: the real-media tests encode and decode video in real time, and on a small machine tests
# running beside them starve them past their waits (the whole suite takes about a minute either way).
swift test --no-parallel "$@"
