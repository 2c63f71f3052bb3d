#!/usr/bin/env bash
# The cluster's figures (docs/scale-out.md), which no surveyed system publishes: one-way relay latency between two
# nodes beside one node at the same load, calls per second with caller and callee on different nodes, PostgreSQL's
# commits and CPU per cross-node message, a node killed with SIGKILL under its clients (logged in elsewhere, first
# held message, presence), and pgbench of the mailbox's write + NOTIFY, from which docs/scale-out.md's capacity
# model is made. Writes bench/cluster.md (BENCH_CLUSTER_OUT).
#
#   scripts/bench-cluster.sh                 # release build, full sizes (about 4 minutes)
#   BENCH_QUICK=1 BENCH_CONFIG=debug BENCH_SCRATCH=.build scripts/bench-cluster.sh   # CI: proves it end to end
#
# PostgreSQL (Debian's, scripts/services) runs with its own durable defaults (fsync, synchronous commits); the nodes
# commit the cluster's rows asynchronously (docs/scale-out.md says why).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
. scripts/services/lib.sh
scratch=${BENCH_SCRATCH:-.build-bench}
config=${BENCH_CONFIG:-release}
out=${BENCH_CLUSTER_OUT:-bench/cluster.md}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
    pairs=4 seconds=1 call_pairs=4 call_seconds=2 movers=10 stayers=5 rounds=1 pgbench_seconds=2
else
    pairs=${BENCH_CLUSTER_PAIRS:-10} seconds=${BENCH_CLUSTER_SECONDS:-10} call_pairs=${BENCH_CLUSTER_CALL_PAIRS:-50}
    call_seconds=10 movers=${BENCH_FAILOVER_MOVERS:-100} stayers=${BENCH_FAILOVER_STAYERS:-50}
    rounds=${BENCH_FAILOVER_ROUNDS:-5} pgbench_seconds=10
fi

echo "bench-cluster: building ($config, scratch path $scratch)" >&2
swift build -c "$config" --package-path Benchmarks --scratch-path "$scratch" --product callapi-bench >&2
swift build -c "$config" --package-path Benchmarks --scratch-path "$scratch" --product callapi >&2
bench="$scratch/$config/callapi-bench"
callapi="$scratch/$config/callapi"

