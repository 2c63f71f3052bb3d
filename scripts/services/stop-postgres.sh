#!/usr/bin/env bash
# Stops the PostgreSQL that scripts/services/start-postgres.sh started in DIR, at once (pg_ctl's fast shutdown:
# connected clients are disconnected, nothing committed is lost), and returns once it has stopped.
#
#   scripts/services/stop-postgres.sh DIR
set -euo pipefail
dir=$1
bin=$("$(dirname "$0")/install-postgres.sh")
run_as=()
[ "$(id -u)" = 0 ] && run_as=(runuser -u postgres --)
"${run_as[@]}" "$bin/pg_ctl" -D "$dir/data" stop -m fast -w >/dev/null
