import CallAPIServer
import CallAPISignalClient
import Foundation
import Histogram
import Logging
import NIOConcurrencyHelpers

/// A node of a two-node cluster killed with SIGKILL (docs/scale-out.md). Node B holds `movers` clients that know
/// both nodes' URLs and `stayers` that know only B's; an observer on node A is subscribed to presence. Right after
/// the kill the observer sends each mover a message, which B's mailbox holds. Measured from the kill: each mover
/// logged in again (on A), each mover's message delivered there, and every stayer shown offline to the observer.
struct FailoverBench {
    struct Settings: Sendable {
        var callapi: String
        var database: String
        var movers = 100
        var stayers = 50
        var rounds = 3
        var secret = "failover-bench-secret-0123456789-abcdef"
    }

    struct Report: Codable, Sendable {
        var bench = "failover"
        var movers: Int
        var stayers: Int
        var rounds: Int
        /// Kill → each mover connected again on the survivor, ms.
        var reconnect: LatencySummary
        /// Kill → each mover's held message delivered on the survivor, ms.
        var firstHeldMessage: LatencySummary
        /// Kill → the observer shown every stayer offline, ms, one per round.
        var presenceConverged: [Double]
        /// Messages answered delivered that never arrived.
        var lost: Int
    }

    let settings: Settings

    func run(log: @Sendable (String) -> Void) async throws -> Report {
        var reconnect = Histogram<UInt64>(
            highestTrackableValue: 600_000_000_000, numberOfSignificantValueDigits: .three)
        var held = Histogram<UInt64>(highestTrackableValue: 600_000_000_000, numberOfSignificantValueDigits: .three)
        var converged: [Double] = []
        var lost = 0
        for round in 1...settings.rounds {
            log("round \(round): starting two nodes")
            let outcome = try await oneRound(round: round, log: log)
            for value in outcome.reconnect { reconnect.record(value) }
            for value in outcome.held { held.record(value) }
            converged.append(Double(outcome.converged) / 1_000_000)
            lost += outcome.lost
        }
        // The summaries are in µs; the report says ms.
        func millis(_ summary: LatencySummary) -> LatencySummary {
            LatencySummary(
                count: summary.count, p50: summary.p50 / 1000, p90: summary.p90 / 1000, p99: summary.p99 / 1000,
                p999: summary.p999 / 1000, max: summary.max / 1000, mean: summary.mean / 1000)
        }
        return Report(
            movers: settings.movers, stayers: settings.stayers, rounds: settings.rounds,
            reconnect: millis(LatencySummary(nanos: reconnect)), firstHeldMessage: millis(LatencySummary(nanos: held)),
            presenceConverged: converged, lost: lost)
    }

    struct Outcome {
        var reconnect: [UInt64]
        var held: [UInt64]
        var converged: UInt64
        var lost: Int
    }

