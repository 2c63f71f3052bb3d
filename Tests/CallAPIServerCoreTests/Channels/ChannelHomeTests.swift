import CallAPIServerCore
import CallAPISignalProtocol
import Testing

/// A node of a cluster claims each channel whose first member joins there, and sends a join for a channel whose
/// members meet on another node there (docs/scale-out.md, "RTC channels across nodes").
@Suite struct ChannelHomeTests {
    let t0: Int64 = 1_800_000_000_000
    var state = ChannelState(limits: ChannelLimits(), topology: .cluster)

    /// Connects `id` and has its token for `room` accepted as `uid`; returns what that did.
    mutating func accepted(_ id: UInt64, uid: UInt, channel: String = "room") -> [ChannelAction] {
        let session = SessionID(id)
        _ = state.handle(.connected(session), now: t0)
        _ = state.handle(.frame(session, .join(.init(channel: channel, uid: uid, token: "t"))), now: t0)
        let check = ChannelTokenCheck.valid(
            userId: String(uid), channel: channel, expiresAt: t0 + 3_600_000, issuedAt: t0)
        return state.handle(.tokenChecked(session, purpose: .join, result: check), now: t0)
    }

    func joined(_ actions: [ChannelAction], _ id: UInt64) -> Bool {
        actions.contains { if case .send(SessionID(id), .joined) = $0 { true } else { false } }
    }

    @Test mutating func theFirstJoinClaimsTheChannelAndIsAMemberOnlyOnceTheClaimIsHeld() {
        let claim = accepted(1, uid: 1001)
        #expect(claim == [.claimHome(SessionID(1), channel: "room")])
        #expect(state.members(of: "room").isEmpty)
        let found = state.handle(.homeFound(SessionID(1), channel: "room", .here), now: t0)
        #expect(joined(found, 1))
        #expect(state.members(of: "room") == [1001])
        // A channel with a member here is this node's: the next join is let in without asking.
        let second = accepted(2, uid: 1002)
        #expect(joined(second, 2))
        #expect(!second.contains { if case .claimHome = $0 { true } else { false } })
    }

    @Test mutating func aJoinForAChannelHeldElsewhereIsSentThereWithTheNodesAddress() {
        _ = accepted(1, uid: 1001)
        let found = state.handle(
            .homeFound(SessionID(1), channel: "room", .elsewhere(node: "b", url: "ws://10.0.0.2:8080")), now: t0)
        #expect(
            found == [
                .send(
                    SessionID(1),
                    .joinFailed(
                        .init(
                            code: .channelElsewhere,
                            message: "channel room meets on node b; join at ws://10.0.0.2:8080",
                            location: "ws://10.0.0.2:8080"))),
                .close(SessionID(1), code: ChannelErrorCode.channelElsewhere.closeCode),
            ])
        #expect(state.connectionCount == 0)

        _ = accepted(2, uid: 1002)
        let unaddressed = state.handle(
            .homeFound(SessionID(2), channel: "room", .elsewhere(node: "b", url: nil)), now: t0)
        #expect(
            unaddressed.first
                == .send(
                    SessionID(2),
                    .joinFailed(
                        .init(
                            code: .channelElsewhere,
                            message:
                                "channel room meets on node b; connect to that node (or through the cluster's proxy)"
                        ))))
    }

    @Test mutating func aClaimTheClusterCouldNotAnswerLetsTheMemberInHere() {
        _ = accepted(1, uid: 1001)
        let found = state.handle(.homeFound(SessionID(1), channel: "room", .unknown(reason: "database down")), now: t0)
        #expect(joined(found, 1))
    }

    @Test mutating func theClaimIsReleasedWhenTheLastMemberHereLeaves() {
        _ = accepted(1, uid: 1001)
        _ = state.handle(.homeFound(SessionID(1), channel: "room", .here), now: t0)
        _ = accepted(2, uid: 1002)
        let first = state.handle(.frame(SessionID(1), .leave), now: t0)
        #expect(!first.contains(.releaseHome(channel: "room")))
        let last = state.handle(.disconnected(SessionID(2)), now: t0)
        #expect(last.contains(.releaseHome(channel: "room")))
    }

    @Test mutating func aClaimWhoseConnectionWentIsReleasedUnlessAnotherClaimIsInFlight() {
        _ = accepted(1, uid: 1001)
        _ = accepted(2, uid: 1002)
        #expect(state.handle(.disconnected(SessionID(1)), now: t0).isEmpty)
        // Another claim of the channel is still out: keep the claim for it.
        #expect(state.handle(.homeFound(SessionID(1), channel: "room", .here), now: t0).isEmpty)
        #expect(joined(state.handle(.homeFound(SessionID(2), channel: "room", .here), now: t0), 2))
        // A claim found elsewhere was never this node's: nothing to release.
        _ = accepted(3, uid: 1003, channel: "other")
        _ = state.handle(.disconnected(SessionID(3)), now: t0)
        #expect(
            state.handle(.homeFound(SessionID(3), channel: "other", .elsewhere(node: "b", url: nil)), now: t0).isEmpty)
        _ = accepted(4, uid: 1004, channel: "third")
        _ = state.handle(.disconnected(SessionID(4)), now: t0)
        #expect(
            state.handle(.homeFound(SessionID(4), channel: "third", .here), now: t0) == [.releaseHome(channel: "third")]
        )
    }

    @Test mutating func aSingleServerNeverClaims() {
        state = ChannelState(limits: ChannelLimits())
        #expect(joined(accepted(1, uid: 1001), 1))
        #expect(!state.handle(.disconnected(SessionID(1)), now: t0).contains(.releaseHome(channel: "room")))
    }
}