work=$(mktemp -d)
pg_pid=""
listeners=()
cleanup() {
    for pid in "${listeners[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
    [ -z "$pg_pid" ] || kill "$pg_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
read -r pg_port pg_pid pg_user <<<"$(POSTGRES_DURABLE=1 scripts/services/start-postgres.sh "$work/postgres")"
pg_bin=$(scripts/services/install-postgres.sh)
database="postgres://$pg_user@127.0.0.1:$pg_port/callapi"
psql() { "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U "$pg_user" -d callapi -Atq "$@"; }

# Commits of every database, and the CPU seconds of PostgreSQL's processes (the live ones, and what the postmaster
# has collected from backends that exited).
pg_sample() {
    local commits
    commits=$(psql -c "SELECT sum(xact_commit) FROM pg_stat_database")
    python3 - "$pg_pid" "$commits" <<'PY'
import os, sys
postmaster, commits = sys.argv[1], sys.argv[2]
ticks = os.sysconf("SC_CLK_TCK")
total = 0.0
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        continue
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    if name.startswith("postgres"):
        total += (int(fields[11]) + int(fields[12])) / ticks
        if pid == postmaster:
            total += (int(fields[13]) + int(fields[14])) / ticks
print(commits, total)
PY
}

run() {
    local name=$1 limit=$2
    shift 2
    echo "bench-cluster: $name" >&2
    timeout --kill-after=10 "$limit" "$bench" "$@" >"$work/$name" 2>"$work/$name.log" ||
        printf '### %s\n\nFailed: %s\n' "$name" "$(tail -1 "$work/$name.log")" >"$work/$name"
}

run relay-one-node 300 relay --peer ours --pairs "$pairs" --rates 1000 --seconds "$seconds" --no-saturation
read -r commits_before cpu_before <<<"$(pg_sample)"
run relay-two-nodes 300 relay --peer cluster --peer-url "$database" --pairs "$pairs" --rates 1000 \
    --seconds "$seconds" --no-saturation
read -r commits_after cpu_after <<<"$(pg_sample)"
run calls-two-nodes 300 calls --peer cluster --peer-url "$database" --pairs "$call_pairs" --seconds "$call_seconds"
run failover 900 failover --callapi "$callapi" --database "$database" --movers "$movers" --stayers "$stayers" \
    --rounds "$rounds"

# The mailbox's write + NOTIFY alone, as pgbench clients: the engine's ceiling for cross-node messages.
cat >"$work/mailbox.sql" <<'SQL'
INSERT INTO callapi_cluster_mailbox (target_node, target_user, from_user, body, sent_at, message_id, expires_at)
VALUES ('bench_b', '200001', '100001', repeat('x', 256), 0, 'm-bench', now() + interval '60 seconds');
SELECT pg_notify('callapi_node_bench_b', '');
SQL
for listening in 1 3; do
    for _ in $(seq "$listening"); do
        "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U "$pg_user" -d callapi -q \
            -c "LISTEN callapi_node_bench_b" -c "SELECT pg_sleep(3600)" >/dev/null 2>&1 &
        listeners+=("$!")
    done
    for sync in on off; do
        for clients in 1 4; do
            PGOPTIONS="-c synchronous_commit=$sync" "$pg_bin/pgbench" -h 127.0.0.1 -p "$pg_port" -U "$pg_user" \
                -n -f "$work/mailbox.sql" -c "$clients" -j "$clients" -T "$pgbench_seconds" callapi \
                >"$work/pgbench-$listening-$sync-$clients" 2>&1 || true
        done
    done
    for pid in "${listeners[@]}"; do kill "$pid" 2>/dev/null || true; done
    listeners=()
done

python3 - "$work" "$commits_before" "$cpu_before" "$commits_after" "$cpu_after" "$out" "$seconds" <<'PY'
import json, os, re, sys
work, c0, u0, c1, u1, out, seconds = sys.argv[1:8]
def line(name):
    try:
        for text in open(os.path.join(work, name)):
            if text.startswith("{"):
                return json.loads(text)
    except OSError:
        pass
    return None
def table(name):
    try:
        return "".join(l for l in open(os.path.join(work, name)) if not l.startswith("{"))
    except OSError:
        return f"### {name}\n\n(missing)\n"
one, two = line("relay-one-node"), line("relay-two-nodes")
rows = []
for label, report in (("one node", one), ("two nodes (through PostgreSQL)", two)):
    if report and report["steps"]:
        step = report["steps"][0]
        rows.append(f"| {label} | {step['achievedRate']:.0f} | {step['delivered']}/{step['sent']} | "
                    f"{step['oneWay']['p50'] / 1000:.2f} | {step['oneWay']['p99'] / 1000:.2f} | "
                    f"{step['ack']['p50'] / 1000:.2f} |")
messages = 0
if two:
    messages = two.get("warmupSent", 0) + sum(s["sent"] for s in two["steps"])
commits = (float(c1) - float(c0)) / messages if messages else float("nan")
cpu = (float(u1) - float(u0)) * 1e6 / messages if messages else float("nan")
calls = line("calls-two-nodes")
failover = line("failover")
bench = []
for name in sorted(os.listdir(work)):
    m = re.match(r"pgbench-(\d)-(on|off)-(\d)$", name)
    if not m:
        continue
    text = open(os.path.join(work, name)).read()
    tps = re.search(r"tps = ([0-9.]+)", text)
    latency = re.search(r"latency average = ([0-9.]+) ms", text)
    bench.append((int(m.group(1)), m.group(2), int(m.group(3)),
                  tps.group(1) if tps else "failed", latency.group(1) if latency else "-"))
os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
with open(out, "w") as f:
    f.write("# Cluster figures (scripts/bench-cluster.sh)\n\n")
    f.write(f"- Machine: {os.cpu_count()} cores; PostgreSQL with its durable defaults; nodes commit asynchronously.\n\n")
    f.write("## Relay at 1,000 msg/s, one-way\n\n| where | msg/s | delivered | p50 ms | p99 ms | ack p50 ms |\n")
    f.write("|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n")
    f.write(f"PostgreSQL per cross-node message: {commits:.2f} commits, {cpu:.0f} µs of CPU "
            f"({messages} messages, warm-up included).\n\n")
    f.write(table("calls-two-nodes") + "\n" + table("failover") + "\n")
    f.write("## pgbench: one mailbox row + NOTIFY per transaction\n\n")
    f.write("| listeners | synchronous_commit | clients | transactions/s | latency ms |\n|---|---|---|---|---|\n")
    for b in bench:
        f.write(f"| {b[0]} | {b[1]} | {b[2]} | {b[3]} | {b[4]} |\n")
    f.write("\n## JSON lines\n\n```\n")
    for name in ("relay-one-node", "relay-two-nodes", "calls-two-nodes", "failover"):
        report = line(name)
        if report:
            f.write(json.dumps(report, sort_keys=True) + "\n")
    f.write("```\n")
print(f"bench-cluster: wrote {out}", file=sys.stderr)
PY
