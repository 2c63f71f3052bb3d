#!/usr/bin/env bash
# Installs Debian's Chromium if it is missing and prints the path of the browser binary. The browser tests
# (Tests/CallAPIServerTests/Browser) start it headless inside the network namespaces they make and drive it over the
# DevTools protocol through a pipe; nothing is downloaded at test time.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=/usr/lib/chromium/chromium
if [ ! -x "$bin" ]; then
    echo "services: installing chromium (apt-get)" >&2
    DEBIAN_FRONTEND=noninteractive apt_install chromium
fi
[ -x "$bin" ] || { echo "services: chromium could not be installed" >&2; exit 1; }
echo "$bin"
