import CallAPIServerTesting
import CallAPISignalClient
import Foundation
import NIOConcurrencyHelpers
import Testing

/// Three `callapi serve` processes on the real PostgreSQL while nodes are killed (SIGKILL, then restarted) and
/// stopped (SIGSTOP, then resumed) at random, one at a time, under pairs of clients that know all three nodes.
///
/// Each pair works as CallAPI does: the sender sends message k and sends it again every second until the receiver's
/// acknowledgement of k comes back; the receiver acknowledges every copy. Checked for every pair: it never gets
/// stuck (each message is acknowledged once the faults stop), and the receiver got every message. Counted: faults,
/// messages, copies the server answered `delivered` that never arrived (the window between a node's last write and
/// its death, docs/scale-out.md), and duplicates.
///
/// CI runs `CALLAPI_CLUSTER_FAULTS` faults (default 6); the 200 ran the same test with more.
@Suite(
    .enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing),
    .enabled(if: CLIProcess.executable != nil, "the callapi executable is not built"))
struct ClusterFaultTests {
    static let faults = Int(ProcessInfo.processInfo.environment["CALLAPI_CLUSTER_FAULTS"] ?? "") ?? 6
    static let pairs = 4

    /// What a pair's two clients saw.
    final class PairLog: Sendable {
        struct Counts {
            var acknowledged = 0
            var received: Set<Int> = []
            var copiesReceived: Set<String> = []
            var duplicates = 0
            var answeredDelivered: Set<String> = []
            /// The sender got its last message through after the faults.
            var done = false
        }
        let counts = NIOLockedValueBox(Counts())
    }

    @Test func pairsOfClientsNeverGetStuckAndLoseNothingWhileNodesAreKilledAndStopped() async throws {
        let cluster = try await FaultedCluster.start("f", database: try await LedgerBackend.freshPostgresURL())
        defer { cluster.killAll() }
        let urls = cluster.urls

        func client(_ user: String, first: Int) async throws -> SignalClient {
            // Each client starts on its own node, and knows the others in turn.
            var configuration = SignalClientConfiguration(urls: (0..<3).map { urls[(first + $0) % 3] })
            configuration.backoffBaseMillis = 100
            configuration.backoffMaxMillis = 1_000
            configuration.pingIntervalMillis = 500
            configuration.livenessTimeoutMillis = 2_000
            configuration.requestTimeoutMillis = 2_000
            let client = SignalClient(configuration: configuration)
            try await client.login(token: try await ClusterNodeDeathTests.token(user))
            return client
        }

        let stop = NIOLockedValueBox(false)
        var logs: [PairLog] = []
        var tasks: [Task<Void, Never>] = []
        var clients: [SignalClient] = []
        for pair in 0..<Self.pairs {
            let senderId = "\(7100 + pair)"
            let receiverId = "\(7200 + pair)"
            let sender = try await client(senderId, first: pair % 3)
            let receiver = try await client(receiverId, first: (pair + 1) % 3)
            clients += [sender, receiver]
            let log = PairLog()
            logs.append(log)
            let receiverEvents = receiver.events()
            let senderEvents = sender.events()
            tasks.append(
                Task {
                    for await event in receiverEvents {
                        guard case .message(let from, let body, _) = event, from == senderId else { continue }
                        let parts = body.split(separator: ":")
                        guard parts.count == 3, let k = Int(parts[1]) else { continue }
                        log.counts.withLockedValue { counts in
                            if !counts.received.insert(k).inserted { counts.duplicates += 1 }
                            counts.copiesReceived.insert(body)
                        }
                        _ = try? await receiver.send(to: senderId, body: "a:\(k)")
                    }
                })
            let acknowledged = NIOLockedValueBox(Set<Int>())
            tasks.append(
                Task {
                    for await event in senderEvents {
                        if case .message(_, let body, _) = event, body.hasPrefix("a:"), let k = Int(body.dropFirst(2)) {
                            acknowledged.withLockedValue { _ = $0.insert(k) }
                        }
                    }
                })
            tasks.append(
                Task {
                    var k = 1
                    // Message after message until the faults are over: the one in flight then is the last.
                    while !Task.isCancelled {
                        var attempt = 0
                        while !acknowledged.withLockedValue({ $0.contains(k) }) {
                            attempt += 1
                            let body = "n:\(k):\(attempt)"
                            if case .delivered = try? await sender.send(to: receiverId, body: body) {
                                log.counts.withLockedValue { _ = $0.answeredDelivered.insert(body) }
                            }
                            let deadline = ContinuousClock.now + .seconds(1)
                            while ContinuousClock.now < deadline, !acknowledged.withLockedValue({ $0.contains(k) }) {
                                try? await Task.sleep(for: .milliseconds(10))
                            }
                            if Task.isCancelled { return }
                        }
                        log.counts.withLockedValue { $0.acknowledged = k }
                        if stop.withLockedValue({ $0 }) {
                            log.counts.withLockedValue { $0.done = true }
                            return
                        }
                        k += 1
                    }
                })
        }

        // The faults: one node at a time, killed and restarted, or stopped and resumed.
        var kills = 0
        var stops = 0
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<Self.faults {
            try await Task.sleep(for: .milliseconds(Int.random(in: 500...1_500, using: &generator)))
            let index = Int.random(in: 0..<3, using: &generator)
            if Bool.random(using: &generator) {
                try await cluster.killAndRestart(index, using: &generator)
                kills += 1
            } else {
                try await cluster.stopAndResume(index, using: &generator)
                stops += 1
            }
        }
        stop.withLockedValue { $0 = true }
        // Every pair finishes the message it has in flight once the faults are over.
        let pairLogs = logs
        let finished = try? await withTimeout(60, "every pair to finish its message in flight") {
            while pairLogs.contains(where: { log in !log.counts.withLockedValue { $0.done } }) {
                try await Task.sleep(for: .milliseconds(50))
            }
            return true
        }
        try await Task.sleep(for: .seconds(2))
        for task in tasks { task.cancel() }
        for client in clients { client.logout() }

        var messages = 0
        var lostAnswers = 0
        var duplicates = 0
        for (pair, log) in logs.enumerated() {
            let counts = log.counts.withLockedValue { $0 }
            messages += counts.acknowledged
            duplicates += counts.duplicates
            lostAnswers += counts.answeredDelivered.subtracting(counts.copiesReceived).count
            // Never stuck: the pair got through at least one message, and nothing it sent is missing.
            #expect(counts.acknowledged > 0, "pair \(pair) never got a message through")
            #expect(
                Set(1...max(1, counts.acknowledged)).isSubset(of: counts.received),
                "pair \(pair): acknowledged \(counts.acknowledged), received \(counts.received.sorted())")
        }
        #expect(finished == true, "a pair was stuck after the faults")
        print(
            "cluster faults: \(kills) kills, \(stops) stops, \(messages) messages acknowledged end to end, "
                + "\(lostAnswers) copies answered delivered that never arrived, \(duplicates) duplicates")
    }
}
