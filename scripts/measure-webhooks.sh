#!/usr/bin/env bash
# Measures the durable call webhooks in real time (docs/webhooks.md): calls over real sockets on a real server, a
# real HTTP receiver down for OUTAGE seconds (default 120) with a server restart in the middle, then prints how
# long after the receiver came back every event had arrived. Usage: scripts/measure-webhooks.sh [OUTAGE]
set -euo pipefail
cd "$(dirname "$0")/.."
export CALLAPI_MEASURE_WEBHOOK_OUTAGE="${1:-120}"
swift build --build-tests
swift test --skip-build --filter CallWebhookOutageMeasurement 2>&1 | grep -E "call webhooks, real time|passed|failed|error"
