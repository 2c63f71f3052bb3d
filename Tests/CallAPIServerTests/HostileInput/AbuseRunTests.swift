#if canImport(Glibc)
    import CallAPI
    import CallAPIServer
    import CallAPISignalClient
    import CallAPISignalProtocol
    import CallAPITesting
    import Foundation
    import NIOConcurrencyHelpers
    import Testing

    /// The abuse run (scripts/abuse.sh): `callapi serve` in its own process, 100 honest pairs placing calls through
    /// it while attackers flood, read slowly, slowloris, spam held messages and send oversized frames. It fails if
    /// an honest call fails or the server's peak RSS passes ``rssBoundMiB``.
    @Suite(.serialized) struct AbuseRunTests {
        static let seconds = ProcessInfo.processInfo.environment["CALLAPI_ABUSE_SECONDS"].flatMap(Int.init)
        /// The stated bound on the server's peak resident memory under the run's attacks.
        static let rssBoundMiB = 512
        static let pairs = Int(ProcessInfo.processInfo.environment["CALLAPI_ABUSE_PAIRS"] ?? "") ?? 100
        /// The shortest time from one honest call's start to the next's, per pair.
        static let callSpacing = Duration.seconds(1)
        /// The server under attack: a release build when scripts/abuse.sh names one (users run release builds; a
        /// debug server on two shared cores measures the compiler's debug code, not the server's limits).
        static let serverBuild = ProcessInfo.processInfo.environment["CALLAPI_ABUSE_SERVER"]
        let secret = "abuse-run-secret-0123456789-0123456789-0123"

        @Test(
            .enabled(if: seconds != nil, "the abuse run is opt-in: scripts/abuse.sh sets CALLAPI_ABUSE_SECONDS"),
            .timeLimit(.minutes(60)))
        func honestCallsCompleteWhileAttackersHitTheServer() async throws {
            let seconds = try #require(Self.seconds)
            try #require(CLIProcess.executable != nil, "build the callapi executable first (swift build)")
            // Its files in a folder of its own, not the platform's data folder of whoever runs the tests.
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("abuse-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: data) }
            let arguments = [
                "serve", "--port", "0", "--secret", secret, "--log-level", "error", "--data-dir", data.path,
            ]
            let server = try Self.serverBuild.map { try CLIProcess(build: $0, arguments) } ?? CLIProcess(arguments)
            let listening = try await server.expect("listening on ws://127.0.0.1:", within: 60)
            let port = try #require(
                listening.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) },
                "no port in \(listening)")
            let url = "ws://127.0.0.1:\(port)/v1/signal"
            let authority = try await TokenAuthority.make(key: .hs256(secret: secret))
            let stop = NIOLockedValueBox(false)
            let attackCounts = NIOLockedValueBox([String: Int]())
            @Sendable func count(_ what: String) { attackCounts.withLockedValue { $0[what, default: 0] += 1 } }

            // Attackers, each on a thread of its own with blocking sockets (never on the concurrency pool).
            var tokens: [String: String] = [:]
            for user in ["9001", "9002", "9003", "9004", "9005", "9006"] {
                tokens[user] = try await authority.issue(userId: user, ttlSeconds: 3600).token
            }
            let attacks = Attacks(port: port, tokens: tokens, stop: stop, count: count)
            let threads = attacks.start()

            // The bystander: a fresh login and a ping, five times a second.
            let bystander = Task { () -> [Double] in
                var samples: [Double] = []
                var number = 0
                while !stop.withLockedValue({ $0 }) {
                    number += 1
                    let started = ContinuousClock.now
                    let socket = RawSocket(url: url)
                    let token = try? await authority.issue(userId: "b\(number % 4)", ttlSeconds: 600).token
                    if let token, (try? await socket.login(token)) != nil {
                        socket.send(.ping(.init(id: 1)))
                        if case .pong = try? await socket.frame(timeout: 30) {
                            samples.append((ContinuousClock.now - started) / .milliseconds(1))
                        }
                    }
                    socket.close()
                    try? await Task.sleep(for: .milliseconds(200))
                }
                return samples
            }

            // The honest pairs: call, accept, connected, hang up, again, until time is up.
            let world = SimulatedRTCWorld(clock: SystemCallClock())
            let deadline = ContinuousClock.now + .seconds(seconds)
            let outcomes = try await withThrowingTaskGroup(of: (completed: Int, failed: [String]).self) { group in
                for pair in 0..<Self.pairs {
                    group.addTask {
                        let caller = try await HonestEndpoint(
                            user: UInt(10_000 + 2 * pair), url: url, authority: authority, world: world)
                        let callee = try await HonestEndpoint(
                            user: UInt(10_001 + 2 * pair), url: url, authority: authority, world: world)
                        var completed = 0
                        var failed: [String] = []
                        while ContinuousClock.now < deadline {
                            let started = ContinuousClock.now
                            do {
                                try await caller.call(callee)
                                completed += 1
                            } catch {
                                failed.append("pair \(pair): \(error)")
                                await caller.end(with: callee)
                                await callee.end(with: caller)
                            }
                            // A person places a call at most every `callSpacing`: back to back at machine speed,
                            // a pair outran the per-session rate limit (20 frames a second) that guards the server.
                            try? await Task.sleep(until: started + Self.callSpacing)
                        }
                        await caller.close()
                        await callee.close()
                        return (completed, failed)
                    }
                }
                var total = (completed: 0, failed: [String]())
                for try await outcome in group {
                    total.completed += outcome.completed
                    total.failed += outcome.failed
                }
                return total
            }
            stop.withLockedValue { $0 = true }
            let latencies = await bystander.value.sorted()
            for thread in threads { thread.join() }
            let peakKiB = Self.peakRSSKiB(of: server.processIdentifier)
            server.interrupt()
            _ = try? await server.finish(within: 30)

            func percentile(_ p: Double) -> Double {
                latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
            }
            let report = """
                abuse run: \(seconds) s, \(Self.pairs) honest pairs, server \(Self.serverBuild ?? "debug build")
                  honest calls completed \(outcomes.completed), failed \(outcomes.failed.count)
                  server peak RSS \(peakKiB / 1024) MiB (bound \(Self.rssBoundMiB) MiB)
                  bystander login+ping: \(latencies.count) samples, p50 \(String(format: "%.1f", percentile(0.5))) ms, \
                p99 \(String(format: "%.1f", percentile(0.99))) ms
                  attacks: \(attackCounts.withLockedValue { $0 }.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))

                """
            FileHandle.standardOutput.write(Data(report.utf8))
            try? report.write(toFile: ".build/abuse-report.txt", atomically: true, encoding: .utf8)
            #expect(outcomes.failed.isEmpty, "failed honest calls: \(outcomes.failed.prefix(10))")
            #expect(outcomes.completed > 0)
            #expect(peakKiB / 1024 <= Self.rssBoundMiB)
            #expect(!latencies.isEmpty)
        }

        /// The peak resident set of a process (VmHWM), in KiB.
        static func peakRSSKiB(of pid: Int32) -> Int {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
            for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
                return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
            }
            return 0
        }
    }

    /// One honest user: CallAPI over a signaling client, media simulated.
    private struct HonestEndpoint {
        let user: UInt
        let api: CallApiImpl
        let signal: SignalClient

        init(user: UInt, url: String, authority: TokenAuthority, world: SimulatedRTCWorld) async throws {
            self.user = user
            signal = SignalClient(configuration: .init(url: url), logger: quietLogger)
            try await signal.login(token: try await authority.issue(userId: "\(user)", ttlSeconds: 7200).token)
            api = CallApiImpl()
            api.initialize(
                config: CallConfig(
                    userId: user, rtcEngine: world.engine(userId: user), signalClient: signal,
                    clock: SystemCallClock()))
            try await api.prepareForCall(
                prepareConfig: PrepareConfig(
                    roomId: "room-\(user)", callTimeoutMillisecond: 30_000, firstFrameWaittingDisabled: true))
        }

        /// One whole call to `callee`: ring, accept, connected on both sides, hang up, both prepared again.
        func call(_ callee: HonestEndpoint) async throws {
            // Streams made now: what an earlier, failed attempt left in a stream cannot answer for this call.
            let mine = api.stateChanges
            let theirs = callee.api.stateChanges
            try await api.call(remoteUserId: callee.user, callType: .video)
            try await Self.reach(.calling, on: theirs, callee.user)
            try await callee.api.accept(remoteUserId: user)
            try await Self.reach(.connected, on: mine, user)
            try await Self.reach(.connected, on: theirs, callee.user)
            try await api.hangup(remoteUserId: callee.user)
            try await Self.reach(.prepared, on: mine, user)
            try await Self.reach(.prepared, on: theirs, callee.user)
        }

        private static func reach(
            _ state: CallStateType, on changes: AsyncStream<CallStateChange>, _ user: UInt
        ) async throws {
            _ = try await changes.first(within: 30, "\(user) to reach \(state)") { $0.state == state }
        }

        /// After a failed attempt: ends whatever call this endpoint is in (with `peer`), and waits for prepared.
        func end(with peer: HonestEndpoint) async {
            switch api.state {
            case .calling:
                if (try? await api.cancelCall()) == nil { try? await api.reject(remoteUserId: peer.user) }
            case .connecting, .connected:
                try? await api.hangup(remoteUserId: peer.user)
            default:
                break
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while api.state != .prepared, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(50))
            }
        }

        func close() async {
            await api.deinitialize()
            signal.logout()
        }
    }

    /// The attackers of the abuse run.
    private struct Attacks: Sendable {
        let port: Int
        let tokens: [String: String]
        let stop: NIOLockedValueBox<Bool>
        let count: @Sendable (String) -> Void

        var stopped: Bool { stop.withLockedValue { $0 } }

        func start() -> [AttackThread] {
            var threads: [AttackThread] = []
            // Flooders: log in, then send pings as fast as the socket takes them, never reading.
            for user in ["9001", "9002"] {
                threads.append(AttackThread { self.flood(user) })
            }
            // A slow reader that never reads, and a sender of big messages to it.
            threads.append(AttackThread { self.slowReader("9003") })
            threads.append(AttackThread { self.bigSender(from: "9004", to: "9003") })
            // Held-message spam: big messages with a long TTL to ever new offline users.
            threads.append(AttackThread { self.heldSpam("9005") })
            // Slowloris: 200 connections that never finish their request head, reopened when closed.
            for _ in 0..<4 { threads.append(AttackThread { self.slowloris(connections: 50) }) }
            // Oversized frames, unauthenticated.
            threads.append(AttackThread { self.oversized() })
            for thread in threads { thread.start() }
            return threads
        }

        private func loggedIn(_ user: String, receiveBuffer: Int32? = nil) -> TCPProbe? {
            guard let probe = try? TCPProbe(port: port, receiveBuffer: receiveBuffer) else { return nil }
            let login = FrameCoding.encode(ClientFrame.login(.init(id: 1, token: tokens[user] ?? "")))
            guard (try? probe.writeUpgrade(path: SignalProtocol.webSocketPath)) != nil,
                (try? probe.write(TCPProbe.frame(opcode: 0x1, payload: Array(login.utf8)))) != nil
            else {
                probe.close()
                return nil
            }
            return probe
        }

        private func flood(_ user: String) {
            let ping = TCPProbe.frame(opcode: 0x1, payload: Array("{\"type\":\"ping\",\"id\":1}".utf8))
            let burst = Array(repeating: ping, count: 100).flatMap { $0 }
            while !stopped {
                guard let probe = loggedIn(user, receiveBuffer: 4096) else { continue }
                count("flood connections")
                while !stopped, (try? probe.write(burst)) != nil { count("flood bursts of 100 pings") }
                probe.close()
            }
        }

        private func slowReader(_ user: String) {
            while !stopped {
                guard let probe = loggedIn(user, receiveBuffer: 4096) else { continue }
                count("slow reader connections")
                // Stays until the server closes it (or the run ends), reading nothing: just waits for the close.
                while !stopped {
                    if (try? probe.write(TCPProbe.frame(opcode: 0x9, payload: []))) == nil { break }
                    Thread.sleep(forTimeInterval: 1)
                }
                probe.close()
            }
        }

        private func bigSender(from user: String, to target: String) {
            let body = String(repeating: "s", count: 60_000)
            while !stopped {
                guard let probe = loggedIn(user) else { continue }
                var number = 0
                while !stopped {
                    number += 1
                    let send = FrameCoding.encode(ClientFrame.send(.init(id: number, to: target, body: body)))
                    guard (try? probe.write(TCPProbe.frame(opcode: 0x1, payload: Array(send.utf8)))) != nil else {
                        break
                    }
                    _ = probe.readNow(seconds: 0.05)  // drain answers; stays within the rate
                    count("big messages to the slow reader")
                }
                probe.close()
            }
        }

        private func heldSpam(_ user: String) {
            let body = String(repeating: "h", count: 60_000)
            var number = 0
            while !stopped {
                guard let probe = loggedIn(user) else { continue }
                while !stopped {
                    number += 1
                    let send = FrameCoding.encode(
                        ClientFrame.send(.init(id: number, to: "offline-\(number)", body: body, ttl: 300)))
                    guard (try? probe.write(TCPProbe.frame(opcode: 0x1, payload: Array(send.utf8)))) != nil else {
                        break
                    }
                    _ = probe.readNow(seconds: 0.05)
                    count("held messages tried")
                }
                probe.close()
            }
        }

        private func slowloris(connections: Int) {
            var open: [TCPProbe] = []
            while !stopped {
                while open.count < connections, let probe = try? TCPProbe(port: port) {
                    _ = try? probe.write("GET /v1/signal HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    open.append(probe)
                    count("slowloris connections")
                }
                // One header byte at a time keeps each alive as long as the server lets it; closed ones reopen.
                open = open.filter { probe in
                    if (try? probe.write("X")) != nil, !probe.readNow(seconds: 0.001).closed { return true }
                    probe.close()
                    return false
                }
                Thread.sleep(forTimeInterval: 1)
            }
            for probe in open { probe.close() }
        }

        private func oversized() {
            let big =
                "{\"type\":\"send\",\"id\":1,\"to\":\"1\",\"body\":\"" + String(repeating: "o", count: 900_000) + "\"}"
            let frame = TCPProbe.frame(opcode: 0x1, payload: Array(big.utf8))
            while !stopped {
                guard let probe = try? TCPProbe(port: port), (try? probe.writeUpgrade(path: "/v1/signal")) != nil
                else { continue }
                while !stopped, (try? probe.write(frame)) != nil {
                    _ = probe.readNow(seconds: 0.01)
                    count("oversized frames")
                }
                probe.close()
            }
        }
    }

    /// A thread that runs one attacker until the run stops.
    private final class AttackThread {
        private let thread: Thread
        private let done = NIOLockedValueBox(false)

        init(_ body: @escaping @Sendable () -> Void) {
            let done = done
            thread = Thread {
                body()
                done.withLockedValue { $0 = true }
            }
        }

        func start() { thread.start() }

        func join() {
            while !done.withLockedValue({ $0 }) { Thread.sleep(forTimeInterval: 0.05) }
        }
    }
#endif
