import Foundation
import Testing

/// docs/push.md's "killed phone rings" walk-through, run with exactly the commands the page shows (read from it), in
/// the package's root folder: the push mock, `callapi serve` pushing to it, a callee phone that registers its device
/// and is killed, a caller phone. Everything is a real process talking over real sockets.
@Suite(.enabled(if: CLIProcess.executable != nil, "needs the built callapi executable"), .serialized)
struct PushWalkthroughTests {
    /// The command block of `terminal` in docs/push.md: its first line is the command, the lines after it what the
    /// user types into it.
    static func block(_ terminal: String) throws -> [String] {
        let page = try String(
            contentsOf: CLIProcess.packageRoot.appendingPathComponent("docs/push.md"), encoding: .utf8)
        let marker = "<!-- push-walkthrough:\(terminal) -->\n```sh\n"
        let start = try #require(page.range(of: marker), "docs/push.md has no \(marker)")
        let end = try #require(page.range(of: "\n```", range: start.upperBound..<page.endIndex))
        return page[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
    }

    /// The mock and the server, running.
    struct Services {
        let mock: CLIProcess
        let server: CLIProcess

        static func start() async throws -> Services {
            let mock = try CLIProcess(shell: try block("mock")[0])
            try await mock.expect("listening on https://127.0.0.1:8444", within: 60)
            let server = try CLIProcess(shell: try block("server")[0])
            try await server.expect("listening on ws://127.0.0.1:8091", within: 60)
            return Services(mock: mock, server: server)
        }

        func stop() async throws {
            server.interrupt()
            #expect(try await server.finish() == 0)
            mock.interrupt()
            _ = try await mock.finish()
        }
    }

    /// A callee phone started with `block`, registered and asleep.
    static func killedCallee(_ block: String = "callee") async throws -> CLIProcess {
        let callee = try CLIProcess(shell: try Self.block(block)[0])
        try await callee.expect("push: device phone-1002 registered (apns voip)", within: 30)
        try await callee.expect("push: app killed (logged out)")
        return callee
    }

    /// A caller phone, prepared.
    static func caller() async throws -> (CLIProcess, [String]) {
        let block = try Self.block("caller")
        let caller = try CLIProcess(shell: block[0])
        try await caller.expect("call: prepared", within: 30)
        return (caller, block)
    }

    /// The call id in a line `… call <callId> …` after `marker`.
    static func callId(in line: String, after marker: String) throws -> String {
        let rest = try #require(line.range(of: marker)).upperBound
        return String(line[rest...].prefix { $0 != " " && $0 != "," })
    }

    @Test func theKilledPhoneIsWokenByThePushRingsWithTheSameCallIdAndConnects() async throws {
        let services = try await Services.start()
        let callee = try await Self.killedCallee()
        let (caller, callerBlock) = try await Self.caller()

        caller.type(callerBlock[1])  // call 1002
        let push = try await services.mock.expect("push apns 200 type=voip")
        let woken = try await callee.expect("push: call ")
        let callId = try Self.callId(in: woken, after: "push: call ")
        #expect(push.contains("\"callId\":\"\(callId)\""))
        #expect(woken.contains("from 1001"))
        try await callee.expect("push: waking: logging in")
        let ring = try await callee.expect("call: calling (remoteVideoCall) peer 1001")
        #expect(try Self.callId(in: ring, after: "peer 1001 call ") == callId)

        callee.type("accept")
        try await caller.expect("call: connected")
        try await callee.expect("call: connected")
        // Exactly one push for the call: the woken phone logging in took the held call, nothing was pushed again.
        #expect(services.mock.printedLines(containing: "push apns") == 1)

        caller.type("hangup")
        try await callee.expect("call: prepared (remoteHangup)")
        caller.type("quit")
        #expect(try await caller.finish() == 0)
        callee.type("quit")
        #expect(try await callee.finish() == 0)
        try await services.stop()
    }

    @Test func aCallCancelledBeforeThePhoneWakesIsNeverPushedAgainAndTheWokenPhoneSeesItWithdrawn() async throws {
        let services = try await Services.start()
        let callee = try await Self.killedCallee("callee-slow")
        let (caller, callerBlock) = try await Self.caller()

        caller.type(callerBlock[1])  // call 1002
        try await services.mock.expect("push apns 200 type=voip")
        let pushed = try await callee.expect("push: call ")
        let callId = try Self.callId(in: pushed, after: "push: call ")
        try await callee.expect("push: waking in 60")
        caller.type("cancel")
        // Printed once the server answered the cancel: the held call is withdrawn by now.
        try await caller.expect("cancel: sent")

        callee.type("wake")
        let tombstone = try await callee.expect("was withdrawn before this phone woke")
        #expect(tombstone.contains("push: call \(callId) was withdrawn before this phone woke (cancelled)"))
        // The cancel never travelled as a push: the one push is the call's.
        #expect(services.mock.printedLines(containing: "push apns") == 1)
        callee.type("users")
        try await callee.expect("online: 1001, 1002")
        #expect(callee.printedLines(containing: "call: calling") == 0)

        caller.type("quit")
        #expect(try await caller.finish() == 0)
        callee.type("quit")
        #expect(try await callee.finish() == 0)
        try await services.stop()
    }

    /// Push → ringing in the walk-through: from the mock printing the push to the woken phone printing the ringing
    /// call (the mock hands the push to the phone, the phone logs in, the server delivers the held call, CallAPI
    /// rings), over loopback, with each line timed as it is read from the process's output.
    @Test func pushToRingingTimeInTheWalkthrough() async throws {
        let services = try await Services.start()
        let (caller, callerBlock) = try await Self.caller()
        var samples: [Double] = []
        for round in 1...12 {
            let callee = try await Self.killedCallee()
            caller.type(callerBlock[1])  // call 1002
            let push = try await services.mock.expectTimed("push apns 200 type=voip")
            let ring = try await callee.expectTimed("call: calling (remoteVideoCall) peer 1001")
            let elapsed = ring.at - push.at
            samples.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
            caller.type("cancel")
            try await caller.expect("cancel: sent")
            try await callee.expect("call: prepared (")
            callee.type("quit")
            #expect(try await callee.finish() == 0, "round \(round)")
        }
        let sorted = samples.sorted()
        let p50 = sorted[sorted.count / 2]
        let p99 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        print(
            "push → ringing in the walk-through (mock prints the push → woken phone prints the ring): "
                + "p50 \(String(format: "%.1f", p50)) ms, p99 \(String(format: "%.1f", p99)) ms, "
                + "min \(String(format: "%.1f", sorted[0])) ms (n=\(sorted.count))")
        #expect(services.mock.printedLines(containing: "push apns") == 12)
        #expect(p50 < 2_000)
        caller.type("quit")
        #expect(try await caller.finish() == 0)
        try await services.stop()
    }
}
