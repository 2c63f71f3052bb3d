#!/usr/bin/env bash
# Installs Debian's haproxy if it is missing and prints its path (the proxy of deploy/haproxy.cfg).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$(command -v haproxy || echo /usr/sbin/haproxy)
if [ ! -x "$bin" ]; then
    echo "services: installing haproxy (apt-get)" >&2
    apt_install haproxy
    bin=$(command -v haproxy || echo /usr/sbin/haproxy)
fi
[ -x "$bin" ] || { echo "services: haproxy could not be installed" >&2; exit 1; }
echo "$bin"
