#!/usr/bin/env bash
# Installs Debian's postgresql if it is missing and prints the folder of its server binaries (initdb, postgres).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
bin=$(find_bin)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "services: installing postgresql (apt-get)" >&2
    apt_install postgresql
    bin=$(find_bin)
fi
[ -n "$bin" ] && [ -x "$bin/initdb" ] || { echo "services: postgresql could not be installed" >&2; exit 1; }
echo "$bin"
