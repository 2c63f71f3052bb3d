#!/usr/bin/env bash
# Runs every shell command that README.md and docs/*.md show in ```sh blocks, as printed, from the package's root
# folder, so that none of them rots. It prints each command it runs or skips, with the file and line of its block.
#
# A block is run as one bash script (set -e -o pipefail), at most 300 s. What a block needs besides is said by
# HTML comments on the lines right above its fence (GitHub does not show them; this script prints them):
#
#   <!-- doc-commands: skip: REASON -->             not run; the reason is printed with each of its commands. The
#                                                   only way to leave a block out, so every gap is written down.
#   <!-- doc-commands: skip "PREFIX": REASON -->    the block's commands that start with PREFIX are not run
#   <!-- doc-commands: background until "TEXT" -->  a long-running program (a server): each command is started in
#                                                   the background, and the script goes on once its output has a
#                                                   line with TEXT (60 s at most). Stopped (SIGINT, then SIGKILL)
#                                                   once the rest of its document has run.
#   <!-- doc-commands: wait for "A" "B" -->         after the block, wait (30 s at most) for a line with A and B in
#                                                   the output of the document's background programs
#   <!-- doc-commands: file PATH -->                before a block of another language: its text is written to
#                                                   PATH (a program the next blocks run)
#
# Placeholders: a ```sh block holds only commands that run as printed. A value the reader must supply (a key, a
# token) goes in a block of another kind (```, ```http) or in an earlier command's output, or the block is skipped
# with its reason. Long runs are shortened the same way each time: `--scenarios N` runs as `--scenarios 300` (the
# README's figures come from the full run).
#
# It needs the package built (`swift build`, as CI does before it): `swift run` then builds nothing, and
# `.build/debug/callapi` is there. Usage: scripts/doc-commands.sh [FILE.md ...] (default: README.md docs/*.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
if [ $# -eq 0 ]; then set -- README.md docs/*.md; fi
exec python3 - "$@" <<'PY'
import os, re, shlex, signal, subprocess, sys, tempfile, time

MARKER = re.compile(r"^<!--\s*doc-commands:\s*(.*?)\s*-->$")
failures = []


def blocks(path):
    """Each fenced block: (line of its fence, language, text, the doc-commands markers right above it)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\S*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        markers, j = [], i - 1
        while j >= 0 and lines[j].startswith("<!--"):
            found = MARKER.match(lines[j])
            if found:
                markers.insert(0, found.group(1))
            j -= 1
        end = i + 1
        while end < len(lines) and lines[end] != "```":
            end += 1
        yield i + 1, fence.group(1), "\n".join(lines[i + 1 : end]), markers
        i = end + 1


def commands(text):
    """The block as logical commands: continuation lines joined, comment lines and blank lines left out."""
    result, current = [], ""
    for line in text.split("\n"):
        current += line
        if current.endswith("\\"):
            current += "\n"  # bash reads the backslash and newline as a continuation
            continue
        if current.strip() and not current.lstrip().startswith("#"):
            result.append(current)
        current = ""
    return result


def shortened(command):
    return re.sub(r"--scenarios [0-9]+", "--scenarios 300", command)


def stop(programs):
    for process, _ in programs:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
    deadline = time.time() + 10
    for process, _ in programs:
        try:
            process.wait(timeout=max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def output_of(programs):
    text = ""
    for _, log in programs:
        with open(log, encoding="utf-8", errors="replace") as file:
            text += file.read()
    return text


def wait_for(programs, needles, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if any(all(n in line for n in needles) for line in output_of(programs).split("\n")):
            return True
        if what is not None and what[0].poll() is not None:
            break
        time.sleep(0.2)
    return False


def run_document(path):
    programs = []
    logs = tempfile.mkdtemp(prefix="doc-commands-")
    try:
        for line, language, text, markers in blocks(path):
            where = f"{path}:{line}"
            files = [m[len("file ") :].strip() for m in markers if m.startswith("file ")]
            if language != "sh":
                for target in files:
                    kind = language or "plain"
                    print(f"write {target} ({where}, a {kind} block)")
                    with open(target, "w", encoding="utf-8") as file:
                        file.write(text + "\n")
                continue
            skip = next((m for m in markers if m.startswith("skip:")), None)
            prefixes = [re.match(r"skip \"([^\"]+)\":\s*(.*)", m) for m in markers]
            prefixes = [(p.group(1), p.group(2)) for p in prefixes if p]
            background = next((re.match(r"background until \"([^\"]+)\"", m) for m in markers if m.startswith("background")), None)
            waits = [re.findall(r"\"([^\"]+)\"", m) for m in markers if m.startswith("wait for")]
            print(f"== {where}", flush=True)
            run = []
            for command in commands(text):
                reason = skip[len("skip:") :].strip() if skip else next((r for p, r in prefixes if command.startswith(p)), None)
                if reason is not None:
                    print(f"skip  {command}\n      ({reason})", flush=True)
                else:
                    run.append(shortened(command))
            if not run:
                continue
            if background:
                for command in run:
                    print(f"start {command}", flush=True)
                    log = os.path.join(logs, f"{len(programs)}.log")
                    process = subprocess.Popen(
                        ["bash", "-c", "exec " + command], stdin=subprocess.DEVNULL, stdout=open(log, "w"),
                        stderr=subprocess.STDOUT, start_new_session=True)
                    programs.append((process, log))
                    if not wait_for([programs[-1]], [background.group(1)], 60, programs[-1]):
                        print(output_of([programs[-1]]))
                        failures.append(f"{where}: \"{background.group(1)}\" never came from: {command}")
                        return
                continue
            for command in run:
                print(f"run   {command}", flush=True)
            script = "\n".join(run)
            try:
                result = subprocess.run(
                    ["bash", "-e", "-o", "pipefail", "-c", script], stdin=subprocess.DEVNULL, capture_output=True,
                    text=True, timeout=300)
            except subprocess.TimeoutExpired:
                failures.append(f"{where}: did not finish in 300 s")
                return
            tail = (result.stdout + result.stderr).rstrip().split("\n")
            if result.returncode != 0:
                print("\n".join(tail))
                failures.append(f"{where}: exit {result.returncode}")
                return
            print("\n".join("      | " + line for line in tail[-3:]), flush=True)
            for needles in waits:
                if not wait_for(programs, needles, 30, None):
                    print(output_of(programs))
                    failures.append(f"{where}: no background line with {needles}")
                    return
                print("saw   a line with " + " and ".join(needles), flush=True)
    finally:
        stop(programs)
        for process, log in programs:
            with open(log, encoding="utf-8", errors="replace") as file:
                tail = file.read().rstrip().split("\n")[-4:]
            print(f"stop  {shlex.join(process.args[2:])[:100]}\n" + "\n".join("      | " + line for line in tail))


for document in sys.argv[1:]:
    run_document(document)
if failures:
    print("doc-commands: failed:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("doc-commands: every command ran or was skipped with its reason")
PY
