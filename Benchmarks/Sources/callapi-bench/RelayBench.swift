import CallAPI
import NIOConcurrencyHelpers
import NIOCore

/// One-way message latency through a relay (our server, or `--peer` Mosquitto or Synapse) between pairs of real
/// signaling clients on loopback.
///
/// Sender `i` sends to receiver `i` through `sendMessage` (as CallAPI does; the completion is the server's
/// acknowledgement). The payload starts with the send time, so the receiver computes the one-way latency on the
/// process's monotonic clock.
struct RelayBench {
    struct Settings: Sendable {
        var pairs = 50
        /// Fixed offered loads, messages per second over all pairs.
        var rates: [Double] = [1_000, 10_000, 50_000]
        var secondsPerRate = 3.0
        var warmupSeconds = 1.0
        var payloadBytes = 256
        /// Find the saturation point: step the rate up until p99 reaches `saturationP99Micros`.
        var findSaturation = true
        var saturationRates: [Double] = [
            1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 80_000, 100_000,
        ]
        var saturationSeconds = 2.0
        var saturationP99Micros = 10_000.0
        /// How long to wait, after the last send, for the answers still in flight.
        var drainSeconds = 5.0
        /// Unanswered sends at which a step stops early (the server is saturated), which bounds the backlog.
        var maxInFlight = 20_000
        /// The relay measured: our server (default), Mosquitto or Synapse.
        var peer = BenchPeerSettings()
        /// The server's process, when it runs in another one: its CPU time is read around each step.
        var serverPID: Int?
    }

    struct Step: Codable, Sendable {
        var offeredRate: Double
        var achievedRate: Double
        var sent: Int
        var acknowledged: Int
        var failed: Int
        var delivered: Int
        /// Whether every answer came back within the drain time after the last send, and the sender never had
        /// more than the in-flight cap unanswered; if not, the server is saturated and heavier steps are skipped.
        var drained: Bool
        /// Send → received by the other client.
        var oneWay: LatencySummary
        /// Send → the server's acknowledgement back at the sender.
        var ack: LatencySummary
        /// CPU time this process (every client, and the load's pacing) used during the step, drain included.
        var benchCPU: ProcessCPU?
        /// CPU time the server's process used during the step (with `serverPID`).
        var serverCPU: ProcessCPU?

        var lost: Int { sent - delivered }
        /// Sent at the offered rate, all delivered, p99 under the bar.
        func holds(p99UnderMicros bar: Double) -> Bool {
            drained && achievedRate >= offeredRate * 0.95 && delivered == sent && failed == 0 && oneWay.p99 < bar
        }
    }

    struct Report: Codable, Sendable {
        var bench = "relay"
        var peer = "ours"
        /// How tables name the peer.
        var peerTitle = "our server"
        var pairs: Int
        var payloadBytes: Int
        var steps: [Step]
        var saturationSteps: [Step]
        /// The highest stepped rate whose p99 stayed under the bar (nil if none did, or not searched).
        var saturationRate: Double?
        var saturationP99Micros: Double
        /// Messages sent while warming up, before the steps (for figures read around the whole run, such as the
        /// cluster database's commits).
        var warmupSent = 0
    }

    let settings: Settings

    func run(log: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        let peer = try await settings.peer.start()
        let probe = RelayProbe()
        var senders: [any BenchPeerClient] = []
        var receivers: [String] = []
        var clients: [any BenchPeerClient] = []
        do {
            log("logging in \(settings.pairs * 2) clients to \(peer.title)")
            for index in 0..<settings.pairs {
                let loop = BenchLoops.forPair(index)
                let sender = try await peer.client(user: "\(100_000 + index)", on: loop)
                let receiver = try await peer.client(user: "\(200_000 + index)", on: loop)
                receiver.addListener(listener: probe)
                senders.append(sender)
                receivers.append("\(200_000 + index)")
                clients += [sender, receiver]
            }
            let load = RelayLoad(
                senders: senders, receivers: receivers, probe: probe, payloadBytes: settings.payloadBytes,
                maxInFlight: settings.maxInFlight, serverPID: settings.serverPID)
            var warmupSent = 0
            if settings.warmupSeconds > 0 {
                log("warming up")
                warmupSent = await load.step(
                    rate: min(5_000, settings.rates.first ?? 1_000), seconds: settings.warmupSeconds,
                    drainSeconds: settings.drainSeconds
                ).sent
            }
            var steps: [Step] = []
            for rate in settings.rates {
                if let last = steps.last, !last.drained, rate >= last.offeredRate {
                    log("skipping \(Int(rate)) msg/s: the previous load did not drain")
                    continue
                }
                log("offered \(Int(rate)) msg/s for \(settings.secondsPerRate) s")
                steps.append(
                    await load.step(rate: rate, seconds: settings.secondsPerRate, drainSeconds: settings.drainSeconds))
            }
            var saturationSteps: [Step] = []
            var saturation: Double?
            if settings.findSaturation {
                for rate in settings.saturationRates {
                    log("saturation: offered \(Int(rate)) msg/s for \(settings.saturationSeconds) s")
                    let step = await load.step(
                        rate: rate, seconds: settings.saturationSeconds, drainSeconds: settings.drainSeconds)
                    saturationSteps.append(step)
                    guard step.holds(p99UnderMicros: settings.saturationP99Micros) else { break }
                    saturation = rate
                }
            }
            for client in clients { await client.close() }
            await peer.stop()
            return Report(
                peer: settings.peer.kind.rawValue, peerTitle: peer.title, pairs: settings.pairs,
                payloadBytes: settings.payloadBytes, steps: steps,
                saturationSteps: saturationSteps,
                saturationRate: saturation, saturationP99Micros: settings.saturationP99Micros, warmupSent: warmupSent)
        } catch {
            for client in clients { await client.close() }
            await peer.stop()
            throw error
        }
    }
}

