#!/usr/bin/env bash
# Starts Synapse on a free loopback port in the background and prints `PORT PID SECRET` once it answers
# (SECRET: its registration_shared_secret).
#
#   scripts/services/start-synapse.sh DIR
#
# DIR holds its configuration, SQLite database and log. No federation listener, rate limits raised far above
# any test or bench load, cheap password hashing (benches register hundreds of users). The caller stops it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
dir=$1
python=$("$(dirname "$0")/install-synapse.sh")
mkdir -p "$dir/media"
port=$(free_port)
secret=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
high='{per_second: 1000000, burst_count: 1000000}'
cat >"$dir/homeserver.yaml" <<CONF
server_name: "bench.localhost"
pid_file: $dir/homeserver.pid
listeners:
  - port: $port
    bind_addresses: ['127.0.0.1']
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: $dir/homeserver.db
log_config: $dir/log.yaml
media_store_path: $dir/media
signing_key_path: $dir/signing.key
registration_shared_secret: "$secret"
macaroon_secret_key: "$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
form_secret: "$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
report_stats: false
trusted_key_servers: []
suppress_key_server_warning: true
enable_metrics: false
bcrypt_rounds: 4
presence:
  enabled: false
rc_message: $high
rc_registration: $high
rc_registration_token_validity: $high
rc_login:
  address: $high
  account: $high
  failed_attempts: $high
rc_admin_redaction: $high
rc_joins:
  local: $high
  remote: $high
rc_joins_per_room: $high
rc_3pid_validation: $high
rc_invites:
  per_room: $high
  per_user: $high
  per_issuer: $high
rc_key_requests: $high
rc_presence:
  per_user: $high
rc_delayed_event_mgmt: $high
rc_reports: $high
rc_room_creation: $high
rc_media_create: $high
CONF
cat >"$dir/log.yaml" <<CONF
version: 1
formatters:
  precise:
    format: '%(asctime)s %(name)s %(levelname)s %(message)s'
handlers:
  file:
    class: logging.FileHandler
    formatter: precise
    filename: $dir/homeserver.log
root:
  level: WARNING
  handlers: [file]
disable_existing_loggers: false
CONF
"$python" -m synapse.app.homeserver -c "$dir/homeserver.yaml" --generate-keys >"$dir/keys.out" 2>&1
"$python" -m synapse.app.homeserver -c "$dir/homeserver.yaml" >"$dir/out" 2>&1 </dev/null &
pid=$!
if ! wait_for 90 python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/_matrix/client/versions', timeout=2)"; then
    kill "$pid" 2>/dev/null || true
    echo "services: synapse did not start; $(tail -3 "$dir/out" 2>/dev/null)" >&2
    exit 1
fi
echo "$port $pid $secret"
