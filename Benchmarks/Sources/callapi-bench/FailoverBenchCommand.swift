import ArgumentParser
import Foundation

/// `callapi-bench failover`: a node of a cluster killed with SIGKILL under logged-in clients (docs/scale-out.md).
struct FailoverBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "failover",
        abstract:
            "Kill a cluster node under its clients: time to log in elsewhere, to the first held message, to presence.")

    @Option(help: "The callapi executable the nodes run (callapi serve).") var callapi: String
    @Option(help: "The cluster's PostgreSQL, postgres://user@host:port/database.") var database: String
    @Option(help: "Clients with both nodes' URLs, which move to the survivor.") var movers = 100
    @Option(help: "Clients with only the killed node's URL, which stay gone (presence must drop them).")
    var stayers = 50
    @Option(help: "Kills, each with fresh nodes and clients.") var rounds = 3

    func run() async throws {
        guard movers > 0, stayers > 0, rounds > 0, rounds <= 20 else {
            throw ValidationError("movers, stayers and rounds must be positive (rounds at most 20)")
        }
        var settings = FailoverBench.Settings(callapi: callapi, database: database)
        settings.movers = movers
        settings.stayers = stayers
        settings.rounds = rounds
        let report = try await FailoverBench(settings: settings).run { BenchOutput.progress($0) }
        print(FailoverBench.table(report))
        print(BenchJSONLine.render(report))
    }
}