/// Sends one step's messages and gathers what came back.
struct RelayLoad: Sendable {
    let senders: [any BenchPeerClient]
    let receivers: [String]
    let probe: RelayProbe
    let padding: String
    let maxInFlight: Int
    let serverPID: Int?

    init(
        senders: [any BenchPeerClient], receivers: [String], probe: RelayProbe, payloadBytes: Int, maxInFlight: Int,
        serverPID: Int?
    ) {
        self.senders = senders
        self.receivers = receivers
        self.probe = probe
        self.maxInFlight = maxInFlight
        self.serverPID = serverPID
        padding = String(repeating: "x", count: max(0, payloadBytes - 24))
    }

    func step(rate: Double, seconds: Double, drainSeconds: Double) async -> RelayBench.Step {
        await probe.settle()
        let tag = probe.reset()
        let benchBefore = ProcessCPU.read("self")
        let serverBefore = serverPID.flatMap { ProcessCPU.read(String($0)) }
        let senders = senders, receivers = receivers, probe = probe, padding = padding, cap = maxInFlight
        let outcome = await LoadGenerator.run(rate: rate, seconds: seconds) { index in
            guard index - probe.answered < cap else { return false }
            let pair = index % senders.count
            let sentAt = BenchClock.nanos()
            senders[pair].sendMessage(userId: receivers[pair], message: "\(tag);\(sentAt);\(padding)") { error in
                probe.acknowledged(tag: tag, sentAt: sentAt, failed: error != nil)
            }
            return true
        }
        let deadline = BenchClock.nanos() + UInt64(drainSeconds * 1e9)
        var drained = false
        while BenchClock.nanos() < deadline {
            let counts = probe.counts
            if counts.acknowledged + counts.failed >= outcome.sent, counts.delivered >= counts.acknowledged {
                drained = true
                break
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        let counts = probe.counts
        let benchCPU = benchBefore.flatMap { before in ProcessCPU.read("self")?.since(before) }
        let serverCPU = serverBefore.flatMap { before in
            serverPID.flatMap { ProcessCPU.read(String($0)) }?.since(before)
        }
        return RelayBench.Step(
            offeredRate: rate, achievedRate: (outcome.achievedRate).rounded(), sent: outcome.sent,
            acknowledged: counts.acknowledged, failed: counts.failed, delivered: counts.delivered,
            drained: drained && !outcome.stoppedEarly, oneWay: probe.oneWay.summary, ack: probe.ack.summary,
            benchCPU: benchCPU, serverCPU: serverCPU)
    }
}

/// The receivers' listener and the senders' acknowledgement counter.
final class RelayProbe: ISignalClientListener {
    struct Counts: Sendable {
        var acknowledged = 0
        var failed = 0
        var delivered = 0
        var step = 0
        /// When the last answer of any step arrived.
        var lastAnswerAt: UInt64 = 0
    }

    let oneWay = LatencyRecorder()
    let ack = LatencyRecorder()
    private let tally = NIOLockedValueBox(Counts())

    var counts: Counts { tally.withLockedValue { $0 } }
    /// Acknowledgements and failures of this step so far.
    var answered: Int { tally.withLockedValue { $0.acknowledged + $0.failed } }

    /// Waits (60 s at most) until nothing has arrived for 300 ms, so a saturated step's backlog does not spill
    /// into the next one.
    func settle() async {
        let deadline = BenchClock.nanos() + 60_000_000_000
        while BenchClock.nanos() < deadline,
            BenchClock.nanos() &- tally.withLockedValue({ $0.lastAnswerAt }) < 300_000_000
        {
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Starts a new step; returns its tag. Late answers from an earlier step carry an older tag and are ignored.
    func reset() -> Int {
        let tag = tally.withLockedValue {
            $0 = Counts(step: $0.step + 1, lastAnswerAt: $0.lastAnswerAt)
            return $0.step
        }
        _ = oneWay.takeSummary()
        _ = ack.takeSummary()
        return tag
    }

    func acknowledged(tag: Int, sentAt: UInt64, failed: Bool) {
        let now = BenchClock.nanos()
        let current = tally.withLockedValue {
            $0.lastAnswerAt = now
            guard $0.step == tag else { return false }
            if failed { $0.failed += 1 } else { $0.acknowledged += 1 }
            return true
        }
        if current, !failed { ack.record(nanos: now &- sentAt) }
    }

    func onMessageReceive(message: String) {
        let now = BenchClock.nanos()
        // "tag;sentAt;padding", read as bytes: splitting by `Character` cost ~8,500 instructions per message, in
        // the process that shares the cores with the server under test.
        guard let (tag, sentAt) = Self.stamp(message) else { return }
        let current = tally.withLockedValue {
            $0.lastAnswerAt = now
            guard $0.step == tag else { return false }
            $0.delivered += 1
            return true
        }
        if current { oneWay.record(nanos: now &- sentAt) }
    }

    func onMessageReceive(message: String, from sender: SignalSender) { onMessageReceive(message: message) }

    /// The step tag and send time at the front of a probe message ("tag;sentAt;…"), or nil if it has none.
    static func stamp(_ message: String) -> (tag: Int, sentAt: UInt64)? {
        var tag: UInt64?
        var value: UInt64 = 0
        var digits = 0
        for byte in message.utf8 {
            if byte == UInt8(ascii: ";") {
                guard digits > 0 else { return nil }
                guard let first = tag else {
                    tag = value
                    value = 0
                    digits = 0
                    continue
                }
                return Int(exactly: first).map { ($0, value) }
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 19 else { return nil }
            value = value * 10 + UInt64(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return nil
    }
}
