#!/usr/bin/env python3
"""Prints the ratio tables of bench/results.md from the JSON lines scripts/bench.sh collected.

Usage: bench_ratios.py WORKDIR  (WORKDIR holds one file per run: relay, relay-mosquitto, calls, ...; the extra
rounds of a run are NAME-round1, NAME-round2, ...)
A ratio is peer / ours for latencies (how many times slower the peer is) and ours / peer for throughput. The
targets compare medians over the rounds.
"""
import json
import os
import statistics
import sys


def report(work, name):
    try:
        with open(os.path.join(work, name)) as file:
            for line in file:
                if line.startswith("{"):
                    return json.loads(line)
    except OSError:
        pass
    return None


def rounds(work, name):
    """Every round of run NAME that finished: the extra rounds (NAME-round1, ...), then NAME itself."""
    found = []
    number = 1
    while os.path.exists(os.path.join(work, f"{name}-round{number}")):
        extra = report(work, f"{name}-round{number}")
        if extra:
            found.append((f"{name}-round{number}", extra))
        number += 1
    last = report(work, name)
    if last:
        found.append((name, last))
    return found


def median(values):
    values = [value for value in values if value is not None]
    return statistics.median(values) if values else None


def complete(step):
    return step["drained"] and step["delivered"] == step["sent"] and step["failed"] == 0


def server_micros_per_call(work, name):
    """The server's CPU time per completed call in run NAME (bench.sh's NAME.server-cpu), or None."""
    calls = report(work, name)
    path = os.path.join(work, f"{name}.server-cpu")
    if not calls or not calls.get("completed") or not os.path.exists(path):
        return None
    with open(path) as file:
        return float(file.read().strip() or 0) * 1e6 / calls["completed"]


def ratio(numerator, denominator):
    if not numerator or not denominator:
        return "—"
    value = numerator / denominator
    if value >= 10:
        return f"{value:,.0f}×"
    return f"{value:.1f}×" if value >= 1 else f"{value:.2g}×"


def micros(value):
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def relay_rows(ours, peer, label, ours_saturation=None):
    ours_saturation = ours_saturation or ours
    rows = []
    if not ours or not peer:
        return rows
    by_rate = {step["offeredRate"]: step for step in ours["steps"]}
    for step in peer["steps"]:
        base = by_rate.get(step["offeredRate"])
        if not base:
            continue
        complete = all(s["drained"] and s["delivered"] == s["sent"] and s["failed"] == 0 for s in (step, base))
        status = "" if complete else " (saturated)"
        rows.append(
            f"| relay {int(step['offeredRate'])} msg/s, {peer['pairs']} pairs{status} | {label} "
            f"| {micros(base['oneWay']['p50'])} / {micros(step['oneWay']['p50'])} "
            f"| {ratio(step['oneWay']['p50'], base['oneWay']['p50'])} "
            f"| {micros(base['oneWay']['p99'])} / {micros(step['oneWay']['p99'])} "
            f"| {ratio(step['oneWay']['p99'], base['oneWay']['p99'])} "
            f"| {base['achievedRate']:.0f} / {step['achievedRate']:.0f} msg/s "
            f"({base['delivered']} / {step['delivered']} delivered of {base['sent']} / {step['sent']}) |"
        )
    if ours_saturation.get("saturationSteps") and peer.get("saturationSteps"):
        mine, theirs = ours_saturation.get("saturationRate"), peer.get("saturationRate")
        rows.append(
            f"| relay saturation point (p99 < {peer['saturationP99Micros'] / 1000:.0f} ms), {peer['pairs']} pairs "
            f"| {label} | | | | "
            f"| {int(mine or 0)} / {int(theirs or 0)} msg/s: {ratio(mine, theirs)} |"
        )
    return rows


def calls_rows(ours, peer, label):
    if not ours or not peer:
        return []
    return [
        f"| calls, {peer['pairs']} pairs (setup = call() → both connected) | {label} "
        f"| {micros(ours['setup']['p50'])} / {micros(peer['setup']['p50'])} "
        f"| {ratio(peer['setup']['p50'], ours['setup']['p50'])} "
        f"| {micros(ours['setup']['p99'])} / {micros(peer['setup']['p99'])} "
        f"| {ratio(peer['setup']['p99'], ours['setup']['p99'])} "
        f"| {ours['callsPerSecond']:.0f} / {peer['callsPerSecond']:.0f} calls/s: "
        f"{ratio(ours['callsPerSecond'], peer['callsPerSecond'])} "
        f"({ours['failed']} / {peer['failed']} failed) |"
    ]


def verdict(met):
    return "met" if met else "not met"


def step_at(report_, rate):
    if not report_:
        return None
    for step in report_["steps"]:
        if int(step["offeredRate"]) == rate:
            return step
    return None


