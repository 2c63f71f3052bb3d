import CallAPITesting
import Foundation
import Testing

@testable import CallAPI

/// Per-call credentials: a fresh room for every call by default, and per-call tokens from a provider.
@Suite("Fresh rooms and per-call tokens")
struct RoomAndTokenTests {
    static func config(roomId: String = "", provider: RTCTokenProvider? = nil) -> PrepareConfig {
        PrepareConfig(roomId: roomId, rtcToken: "any-channel-token", rtcTokenProvider: provider)
    }

    @Test func everyCallGetsAFreshRoomNamedFromTheUserAndCallIds() {
        var driver = MachineDriver(.prepared, config: Self.config())
        let first = driver.handle(.call(remoteUserId: 2, type: .video, extension: nil, callId: "3f2a-b7"))
        #expect(first.joins.map(\.channel) == ["1-3f2a-b7"])
        #expect(first.sent.first?.message.fromRoomId == "1-3f2a-b7", "the callee is told the same room")
        driver.handle(.cancel)
        let second = driver.handle(.call(remoteUserId: 2, type: .video, extension: nil, callId: "9c01-d4"))
        #expect(second.joins.map(\.channel) == ["1-9c01-d4"])
    }

    @Test func aFreshRoomKeepsOnlyCharactersChannelsAllowAndFitsSixtyFourOfThem() {
        var driver = MachineDriver(.prepared, config: Self.config())
        let callId = "id with spaces/and:colons" + String(repeating: "x", count: 80)
        let room = driver.handle(.call(remoteUserId: 2, type: .audio, extension: nil, callId: callId)).joins.first?
            .channel
        #expect(room?.hasPrefix("1-idwithspacesandcolonsxx") == true)
        #expect(room?.count == 64)
    }

    @Test func aPreparedRoomIsUsedAsItIs() {
        var driver = MachineDriver(.prepared, config: Self.config(roomId: "fixed"))
        let actions = driver.handle(.call(remoteUserId: 2, type: .video, extension: nil, callId: "c1"))
        #expect(actions.joins.map(\.channel) == ["fixed"])
        #expect(actions.joins.map(\.token) == ["any-channel-token"])
    }

    @Test func withAProviderTheCallerAsksForTheRoomsTokenBeforeJoining() {
        var driver = MachineDriver(.prepared, config: Self.config(provider: { _, _ in "unused" }))
        let placed = driver.handle(.call(remoteUserId: 2, type: .video, extension: nil, callId: "c1"))
        #expect(placed.joins.isEmpty)
        #expect(placed.tokenFetches == [TokenFetch(callId: "c1", channel: "1-c1", uid: 1)])
        #expect(placed.events.contains(.joinRTCStart))
        let fetched = driver.handle(.rtcTokenFetched(callId: "c1", outcome: .success("per-call")))
        #expect(fetched.joins.map(\.token) == ["per-call"])
        #expect(fetched.joins.map(\.channel) == ["1-c1"])
        #expect(fetched.volumes.map(\.volume) == [0], "remote audio stays muted until connected")
        #expect(driver.handle(.rtcTokenFetched(callId: "c1", outcome: .success("again"))).isEmpty)
    }

    @Test func withAProviderTheCalleeAsksForTheCallersRoomsToken() {
        var driver = MachineDriver(.prepared, config: Self.config(provider: { _, _ in "unused" }))
        let rang = driver.ringFromPeer()
        #expect(rang.tokenFetches == [TokenFetch(callId: MachineDriver.peerCallId, channel: "room-2", uid: 1)])
        #expect(rang.joins.isEmpty)
    }

    @Test func aFailingProviderFailsTheCallAndTellsThePeer() {
        var driver = MachineDriver(.prepared, config: Self.config(provider: { _, _ in "unused" }))
        driver.handle(.call(remoteUserId: 2, type: .video, extension: nil, callId: "c1"))
        let failed = driver.handle(
            .rtcTokenFetched(callId: "c1", outcome: .failure(CallAPIError(.rtcTokenUnavailable, "server down"))))
        #expect(failed.states == [.failed])
        #expect(failed.reasons == [.joinRTCFailed])
        #expect(failed.sent.map(\.message.action) == [.cancelCall])
        #expect(failed.joins.isEmpty)
        #expect(
            failed.contains {
                if case .notifyError(.rtcOccurError, _, let code, let message) = $0 {
                    code == CallAPIError.Code.rtcTokenUnavailable.rawValue && message.contains("server down")
                } else {
                    false
                }
            })
    }

    @Test func aTokenForAnEndedCallIsIgnored() {
        var driver = MachineDriver(.prepared, config: Self.config(provider: { _, _ in "unused" }))
        driver.handle(.call(remoteUserId: 2, type: .video, extension: nil, callId: "c1"))
        driver.handle(.cancel)
        #expect(driver.handle(.rtcTokenFetched(callId: "c1", outcome: .success("late"))).isEmpty)
        #expect(driver.machine.state == .prepared)
    }

    @Test func callApiImplJoinsBothSidesWithTokensFromTheProvider() async throws {
        let asked = Locked<[String]>([])
        let provider: RTCTokenProvider = { channel, uid in
            asked.withLock { $0.append("\(uid)@\(channel)") }
            return "token-\(uid)-\(channel)"
        }
        let h = CallHarness()
        for user: UInt in [1, 2] {
            h.reprepare(user) {
                $0.roomId = ""
                $0.rtcTokenProvider = provider
            }
        }
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        try await waitUntil { asked.withLock { $0.count } == 2 && h[2].engine.channel != nil }
        let room = try #require(h[1].engine.channel)
        #expect(room.hasPrefix("1-"))
        #expect(h[2].engine.channel == room)
        #expect(Set(asked.withLock { $0 }) == ["1@\(room)", "2@\(room)"])
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        try await waitUntil { h[1].api.state == .connected && h[2].api.state == .connected }
    }

    /// Yields until `condition` holds (the provider runs in a task of its own); fails after many rounds.
    private func waitUntil(_ condition: @Sendable () -> Bool) async throws {
        for _ in 0..<10_000 where !condition() { await Task.yield() }
        #expect(condition())
    }
}
