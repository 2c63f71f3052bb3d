import CallAPI
import CallAPIServer
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import CallAPITesting
import Foundation
import Testing

/// A call connected between CallAPI endpoints on two of three `callapi serve` processes, the callee's killed with
/// SIGKILL mid-call: the callee's client logs in to the third by itself, the call stays connected, and when it ends
/// (a hangup that crosses nodes) both sides end it the same way (issue 44, node death).
@Suite(
    .enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing),
    .enabled(if: CLIProcess.executable != nil, "the callapi executable is not built"))
struct ClusterCallNodeDeathTests {
    let world = SimulatedRTCWorld(clock: SystemCallClock())

    /// An endpoint whose signaling client knows `nodes`, the first first.
    func endpoint(_ user: UInt, nodes ports: [Int]) async throws -> CallEndpoint {
        var configuration = SignalClientConfiguration(urls: ports.map { "ws://127.0.0.1:\($0)" })
        configuration.backoffBaseMillis = 100
        let signal = SignalClient(configuration: configuration, logger: quietLogger)
        try await signal.login(token: try await ClusterNodeDeathTests.token("\(user)"))
        return try await .prepared(user, signal: signal, world: world)
    }

    /// Whether `states` shows the connection lost and then made again (to another node) within 10 s.
    static func loggedInAgain(_ states: AsyncStream<SignalConnectionState>, _ what: String) async throws -> Bool {
        try await withTimeout(10, what) {
            var lost = false
            for await state in states {
                if case .reconnecting = state { lost = true }
                if lost, case .connected = state { return true }
            }
            return false
        }
    }

    @Test func aCallConnectedAcrossANodeThatIsKilledStaysConnectedAndEndsTheSameWayOnBothSides() async throws {
        let database = try await LedgerBackend.freshPostgresURL()
        let (n1, port1) = try await ClusterNodeDeathTests.node("n1", database: database)
        let (n2, port2) = try await ClusterNodeDeathTests.node("n2", database: database)
        let (n3, port3) = try await ClusterNodeDeathTests.node("n3", database: database)
        let caller = try await endpoint(6001, nodes: [port1])
        let callee = try await endpoint(6002, nodes: [port2, port3])
        let states = callee.signal.stateUpdates()
        let observer = try await ClusterNodeDeathTests.loggedIn("6099", port: port1)
        try await ClusterEndToEndTests.waitOnline("6002", seenBy: observer)
        // And the callee's node sees the caller, or the accept it relays can be refused `peer_offline` (the race
        // ClusterCallLedgerTests met in CI).
        try await ClusterEndToEndTests.waitOnline(
            "6001", seenBy: try await ClusterNodeDeathTests.loggedIn("6098", port: port2))

        try await caller.api.call(remoteUserId: callee.user, callType: .video)
        try await callee.reaches(.calling)
        try await callee.api.accept(remoteUserId: caller.user)
        try await caller.reaches(.connected)
        try await callee.reaches(.connected)

        n2.kill()
        #expect(try await Self.loggedInAgain(states, "the callee's client logged in to n3"))

        // The callee hangs up through n3, across to the caller's n1; nothing else changed either side's state
        // meanwhile.
        try await callee.api.hangup(remoteUserId: caller.user, reason: "after the crash")
        let calleeEnd = try await callee.nextChange()
        let callerEnd = try await caller.nextChange()
        #expect(calleeEnd.state == .prepared && calleeEnd.reason == .localHangup)
        #expect(callerEnd.state == .prepared && callerEnd.reason == .remoteHangup)

        await caller.api.deinitialize()
        await callee.api.deinitialize()
        for node in [n1, n3] {
            node.interrupt()
            #expect(try await node.finish() == 0)
        }
    }
}
