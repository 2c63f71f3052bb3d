#!/usr/bin/env bash
# Makes sure Node.js is there for the JavaScript client's tests (node --test Tests/Web; Debian's nodejs will do) and
# prints the path of node.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
if ! command -v node >/dev/null; then
    echo "services: installing nodejs (apt-get)" >&2
    DEBIAN_FRONTEND=noninteractive apt_install nodejs
fi
command -v node || { echo "services: node could not be installed" >&2; exit 1; }
