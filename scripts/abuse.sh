#!/usr/bin/env bash
# The abuse run: `callapi serve` in its own process while 100 honest pairs place calls through it and attackers
# flood, read slowly, slowloris, spam held messages and send oversized frames.
#
#   scripts/abuse.sh [SECONDS]     (default 600; not run by CI, see .ci/run)
#
# Loopback only; it stops by itself. It prints honest calls completed and failed, the server's peak RSS and the
# bystander's login+ping latency p50/p99 (also left in .build/abuse-report.txt), and fails if an honest call fails
# or the peak RSS passes the stated bound (AbuseRunTests.rssBoundMiB). CALLAPI_ABUSE_PAIRS changes the number of
# honest pairs (default 100).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds="${1:-600}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: scripts/abuse.sh [SECONDS]" >&2; exit 2; }
swift build --build-tests
# The server under attack is a release build, as users run it; the honest clients and attackers run in the test.
swift build -c release --product callapi
CALLAPI_ABUSE_SERVER="$(swift build -c release --show-bin-path)/callapi" CALLAPI_ABUSE_SECONDS="$seconds" \
    swift test --skip-build --filter AbuseRunTests
cat .build/abuse-report.txt
