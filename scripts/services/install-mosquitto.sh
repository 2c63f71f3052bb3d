#!/usr/bin/env bash
# Installs Debian's mosquitto if it is missing and prints the broker's path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$(command -v mosquitto || echo /usr/sbin/mosquitto)
if [ ! -x "$bin" ]; then
    echo "services: installing mosquitto (apt-get)" >&2
    apt_install mosquitto
    bin=$(command -v mosquitto || echo /usr/sbin/mosquitto)
fi
[ -x "$bin" ] || { echo "services: mosquitto could not be installed" >&2; exit 1; }
echo "$bin"
