#!/usr/bin/env bash
# Installs Synapse from PyPI (`matrix-synapse`) into a virtual environment if it is missing, and prints the
# environment's python. The environment is $CALLAPI_SYNAPSE_VENV, by default ~/.cache/callapi/synapse-venv,
# so that clones on one machine share it.
set -euo pipefail
venv=${CALLAPI_SYNAPSE_VENV:-$HOME/.cache/callapi/synapse-venv}
if ! { [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import synapse' 2>/dev/null; }; then
    echo "services: installing matrix-synapse into $venv (pip)" >&2
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv" >&2 || {
        . "$(dirname "$0")/lib.sh"
        apt_install python3-venv && python3 -m venv "$venv" >&2
    }
    timeout 900 "$venv/bin/pip" install -q matrix-synapse >&2
fi
echo "$venv/bin/python"