def target_rows(work):
    """Issue 13's targets, each beside our figure, Mosquitto's in the same run and the ratio (ours ÷ Mosquitto)."""
    rows = []
    relay, mosquitto = report(work, "relay"), report(work, "relay-mosquitto")
    relay_rounds, mosquitto_rounds = rounds(work, "relay"), rounds(work, "relay-mosquitto")
    for rate in (1000, 10000, 20000):
        mine = [step for _, run in relay_rounds if (step := step_at(run, rate))]
        theirs = [step for _, run in mosquitto_rounds if (step := step_at(run, rate))]
        if not mine or not theirs:
            continue
        p50, p99 = median(s["oneWay"]["p50"] for s in mine), median(s["oneWay"]["p99"] for s in mine)
        their50, their99 = median(s["oneWay"]["p50"] for s in theirs), median(s["oneWay"]["p99"] for s in theirs)
        # A load ours did not deliver in full within a round is not met, whatever its percentiles say.
        whole = all(complete(step) for step in mine)
        note = "" if whole else " (ours did not deliver all of a round in time)"
        # How often ours was no worse in a round, against the Mosquitto run right after it: beside medians that
        # one slow round can move, this shows whether a difference holds round by round.
        paired = list(zip(mine, theirs))
        ahead50 = sum(m["oneWay"]["p50"] <= t["oneWay"]["p50"] for m, t in paired)
        ahead99 = sum(m["oneWay"]["p99"] <= t["oneWay"]["p99"] for m, t in paired)
        rows.append(
            f"| relay {rate:,} msg/s: p50 / p99 no worse than Mosquitto's | {micros(p50)} / {micros(p99)} µs{note} "
            f"| {micros(their50)} / {micros(their99)} µs | {ratio(p50, their50)} / {ratio(p99, their99)} "
            f"| {verdict(whole and p50 <= their50 and p99 <= their99)} (rounds no worse: p50 {ahead50} of "
            f"{len(paired)}, p99 {ahead99} of {len(paired)}) |"
        )
        if rate == 10000:
            rows.append(
                f"| stretch: relay p50 ≤ 50 µs at 10,000 msg/s | {micros(p50)} µs | {micros(their50)} µs "
                f"| {ratio(p50, their50)} | {verdict(p50 <= 50)} |"
            )
    searched = [run for _, run in relay_rounds if run.get("saturationSteps")]
    searched_mosquitto = [run for _, run in mosquitto_rounds if run.get("saturationSteps")]
    if searched and searched_mosquitto:
        mine = median(run.get("saturationRate") or 0 for run in searched)
        theirs = median(run.get("saturationRate") or 0 for run in searched_mosquitto)
        rows.append(
            f"| relay saturation point at least 2× Mosquitto's | {mine:,.0f} msg/s | {theirs:,.0f} msg/s "
            f"| {ratio(mine, theirs)} | {verdict(mine >= 2 * theirs)} |"
        )
    calls_rounds, mosquitto_call_rounds = rounds(work, "calls"), rounds(work, "calls-mosquitto")
    if calls_rounds and mosquitto_call_rounds:
        mine = median(run["callsPerSecond"] for _, run in calls_rounds)
        theirs = median(run["callsPerSecond"] for _, run in mosquitto_call_rounds)
        p99 = median(run["setup"]["p99"] for _, run in calls_rounds)
        their99 = median(run["setup"]["p99"] for _, run in mosquitto_call_rounds)
        rows.append(
            f"| full calls/s at least Mosquitto's, setup p99 no worse | {mine:,.0f}/s, p99 {micros(p99)} µs "
            f"| {theirs:,.0f}/s, p99 {micros(their99)} µs | {ratio(mine, theirs)} / {ratio(p99, their99)} "
            f"| {verdict(mine >= theirs and p99 <= their99)} |"
        )
        rows.append(
            f"| stretch: 5,000 calls/s | {mine:,.0f}/s | {theirs:,.0f}/s | {ratio(mine, theirs)} "
            f"| {verdict(mine >= 5000)} |"
        )
        mine_cpu = median(server_micros_per_call(work, name) for name, _ in calls_rounds)
        their_cpu = median(server_micros_per_call(work, name) for name, _ in mosquitto_call_rounds)
        if mine_cpu and their_cpu:
            rows.append(
                f"| server CPU per completed call, user + system (what calls/s depends on) | {mine_cpu:,.0f} µs | {their_cpu:,.0f} µs "
                f"| {ratio(mine_cpu, their_cpu)} | — |"
            )
    idle, idle_mosquitto = report(work, "idle-memory"), report(work, "idle-memory-mosquitto")
    if idle:
        mine = idle["serverBytesPerConnection"]
        theirs = idle_mosquitto["serverBytesPerConnection"] if idle_mosquitto else None
        rows.append(
            f"| ≤ 8 KB per idle logged-in connection (stretch 4 KB) | {mine:,} B "
            f"| {f'{theirs:,} B' if theirs is not None else '—'} | {ratio(mine, theirs)} "
            f"| {verdict(mine <= 8192)} (stretch: {verdict(mine <= 4096)}) |"
        )
    machine = report(work, "machine")
    if machine:
        nanos = machine["nanosPerInput"]
        counted = report(work, "machine-instructions")
        instructions = f" ({counted['instructionsPerInput']:,} instructions)" if counted else ""
        rows.append(
            f"| state machine ≤ 0.5 µs per input | {nanos / 1000:.2f} µs{instructions} | — | — "
            f"| {verdict(nanos <= 500)} |"
        )
    allocations = report(work, "allocations")
    if allocations:
        mallocs = allocations["mallocsPerCall"]
        rows.append(f"| ≤ 40 mallocs per full call | {mallocs} | — | — | {verdict(mallocs <= 40)} |")
    one = report(work, "calls-one")
    if one:
        p50 = one["acceptToConnected"]["p50"]
        rows.append(
            f"| accept() → both connected ≤ 2 ms p50 (1 pair, no media delay) | {micros(p50)} µs | — | — "
            f"| {verdict(p50 <= 2000)} |"
        )
    instructions, instructions_mosquitto = report(work, "instructions"), report(work, "instructions-mosquitto")
    if instructions or instructions_mosquitto:
        mine = instructions["instructionsPerMessage"] if instructions else None
        theirs = instructions_mosquitto["instructionsPerMessage"] if instructions_mosquitto else None
        rows.append(
            f"| instructions per relayed message (callgrind; no target) "
            f"| {f'{mine:,}' if mine is not None else 'not measured (see below)'} "
            f"| {f'{theirs:,}' if theirs is not None else '—'} | {ratio(mine, theirs)} | — |"
        )
    return rows


