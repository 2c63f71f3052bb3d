#!/usr/bin/env bash
# Installs Debian's coturn if it is missing and prints the path of its turnserver. Tests start their own, inside the
# network namespaces they make (Tests/CallAPIServerTests/Relay); the package's own service stays disabled
# (/etc/default/coturn), so nothing else listens.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$(command -v turnserver || echo /usr/bin/turnserver)
if [ ! -x "$bin" ]; then
    echo "services: installing coturn (apt-get)" >&2
    DEBIAN_FRONTEND=noninteractive apt_install coturn
    bin=$(command -v turnserver || echo /usr/bin/turnserver)
fi
[ -x "$bin" ] || { echo "services: coturn could not be installed" >&2; exit 1; }
echo "$bin"
