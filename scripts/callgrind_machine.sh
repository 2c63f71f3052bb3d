#!/usr/bin/env bash
# Instructions per input of the CallAPI state machine, counted by callgrind: the stable counterpart of
# `callapi-bench machine`'s time per input, which moves with the shared machine's speed (0.32 to 0.95 µs per
# input for the same build on this kind of machine, docs/benchmarks.md).
#
#   scripts/callgrind_machine.sh BENCH_BINARY
#
# Runs `callapi-bench machine` twice under `valgrind --tool=callgrind`, counting only inside
# `CallStateMachine.handle(_:now:into:)` (callgrind's --toggle-collect): a short run and one twice as long. The
# difference in instructions divided by the difference in inputs is what one input costs, with the warm-up and
# start-up cancelled out. Prints a markdown table and a JSON line.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1
short=${CALLGRIND_MACHINE_CALLS:-2000}
long=$((2 * short))
command -v valgrind >/dev/null || { echo "callgrind_machine: valgrind not installed" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# valgrind 3.19 cannot read the DWARF 5 the Swift toolchain writes: a copy without debug information (the
# instructions are the same).
strip --strip-debug -o "$work/bench" "$bin"

# One run of CALLS full calls; prints "INSTRUCTIONS INPUTS_PER_CALL".
measure() {
    local calls=$1 out="$work/callgrind.$1"
    timeout 600 valgrind --tool=callgrind --callgrind-out-file="$out" \
        --toggle-collect='*7CallAPI0A12StateMachineV6handle_3now4into*' \
        "$work/bench" machine --calls "$calls" >"$work/machine.$calls" 2>"$work/machine.$calls.log" ||
        { echo "callgrind_machine: the run failed: $(tail -1 "$work/machine.$calls.log")" >&2; exit 1; }
    local instructions inputs
    instructions=$(awk '/^(summary|totals):/ { print $2; exit }' "$out")
    [ -n "$instructions" ] && [ "$instructions" -gt 0 ] ||
        { echo "callgrind_machine: callgrind counted nothing inside handle" >&2; exit 1; }
    inputs=$(python3 -c "import json,sys
for line in open(sys.argv[1]):
    if line.startswith('{'): print(json.loads(line)['inputsPerCall'])" "$work/machine.$calls")
    echo "$instructions $inputs"
}

read -r short_instructions inputs_per_call <<<"$(measure "$short")"
read -r long_instructions _ <<<"$(measure "$long")"
difference=$((long_instructions - short_instructions))
read -r per_call per_input <<<"$(python3 -c "import sys
difference, calls, inputs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
print(round(difference / calls), round(difference / (calls * inputs)))" "$difference" "$((long - short))" "$inputs_per_call")"

echo "### Instructions per input of the state machine (callgrind, scripts/callgrind_machine.sh)"
echo
echo "Counted inside \`CallStateMachine.handle(_:now:into:)\` only: decoding what is received included, the bench's"
echo "driver (which encodes what one side sends the other) not."
echo
echo "| run | full calls | instructions in handle |"
echo "| --- | --- | --- |"
echo "| short | $short | $short_instructions |"
echo "| long | $long | $long_instructions |"
echo "| difference | $((long - short)) ($inputs_per_call inputs each) | $difference ($per_call per call, $per_input per input) |"
echo
printf '{"bench":"machine-instructions","calls":%d,"inputsPerCall":%s,"instructionsPerCall":%d,"instructionsPerInput":%d}\n' \
    "$((long - short))" "$inputs_per_call" "$per_call" "$per_input"
