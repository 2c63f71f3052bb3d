#!/usr/bin/env bash
# Runs every `swift run callapi ...` command the README shows, as printed, so none of them rots. Long runs are
# shortened the same way each time: `--scenarios N` becomes `--scenarios 300` (the README's figures come from
# the full run). The walk-through's commands are run by ReadmeWalkthroughTests, the Swift snippets by the tests,
# and the benchmark commands by scripts/bench.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

mapfile -t commands < <(awk '/^```sh$/{block=1; next} /^```$/{block=0} block' README.md \
    | sed -E 's/[[:space:]]+#.*$//' | grep -E '^swift run callapi ' || true)
[ ${#commands[@]} -gt 0 ] || { echo "readme-commands: no 'swift run callapi' command found in README.md"; exit 1; }
for command in "${commands[@]}"; do
    shortened=$(sed -E 's/--scenarios [0-9]+/--scenarios 300/' <<<"$command")
    echo "== $shortened"
    bash -c "$shortened" > .readme-command.log 2>&1 || { cat .readme-command.log; echo "readme-commands: failed: $shortened"; exit 1; }
    tail -n 3 .readme-command.log
done
rm -f .readme-command.log