def rounds_table(work):
    """One row per round: each relay rate's p50 / p99 and the calls per second, ours beside Mosquitto's."""
    relay, mosquitto = rounds(work, "relay"), rounds(work, "relay-mosquitto")
    calls, calls_mosquitto = rounds(work, "calls"), rounds(work, "calls-mosquitto")
    count = max(len(relay), len(calls))
    if count < 2 or len(mosquitto) != len(relay) or len(calls_mosquitto) != len(calls):
        return []
    rates = [int(step["offeredRate"]) for step in relay[-1][1]["steps"]] if relay else []
    header = (
        "| round | " + " | ".join(f"relay {rate:,} msg/s p50 / p99 µs" for rate in rates)
        + " | saturation msg/s | calls/s |"
    )
    rows = [header, "|---" * (len(rates) + 3) + "|"]
    for index in range(count):
        cells = []
        for rate in rates:
            mine = step_at(relay[index][1], rate) if index < len(relay) else None
            theirs = step_at(mosquitto[index][1], rate) if index < len(mosquitto) else None
            if mine and theirs:
                cells.append(
                    f"{micros(mine['oneWay']['p50'])} / {micros(mine['oneWay']['p99'])} vs "
                    f"{micros(theirs['oneWay']['p50'])} / {micros(theirs['oneWay']['p99'])}"
                )
            else:
                cells.append("—")
        mine = relay[index][1] if index < len(relay) else None
        theirs = mosquitto[index][1] if index < len(mosquitto) else None
        if mine and theirs and mine.get("saturationSteps") and theirs.get("saturationSteps"):
            cells.append(f"{mine.get('saturationRate') or 0:,.0f} vs {theirs.get('saturationRate') or 0:,.0f}")
        else:
            cells.append("—")
        if index < len(calls):
            cells.append(f"{calls[index][1]['callsPerSecond']:,.0f} vs {calls_mosquitto[index][1]['callsPerSecond']:,.0f}")
        else:
            cells.append("—")
        rows.append(f"| {index + 1} | " + " | ".join(cells) + " |")
    return rows


def cpu_per_message(step, side):
    """CPU µs (user + system) per delivered message that SIDE ("benchCPU" or "serverCPU") used in STEP, or None."""
    cpu = step.get(side) if step else None
    if not cpu or not step["delivered"]:
        return None
    return (cpu["userSeconds"] + cpu["systemSeconds"]) * 1e6 / step["delivered"]


