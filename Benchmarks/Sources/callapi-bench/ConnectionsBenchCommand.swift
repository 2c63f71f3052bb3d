import ArgumentParser
import Foundation

/// `callapi-bench connections`: idle logged-in connections, server memory per connection and connection rate.
struct ConnectionsBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connections",
        abstract:
            "N idle logged-in connections to a child `callapi-bench serve`: server memory per connection, connect rate."
    )

    @Option(help: "Idle connections to open.") var count = 10_000
    @Option(help: "Logins in flight at once.") var concurrency = 50
    @Option(help: "Seconds over which idle CPU is read (default: one server ping sweep, two client pings).")
    var idleSeconds = ConnectionsBench.Settings().idleSeconds

    func run() async throws {
        guard count > 0, count <= 100_000, concurrency > 0, idleSeconds > 0, idleSeconds <= 600 else {
            throw ValidationError("count in 1...100000, a positive concurrency and idle seconds in (0, 600]")
        }
        var settings = ConnectionsBench.Settings()
        settings.count = count
        settings.concurrency = concurrency
        settings.idleSeconds = idleSeconds
        let report = try await ConnectionsBench(settings: settings).run(executable: Self.ownExecutable()) {
            BenchOutput.progress($0)
        }
        print(ConnectionsReportTable.render(report))
        print(BenchJSONLine.render(report))
    }

    /// This very binary, to run `callapi-bench serve` from.
    static func ownExecutable() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}

/// The connections report as a markdown table.
enum ConnectionsReportTable {
    static func render(_ report: ConnectionsBench.Report) -> String {
        var table = MarkdownTable([
            "connections", "failed", "connect s", "connections/s", "server RSS before KiB", "server RSS after KiB",
            "server bytes/connection", "idle CPU µs per connection-second: server / clients",
        ])
        table.add([
            "\(report.connected)", "\(report.failed)", MarkdownTable.format(report.connectSeconds, decimals: 2),
            MarkdownTable.format(report.connectionsPerSecond, decimals: 0), "\(report.serverBaselineRSSKiB)",
            "\(report.serverRSSKiB)", "\(report.serverBytesPerConnection)",
            [report.serverIdleCPUMicros, report.clientIdleCPUMicros].map {
                $0.map { MarkdownTable.format($0, decimals: 2) } ?? "—"
            }.joined(separator: " / "),
        ])
        return "### Idle connections, our server as a child process\n\n" + table.render() + "\n"
    }
}
