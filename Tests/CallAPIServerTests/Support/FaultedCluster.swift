import Foundation
import NIOConcurrencyHelpers

/// Three `callapi serve` processes on fixed loopback ports (so that a restarted node takes its port again), and the
/// node faults of the cluster fault tests: one node killed with SIGKILL and restarted, or stopped with SIGSTOP and
/// resumed, after random pauses.
final class FaultedCluster: Sendable {
    let database: String
    let ports: [Int]
    /// Each node's id, by index.
    let ids: [String]
    /// The call ledger's flags each node starts (and restarts) with.
    let ledger: [String]
    private let processes: NIOLockedValueBox<[CLIProcess?]>

    private init(database: String, ports: [Int], ids: [String], processes: [CLIProcess?], ledger: [String]) {
        self.database = database
        self.ports = ports
        self.ids = ids
        self.ledger = ledger
        self.processes = NIOLockedValueBox(processes)
    }

    /// Starts three nodes named `prefix0` … `prefix2` on `database`, each with `ledger`'s flags.
    static func start(
        _ prefix: String, database: String, ledger: [String] = ["--ledger", "0"]
    ) async throws -> FaultedCluster {
        var ports: [Int] = []
        for _ in 0..<3 { ports.append(try await freeLoopbackPort()) }
        let ids = (0..<3).map { "\(prefix)\($0)" }
        var processes: [CLIProcess?] = []
        for index in 0..<3 {
            let (process, _) = try await ClusterNodeDeathTests.node(
                ids[index], database: database, port: ports[index], ledger: ledger)
            processes.append(process)
        }
        return FaultedCluster(database: database, ports: ports, ids: ids, processes: processes, ledger: ledger)
    }

    /// The nodes' WebSocket URLs, by index.
    var urls: [String] { ports.map { "ws://127.0.0.1:\($0)" } }

    /// Kills node `index` (SIGKILL) and, after 0.2–1.5 s, starts it again on its port.
    func killAndRestart(_ index: Int, using generator: inout some RandomNumberGenerator) async throws {
        processes.withLockedValue { $0[index] }?.kill()
        try await Task.sleep(for: .milliseconds(Int.random(in: 200...1_500, using: &generator)))
        let (restarted, _) = try await ClusterNodeDeathTests.node(
            ids[index], database: database, port: ports[index], ledger: ledger)
        processes.withLockedValue { $0[index] = restarted }
    }

    /// Stops node `index` (SIGSTOP) for 0.5–3 s, then resumes it.
    func stopAndResume(_ index: Int, using generator: inout some RandomNumberGenerator) async throws {
        guard let process = processes.withLockedValue({ $0[index] }) else { return }
        kill(process.processIdentifier, SIGSTOP)
        try await Task.sleep(for: .milliseconds(Int.random(in: 500...3_000, using: &generator)))
        kill(process.processIdentifier, SIGCONT)
    }

    /// Stops every node cleanly (SIGINT), waiting for each to exit.
    func interruptAll() async {
        for process in processes.withLockedValue({ $0 }) {
            process?.interrupt()
            _ = try? await process?.finish()
        }
    }

    /// Kills every node still running (the test's way out on any path).
    func killAll() {
        processes.withLockedValue { $0.forEach { $0?.kill() } }
    }
}
