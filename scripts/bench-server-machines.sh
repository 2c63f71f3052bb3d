#!/usr/bin/env bash
# The server machines alone (HubState: a relayed send and its two `written` reports; ChannelState: a relayed signal
# and its `written`), release build of the machines' sources with swiftc: no server, no sockets. Prints the time per
# input round (median of 7 rounds of 200k) and, under callgrind, instructions per round (stable on a busy machine).
# With BASE (a commit), builds BASE's machines too and measures both, interleaved.
#   scripts/bench-server-machines.sh [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
main="$PWD/scripts/microbench/server-machines/main.swift"

build() {  # build TREE DIR
    local S=$1/Sources dir=$2
    mkdir -p "$dir"
    # CallAPIWire (the JSON reader and writer) first, where the tree has it (a base from before it does not).
    local wire=()
    if [ -d "$S/CallAPIWire" ]; then
        swiftc -O -wmo -package-name callapi -parse-as-library -module-name CallAPIWire -emit-module \
            -emit-module-path "$dir/CallAPIWire.swiftmodule" -emit-library -static \
            -o "$dir/libCallAPIWire.a" $(find "$S/CallAPIWire" -name '*.swift')
        wire=(-lCallAPIWire)
    fi
    swiftc -O -wmo -package-name callapi -parse-as-library -module-name CallAPISignalProtocol -emit-module \
        -I "$dir" -L "$dir" ${wire[@]+"${wire[@]}"} \
        -emit-module-path "$dir/CallAPISignalProtocol.swiftmodule" -emit-library -static \
        -o "$dir/libCallAPISignalProtocol.a" $(find "$S/CallAPISignalProtocol" -name '*.swift')
    local server=$S/CallAPIServer
    swiftc -O -wmo -package-name callapi -module-name ServerMachinesBench -I "$dir" -L "$dir" \
        -lCallAPISignalProtocol ${wire[@]+"${wire[@]}"} -o "$dir/bench" \
        $(ls "$server"/Hub/*.swift | grep -v SignalHub) \
        "$server"/Invitations/*.swift "$server"/Match/*.swift "$server"/Overload/*.swift \
        "$server"/Auth/TokenLease.swift "$server"/Push/{CallPush,DeviceRegistry,HubState+Push,PushPolicy}.swift \
        "$server"/Ledger/{CallMessageFields,LedgerInput}.swift "$server"/Configuration/ChannelSettings.swift \
        $(ls "$server"/Channels/*.swift | grep -v ChannelHub) "$main"
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
build . "$out/new"
if [ $# -ge 1 ]; then
    mkdir -p "$out/base-tree"
    git archive "$1" Sources | tar -x -C "$out/base-tree"
    build "$out/base-tree" "$out/base"
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
