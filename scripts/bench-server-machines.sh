#!/usr/bin/env bash
# The server machines alone (HubState: a relayed send and its two `written` reports; ChannelState: a relayed signal
# and its `written`), release build of the CallAPIServerCore module: no server, no sockets. Prints the time per
# input round (median of 7 rounds of 200k) and, under callgrind, instructions per round (stable on a busy machine).
# With BASE (a commit), builds BASE's machines too and measures both, interleaved; a BASE from before the core was a
# module (issue 43) has its machines' files compiled into the bench, as this script used to.
#   scripts/bench-server-machines.sh [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
main="$PWD/scripts/microbench/server-machines/main.swift"
scratch=${SERVER_MACHINES_SCRATCH:-.build-server-machines}

# SwiftPM builds the module and what it depends on (swift-collections among them) in release; the bench is linked
# against their objects and reads `package` symbols under the package's own name (the directory's, as SwiftPM
# names it).
swift build -c release --scratch-path "$scratch" --target CallAPIServerCore >"$out/build.log" 2>&1 ||
    { cat "$out/build.log" >&2; exit 1; }
release="$scratch/release"
package_name=$(basename "$PWD" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9_]/_/g; s/^[0-9]/_&/')
# The object files of modules, into the array `objects` (some file names have spaces).
collect_objects() {
    objects=()
    for module in "$@"; do
        while IFS= read -r -d '' file; do objects+=("$file"); done < <(find "$release/$module.build" -name '*.o' -print0)
    done
}
collections=(DequeModule HeapModule InternalCollectionsUtilities ContainersPreview)

build_new() {  # build_new DIR: the bench against this tree's CallAPIServerCore
    mkdir -p "$1"
    collect_objects CallAPIServerCore CallAPISignalProtocol CallAPIWire "${collections[@]}"
    swiftc -O -wmo -package-name "$package_name" -I "$release/Modules" -o "$1/bench" "$main" "${objects[@]}"
}

build_base() {  # build_base TREE DIR: the machines' files of a tree from before the module, compiled with the bench
    local S=$1/Sources dir=$2 server=$1/Sources/CallAPIServer
    mkdir -p "$dir"
    collect_objects "${collections[@]}"
    swiftc -O -wmo -package-name callapi -parse-as-library -module-name CallAPISignalProtocol -emit-module \
        -emit-module-path "$dir/CallAPISignalProtocol.swiftmodule" -emit-library -static \
        -o "$dir/libCallAPISignalProtocol.a" $(find "$S/CallAPISignalProtocol" -name '*.swift')
    swiftc -O -wmo -package-name callapi -module-name ServerMachinesBench -I "$dir" -I "$release/Modules" -L "$dir" \
        -lCallAPISignalProtocol -o "$dir/bench" \
        $(ls "$server"/Hub/*.swift | grep -v SignalHub) \
        "$server"/Invitations/*.swift "$server"/Match/*.swift "$server"/Overload/*.swift \
        "$server"/Auth/TokenLease.swift "$server"/Push/{CallPush,DeviceRegistry,HubState+Push,PushPolicy}.swift \
        "$server"/Ledger/{CallMessageFields,LedgerInput}.swift "$server"/Configuration/ChannelSettings.swift \
        $(ls "$server"/Channels/*.swift | grep -v ChannelHub) "$main" "${objects[@]}"
}

instructions() {  # instructions BINARY KIND: per round, from 10k and 20k rounds
    local counts=()
    for n in 10000 20000; do
        counts+=("$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$n" 1 "$2" 2>&1 \
            | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')")
    done
    echo $(((counts[1] - counts[0]) / 10000))
}

builds=(new)
build_new "$out/new"
if [ $# -ge 1 ]; then
    mkdir -p "$out/base-tree"
    git archive "$1" Sources | tar -x -C "$out/base-tree"
    if [ -d "$out/base-tree/Sources/CallAPIServerCore" ]; then
        echo "bench-server-machines: BASE $1 has the module; measure it from its own checkout" >&2
        exit 2
    fi
    build_base "$out/base-tree" "$out/base"
    builds=(base new)
fi
for round in 1 2 3; do
    for b in "${builds[@]}"; do echo "$b: $("$out/$b/bench")"; done
done
if command -v valgrind >/dev/null; then
    for b in "${builds[@]}"; do
        echo "$b: instructions per round: hub $(instructions "$out/$b/bench" hub)," \
            "channel $(instructions "$out/$b/bench" channel)"
    done
fi
