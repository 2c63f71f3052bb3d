#!/usr/bin/env bash
# Installs what real media needs (GStreamer's development files and plugins, Debian), once.
# Afterwards build with `CALLAPI_WEBRTC=1` in the environment to add the WebRTC engine to the build.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
for pkg in $(cat scripts/webrtc-packages); do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -eq 0 ]; then
    echo "setup-webrtc: GStreamer packages already installed"
else
    echo "setup-webrtc: installing ${need[*]}"
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
echo "setup-webrtc: now build with real media: export CALLAPI_WEBRTC=1"