def cpu_rows(work):
    """Per fixed rate, and at the highest saturation step both held: the CPU the server and the bench's clients
    spent per relayed message, medians over the rounds. The clients share the cores with the server, so the
    sum is what bounds the saturation point on this machine."""
    relay_rounds, mosquitto_rounds = rounds(work, "relay"), rounds(work, "relay-mosquitto")
    if not relay_rounds or not mosquitto_rounds:
        return []

    def cell(value):
        return f"{value:,.1f}" if value is not None else "—"

    def row(label, mine, theirs):
        figures = [median(cpu_per_message(step, side) for step in steps) for steps in (mine, theirs)
                   for side in ("serverCPU", "benchCPU")]
        ours_total = figures[0] + figures[1] if None not in figures[:2] else None
        their_total = figures[2] + figures[3] if None not in figures[2:] else None
        if all(value is None for value in figures):
            return None
        return (f"| {label} | {cell(figures[0])} / {cell(figures[2])} | {cell(figures[1])} / {cell(figures[3])} "
                f"| {cell(ours_total)} / {cell(their_total)} | {ratio(ours_total, their_total)} |")

    rows = []
    rates = [int(step["offeredRate"]) for step in relay_rounds[-1][1]["steps"]]
    for rate in rates:
        mine = [step for _, run in relay_rounds if (step := step_at(run, rate))]
        theirs = [step for _, run in mosquitto_rounds if (step := step_at(run, rate))]
        if mine and theirs and (line := row(f"{rate:,} msg/s", mine, theirs)):
            rows.append(line)
    relay, mosquitto = relay_rounds[-1][1], mosquitto_rounds[-1][1]
    held = min(relay.get("saturationRate") or 0, mosquitto.get("saturationRate") or 0)
    if held:
        mine = [step for step in relay.get("saturationSteps", []) if int(step["offeredRate"]) == int(held)]
        theirs = [step for step in mosquitto.get("saturationSteps", []) if int(step["offeredRate"]) == int(held)]
        if mine and theirs and (line := row(f"{held:,.0f} msg/s (saturation search)", mine, theirs)):
            rows.append(line)
    return rows


def main():
    work = sys.argv[1]
    targets = target_rows(work)
    if targets:
        print("### Targets (ours beside Mosquitto in the same run, medians over the rounds; ratio = ours ÷ Mosquitto)")
        print()
        print("| target | ours | Mosquitto | ratio | verdict |")
        print("|---|---|---|---|---|")
        for row in targets:
            print(row)
        print()
        round_rows = rounds_table(work)
        if round_rows:
            print("Every round behind the medians (ours / Mosquitto, in the order they ran):")
            print()
            for row in round_rows:
                print(row)
            print()
    cpu = cpu_rows(work)
    if cpu:
        print("CPU per relayed message, user + system µs, ours / Mosquitto (medians over the rounds). The bench's")
        print("clients share the cores with the server, so the total is what bounds the saturation point here:")
        print()
        print("| offered load | server | bench clients | total | total ratio |")
        print("|---|---|---|---|---|")
        for line in cpu:
            print(line)
        print()
    rows = []
    rows += relay_rows(report(work, "relay"), report(work, "relay-mosquitto"), "ours vs Mosquitto")
    relay = report(work, "relay")
    synapse = report(work, "relay-synapse")
    same_pairs = relay if relay and synapse and relay["pairs"] == synapse["pairs"] else None
    rows += relay_rows(report(work, "relay-ours-synapse-load"), synapse, "ours vs Synapse", same_pairs)
    rows += calls_rows(report(work, "calls"), report(work, "calls-mosquitto"), "ours vs Mosquitto")
    rows += calls_rows(report(work, "calls-ours-synapse-load"), report(work, "calls-synapse"), "ours vs Synapse")
    if not rows:
        print("No peer runs to compare.")
    else:
        print(
            "Latency ratios are peer ÷ ours (above 1× = the peer is slower, below 1× = ours is slower); "
            "throughput is ours ÷ peer."
        )
        print()
        print("| workload | comparison | p50 µs ours / peer | p50 ratio | p99 µs ours / peer | p99 ratio | throughput ours / peer |")
        print("|---|---|---|---|---|---|---|")
        for row in rows:
            print(row)
    ours, mosquitto = report(work, "idle-memory"), report(work, "idle-memory-mosquitto")
    if ours and mosquitto:
        print()
        print("| idle logged-in connection | ours | Mosquitto | ours ÷ Mosquitto | target |")
        print("|---|---|---|---|---|")
        mine, theirs = ours["serverBytesPerConnection"], mosquitto["serverBytesPerConnection"]
        verdict = "met" if mine <= 8192 else "not met"
        print(
            f"| server bytes per connection ({ours['count']:,}) | {mine:,} | {theirs:,} | {ratio(mine, theirs)} "
            f"| ≤ 8 KB: {verdict} |"
        )


if __name__ == "__main__":
    main()