    private func oneRound(round: Int, log: @Sendable (String) -> Void) async throws -> Outcome {
        let a = try NodeProcess(
            callapi: settings.callapi, id: "fo_a", database: settings.database, secret: settings.secret)
        let b = try NodeProcess(
            callapi: settings.callapi, id: "fo_b", database: settings.database, secret: settings.secret)
        defer {
            a.kill()
            b.kill()
        }
        let portA = try await a.port()
        let portB = try await b.port()
        let authority = try await TokenAuthority.make(key: .hs256(secret: settings.secret))
        var logger = Logger(label: "callapi.bench.failover")
        logger.logLevel = .critical
        func client(_ user: String, urls: [String]) async throws -> SignalClient {
            var configuration = SignalClientConfiguration(urls: urls)
            configuration.backoffBaseMillis = 100
            let client = SignalClient(configuration: configuration, logger: logger)
            try await client.login(token: try await authority.issue(userId: user, ttlSeconds: 3600).token)
            return client
        }
        let observer = try await client("900000", urls: ["ws://127.0.0.1:\(portA)"])
        let presence = observer.events()
        _ = try await observer.subscribePresence()
        let base = 910_000 + round * 1_000
        var movers: [SignalClient] = []
        for index in 0..<settings.movers {
            movers.append(
                try await client("\(base + index)", urls: ["ws://127.0.0.1:\(portB)", "ws://127.0.0.1:\(portA)"]))
        }
        var stayers: [SignalClient] = []
        for index in 0..<settings.stayers {
            stayers.append(try await client("\(base + 500 + index)", urls: ["ws://127.0.0.1:\(portB)"]))
        }
        let stayerIds = Set((0..<settings.stayers).map { "\(base + 500 + $0)" })
        let everyone = stayerIds.union((0..<settings.movers).map { "\(base + $0)" })
        log("round \(round): waiting until node A sees all \(everyone.count) clients of node B")
        let seen = NIOLockedValueBox(Set<String>())
        try await withDeadline(seconds: 20, "node A to see node B's clients") {
            while !everyone.isSubset(of: seen.withLockedValue { $0 }) {
                let online = Set(try await observer.onlineUsers())
                seen.withLockedValue { $0 = online }
                if !everyone.isSubset(of: online) { try await Task.sleep(for: .milliseconds(50)) }
            }
        }

        // The clock starts at the kill.
        let reconnected = NIOLockedValueBox([UInt64]())
        let received = NIOLockedValueBox([UInt64]())
        var watchers: [Task<Void, Never>] = []
        let killedAt = NIODeadlineClock.now
        for mover in movers {
            let states = mover.stateUpdates()
            let events = mover.events()
            watchers.append(
                Task {
                    var lost = false
                    for await state in states {
                        if case .reconnecting = state { lost = true }
                        if lost, case .connected = state {
                            reconnected.withLockedValue { $0.append(NIODeadlineClock.since(killedAt)) }
                            return
                        }
                    }
                })
            watchers.append(
                Task {
                    for await event in events {
                        if case .message(let from, let body, _) = event, from == "900000", body == "after-the-kill" {
                            received.withLockedValue { $0.append(NIODeadlineClock.since(killedAt)) }
                            return
                        }
                    }
                })
        }
        b.kill()
        log("round \(round): node B killed")
        var delivered = 0
        for index in 0..<settings.movers {
            if let outcome = try? await observer.send(to: "\(base + index)", body: "after-the-kill"),
                case .delivered = outcome
            {
                delivered += 1
            }
        }
        let convergedAt = NIOLockedValueBox<UInt64>(0)
        try await withDeadline(seconds: 30, "node A to show every stayer offline") {
            var offline = Set<String>()
            for await event in presence {
                if case .presenceChanged(let user, false) = event, stayerIds.contains(user) {
                    offline.insert(user)
                    if offline == stayerIds {
                        convergedAt.withLockedValue { $0 = NIODeadlineClock.since(killedAt) }
                        return
                    }
                }
            }
        }
        let expected = delivered
        let moverCount = movers.count
        try? await withDeadline(seconds: 30, "the movers' messages") {
            while received.withLockedValue({ $0.count }) < expected
                || reconnected.withLockedValue({ $0.count }) < moverCount
            {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        for watcher in watchers { watcher.cancel() }
        for client in movers + stayers + [observer] { client.logout() }
        let arrived = received.withLockedValue { $0.count }
        return Outcome(
            reconnect: reconnected.withLockedValue { $0 }, held: received.withLockedValue { $0 },
            converged: convergedAt.withLockedValue { $0 }, lost: max(0, delivered - arrived))
    }

    static func table(_ report: Report) -> String {
        var table = MarkdownTable(["from the SIGKILL", "p50 ms", "p99 ms", "max ms", "count"])
        let f = { (value: Double) in MarkdownTable.format(value) }
        table.add(
            ["mover logged in again on the survivor"]
                + [report.reconnect.p50, report.reconnect.p99, report.reconnect.max].map(f) + [
                    "\(report.reconnect.count)"
                ])
        table.add(
            ["mover's held message delivered there"]
                + [report.firstHeldMessage.p50, report.firstHeldMessage.p99, report.firstHeldMessage.max].map(f)
                + ["\(report.firstHeldMessage.count)"])
        let sorted = report.presenceConverged.sorted()
        table.add(
            ["every stayer offline on the survivor"]
                + [sorted[sorted.count / 2], sorted.last ?? 0, sorted.last ?? 0].map(f)
                + ["\(sorted.count)"])
        return "### Node killed (SIGKILL) under \(report.movers) moving and \(report.stayers) gone clients, "
            + "\(report.rounds) rounds\n\n" + table.render()
            + "\nMessages answered delivered and lost: \(report.lost)\n"
    }
}

/// Monotonic nanoseconds.
enum NIODeadlineClock {
    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }
    static func since(_ start: UInt64) -> UInt64 { now - start }
}

/// Runs `body`, failing with a message naming `what` after `seconds`.
func withDeadline(seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            throw BenchTimeout(what: what)
        }
        try await group.next()
        group.cancelAll()
    }
}

struct BenchTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// `callapi serve` as a node of the bench's cluster, in its own process.
final class NodeProcess: Sendable {
    private let process: Process
    private let output: Pipe

    init(callapi: String, id: String, database: String, secret: String) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: callapi)
        process.arguments = [
            "serve", "--port", "0", "--node-id", id, "--cluster-database", database, "--ledger", "0", "--secret",
            secret, "--rate", "100000", "--burst", "100000",
        ]
        output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// The port, from the line the server prints once it listens.
    func port() async throws -> Int {
        let handle = output.fileHandleForReading
        return try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                var text = ""
                while true {
                    let data = handle.availableData
                    if data.isEmpty { throw BenchTimeout(what: "the node's port (it exited)") }
                    text += String(decoding: data, as: UTF8.self)
                    if let range = text.range(of: "listening on ws://127.0.0.1:") {
                        let digits = text[range.upperBound...].prefix { $0.isNumber }
                        if let port = Int(digits), text[range.upperBound...].contains("/") { return port }
                    }
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                throw BenchTimeout(what: "the node to listen")
            }
            let port = try await group.next()!
            group.cancelAll()
            return port
        }
    }

    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
