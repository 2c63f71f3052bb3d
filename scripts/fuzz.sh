#!/usr/bin/env bash
# Builds and runs one libFuzzer target for a given time: scripts/fuzz.sh TARGET SECONDS [libFuzzer options...]
#
# A target is a folder Fuzz/TARGET/ holding:
#   *.swift   the target's code, with an @_cdecl("LLVMFuzzerTestOneInput") entry point;
#   sources   the library source folders compiled into the same module (one per line, from the repository
#             root; '#' starts a comment). One module, so `package` and internal API are in reach, and no
#             SwiftPM build with the sanitizer is needed;
#   flags     (optional) extra swiftc flags, one per line;
#   corpus/   the committed seed corpus.
# The binary and the inputs libFuzzer finds go to .build/fuzz/TARGET/ (the seeds are only read); a crash
# leaves its input there as crash-* and the script fails.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 2 ]]; then
    echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer options...]" >&2
    echo "targets: $(ls Fuzz 2>/dev/null | tr '\n' ' ')" >&2
    exit 2
fi
target="$1"
seconds="$2"
shift 2
dir="Fuzz/$target"
[[ -d "$dir" ]] || { echo "fuzz.sh: no target folder $dir" >&2; exit 2; }
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number, not '$seconds'" >&2; exit 2; }

out=".build/fuzz/$target"
mkdir -p "$out/found"

files=("$dir"/*.swift)
if [[ -f "$dir/sources" ]]; then
    while IFS= read -r line; do
        line="${line%%#*}"
        line="$(echo "$line" | xargs)"
        [[ -z "$line" ]] && continue
        [[ -d "$line" ]] || { echo "fuzz.sh: $dir/sources names '$line', which is not a folder" >&2; exit 2; }
        while IFS= read -r file; do files+=("$file"); done < <(find "$line" -name '*.swift' | sort)
    done < "$dir/sources"
fi
flags=()
if [[ -f "$dir/flags" ]]; then
    while IFS= read -r line; do [[ -n "$line" && "$line" != \#* ]] && flags+=("$line"); done < "$dir/flags"
fi

# Sources that import CallAPIWire get it compiled into the same module, named so that those imports name the module
# itself (a warning, not an error): one module, every line instrumented for the fuzzer.
module="Fuzz${target//[^A-Za-z0-9]/}"
for file in "${files[@]}"; do [[ "$file" == Sources/CallAPIWire/* ]] && module=CallAPIWire; done
# ...and a file that only re-exports the module (CallAPI's) has nothing to add to it.
kept=()
for file in "${files[@]}"; do grep -q "^@_exported import $module\$" "$file" || kept+=("$file"); done
files=("${kept[@]}")

echo "fuzz.sh: building $target (${#files[@]} files)"
swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
    -swift-version 6 -package-name callapi -module-name "$module" \
    ${flags[@]+"${flags[@]}"} "${files[@]}" -o "$out/fuzzer"

echo "fuzz.sh: running $target for $seconds s"
seeds=()
[[ -d "$dir/corpus" ]] && seeds+=("$dir/corpus")
"$out/fuzzer" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$out/" \
    "$@" "$out/found" ${seeds[@]+"${seeds[@]}"}
