import CallAPIServerTesting

#if canImport(Glibc)
    import CallAPIServer
    import Foundation
    import Glibc
    import Testing

    /// A server with few file descriptors (`ulimit -n 512` in its own process) against more half-open connections
    /// than it has descriptors: a real user still logs in, and the server does not spin.
    @Suite(.serialized, .enabled(if: CLIProcess.executable != nil, "needs the built callapi executable"))
    struct DescriptorExhaustionTests {
        static let secret = "descriptor-test-secret-0123456789-0123456789"

        /// CPU seconds (user + system) the process `pid` has used, from /proc.
        static func cpuSeconds(_ pid: Int32) throws -> Double {
            let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            // The fields after the command's closing parenthesis; utime and stime are the 12th and 13th of them.
            let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
            let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
            return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
        }

        /// `callapi serve` with `ulimit -n 512` and `flags`; returns it, its port, and its CPU time so far.
        static func serve(_ flags: String = "") async throws -> (CLIProcess, Int) {
            let server = try CLIProcess(
                shell:
                    "bash -c 'ulimit -n 512 && exec \(CLIProcess.executable!) serve --port 0 --secret \(Self.secret) "
                    + "--ledger 0 \(flags)'")
            let line = try await server.expect("/v1/signal")
            let port = try #require(line.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) })
            return (server, port)
        }

        /// 520 connections to `port`, each with half a request line, held open.
        static func halfRequests(to port: Int) -> [TCPProbe] {
            (0..<520).compactMap { _ in
                guard let probe = try? TCPProbe(port: port) else { return nil }
                try? probe.write("GET /v1/sig")
                return probe
            }
        }

        /// CPU seconds `server` uses from `start` until 5 s after it.
        static func cpuOverFiveSeconds(_ server: CLIProcess, since start: ContinuousClock.Instant, before: Double)
            async throws -> Double
        {
            // A real process's CPU over real time: no clock of ours can stand in for the kernel's.
            let elapsed = ContinuousClock.now - start
            if elapsed < .seconds(5) { try await Task.sleep(for: .seconds(5) - elapsed) }
            return try cpuSeconds(server.processIdentifier) - before
        }

        @Test func fiveHundredTwentyHalfRequestsAgainstFiveHundredTwelveDescriptorsLockNobodyOutAndSpinNothing()
            async throws
        {
            let (server, port) = try await Self.serve()
            let before = try Self.cpuSeconds(server.processIdentifier)
            let start = ContinuousClock.now
            let loris = Self.halfRequests(to: port)

            // A legitimate client logs in within 5 s.
            let authority = try await TokenAuthority.make(
                key: .hs256(secret: Self.secret), clock: SystemServerClock())
            let token = try await authority.issue(userId: "1001", ttlSeconds: 600).token
            let welcome = try await withTimeout(5, "the legitimate client to log in") {
                try await RawSocket(url: "ws://127.0.0.1:\(port)/v1/signal").login(token)
            }
            #expect(welcome.userId == "1001")

            // And the server is not burning a core while the half requests are held.
            let used = try await Self.cpuOverFiveSeconds(server, since: start, before: before)
            #expect(used < 1.5, "the server used \(used) s of CPU in 5 s")
            for probe in loris { probe.close() }
            server.kill()
        }

        @Test func whenDescriptorsRunOutAcceptingPausesInsteadOfSpinning() async throws {
            // A cap above the descriptors: the half requests take every descriptor, and `accept` fails with EMFILE.
            let (server, port) = try await Self.serve("--max-unauthenticated 1000")
            let before = try Self.cpuSeconds(server.processIdentifier)
            let start = ContinuousClock.now
            let loris = Self.halfRequests(to: port)
            let used = try await Self.cpuOverFiveSeconds(server, since: start, before: before)
            #expect(used < 1.5, "the server used \(used) s of CPU in 5 s")
            try await server.expect("out of file descriptors")
            for probe in loris { probe.close() }
            server.kill()
        }
    }
#endif
