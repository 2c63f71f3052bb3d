import ArgumentParser

/// `callapi bench`: performance figures for the relay, call flows, idle connections and the state machine.
///
/// Every subcommand prints a markdown table and then one line of JSON (`{"bench":...}`) for scripts.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks: relay latency, call flows, idle connections, the state machine.",
        discussion: """
            Each run is bounded and stops by itself; servers are started on 127.0.0.1 only. \
            Build with -c release for figures worth quoting.
            """,
        subcommands: [
            RelayBenchCommand.self, CallsBenchCommand.self, ConnectionsBenchCommand.self, MachineBenchCommand.self,
            MediaBenchCommand.self,
        ]
    )
}
