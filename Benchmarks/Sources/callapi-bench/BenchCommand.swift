import ArgumentParser

/// `callapi-bench`: performance figures for the relay, call flows, idle connections, real media and the state
/// machine.
///
/// Every bench subcommand prints a markdown table and then one line of JSON (`{"bench":...}`) for scripts.
/// `main.swift` runs it.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "callapi-bench",
        abstract: "Benchmarks: relay latency, call flows, idle connections, real media, the state machine.",
        discussion: """
            Each run is bounded and stops by itself; servers are started on 127.0.0.1 only. \
            Build with -c release for figures worth quoting (scripts/bench.sh does, and runs them all).
            """,
        subcommands: [
            RelayBenchCommand.self, CallsBenchCommand.self, ConnectionsBenchCommand.self, MachineBenchCommand.self,
            MediaBenchCommand.self, BenchServeCommand.self, FailoverBenchCommand.self,
        ]
    )
}
