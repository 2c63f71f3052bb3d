import CallAPIServerCore
import CallAPISignalProtocol
import Testing

/// The pure channel state machine: events in, actions out.
@Suite struct ChannelStateTests {
    let t0: Int64 = 1_800_000_000_000
    let hour: Int64 = 3_600_000

    func makeState(_ configure: (inout ChannelLimits) -> Void = { _ in }) -> ChannelState {
        var limits = ChannelLimits()
        configure(&limits)
        return ChannelState(limits: limits)
    }

    /// Connects `id` and joins `channel` as `uid` (on `device`) with a valid token; returns the join's actions.
    @discardableResult
    func join(
        _ state: inout ChannelState, _ id: UInt64, uid: UInt, device: String? = nil, channel: String = "room",
        now: Int64? = nil, token: ChannelTokenCheck? = nil
    ) -> [ChannelAction] {
        let now = now ?? t0
        let session = SessionID(id)
        _ = state.handle(.connected(session), now: now)
        let start = state.handle(
            .frame(session, .join(.init(channel: channel, uid: uid, token: "t", device: device))), now: now)
        #expect(start == [.verifyToken(session, token: "t", purpose: .join)])
        let check = token ?? .valid(userId: String(uid), channel: channel, expiresAt: now + hour, issuedAt: now)
        return state.handle(.tokenChecked(session, purpose: .join, result: check), now: now)
    }

    func joinFailure(_ actions: [ChannelAction]) -> ChannelErrorCode? {
        for case .send(_, .joinFailed(let failure)) in actions { return failure.errorCode }
        return nil
    }

    @Test func joiningTellsTheMemberWhoIsThereAndTellsThemWhoCame() {
        var state = makeState()
        let first = join(&state, 1, uid: 1001)
        #expect(
            first.contains(
                .send(SessionID(1), .joined(.init(channel: "room", uid: 1001, devices: [], expiresAt: t0 + hour)))))
        #expect(
            first.contains(.report(.init(event: .userJoined, channel: "room", uid: 1001, reason: .joined, time: t0))))
        let second = join(&state, 2, uid: 1002)
        #expect(
            second.contains(
                .send(
                    SessionID(2),
                    .joined(
                        .init(channel: "room", uid: 1002, devices: [ChannelMember(uid: 1001)], expiresAt: t0 + hour)))))
        #expect(second.contains(.send(SessionID(1), .memberJoined(.init(uid: 1002)))))
        #expect(state.members(of: "room") == [1001, 1002])
        #expect(state.channelCount == 1 && state.memberCount == 2)
    }

    @Test func signalsAreRelayedWithTheSenderStampedAndRefusedForAbsentTargets() {
        var state = makeState()
        join(&state, 1, uid: 1001)
        join(&state, 2, uid: 1002)
        let relayed = state.handle(.frame(SessionID(1), .signal(.init(to: 1002, data: "offer"))), now: t0)
        #expect(relayed == [.send(SessionID(2), .signal(.init(from: 1001, data: "offer")))])
        let absent = state.handle(.frame(SessionID(1), .signal(.init(to: 1003, data: "x"))), now: t0)
        #expect(
            absent == [.send(SessionID(1), .signalFailed(.init(to: 1003, message: "uid 1003 is not in channel room")))])
    }

    @Test func signalsDoNotCrossChannels() {
        var state = makeState()
        join(&state, 1, uid: 1001, channel: "a")
        join(&state, 2, uid: 1002, channel: "b")
        let actions = state.handle(.frame(SessionID(1), .signal(.init(to: 1002, data: "x"))), now: t0)
        guard case .send(SessionID(1), .signalFailed) = actions.first else {
            Issue.record("relayed across channels: \(actions)")
            return
        }
    }

    @Test(arguments: [
        (
            ChannelTokenCheck.valid(
                userId: "1001", channel: "other", expiresAt: 1_800_003_600_000, issuedAt: 1_800_000_000_000),
            ChannelErrorCode.wrongChannel
        ),
        (
            .valid(userId: "1002", channel: "room", expiresAt: 1_800_003_600_000, issuedAt: 1_800_000_000_000),
            .wrongUser
        ),
        (
            .valid(userId: "1001", channel: "*", expiresAt: 1_800_003_600_000, issuedAt: 1_800_000_000_000),
            .wrongChannel
        ),
        (
            .valid(userId: "1001", channel: "room", expiresAt: 1_799_999_999_000, issuedAt: 1_800_000_000_000),
            .tokenExpired
        ),
        (.invalid(.invalidToken, "bad signature"), .invalidToken),
    ])
    func tokensThatDoNotFitTheJoinAreRefused(check: ChannelTokenCheck, code: ChannelErrorCode) {
        var state = makeState()
        let actions = join(&state, 1, uid: 1001, token: check)
        #expect(joinFailure(actions) == code)
        #expect(actions.last == .close(SessionID(1), code: code.closeCode))
        #expect(state.connectionCount == 0)
    }

    @Test func anyChannelTokensAreAcceptedOnlyWhenAllowed() {
        var state = makeState { $0.allowAnyChannelTokens = true }
        let actions = join(
            &state, 1, uid: 1001, token: .valid(userId: "1001", channel: "*", expiresAt: t0 + hour, issuedAt: t0))
        #expect(joinFailure(actions) == nil)
        #expect(state.members(of: "room") == [1001])
    }

    @Test func aFullChannelRefusesAThirdMember() {
        var state = makeState()
        join(&state, 1, uid: 1001)
        join(&state, 2, uid: 1002)
        #expect(joinFailure(join(&state, 3, uid: 1003)) == .channelFull)
        #expect(state.members(of: "room") == [1001, 1002])
    }

    @Test func joiningAgainReplacesTheOldMembership() {
        var state = makeState()
        join(&state, 1, uid: 1001)
        join(&state, 2, uid: 1002)
        let actions = join(&state, 3, uid: 1001)
        #expect(joinFailure(actions) == nil)
        #expect(
            actions.contains(
                .send(
                    SessionID(1),
                    .removed(.init(code: .replaced, message: "uid 1001 joined channel room again elsewhere")))))
        #expect(actions.contains(.close(SessionID(1), code: ChannelErrorCode.replaced.closeCode)))
        let left = actions.firstIndex(of: .send(SessionID(2), .memberLeft(.init(uid: 1001, reason: .removed))))
        let joined = actions.firstIndex(of: .send(SessionID(2), .memberJoined(.init(uid: 1001))))
        #expect(left != nil && joined != nil && left! < joined!)
        #expect(
            actions.contains(.report(.init(event: .userLeft, channel: "room", uid: 1001, reason: .replaced, time: t0))))
        #expect(state.members(of: "room") == [1001, 1002])
        #expect(state.connectionCount == 2)
    }

    @Test func leavingClosesNormallyAndTellsTheOthers() {
        var state = makeState()
        join(&state, 1, uid: 1001)
        join(&state, 2, uid: 1002)
        let actions = state.handle(.frame(SessionID(2), .leave), now: t0)
        #expect(actions.contains(.close(SessionID(2), code: 1000)))
        #expect(actions.contains(.send(SessionID(1), .memberLeft(.init(uid: 1002, reason: .quit)))))
        #expect(actions.contains(.report(.init(event: .userLeft, channel: "room", uid: 1002, reason: .quit, time: t0))))
        let dropped = state.handle(.disconnected(SessionID(1)), now: t0)
        #expect(dropped == [.report(.init(event: .userLeft, channel: "room", uid: 1001, reason: .dropped, time: t0))])
        #expect(state.channelCount == 0)
    }

    @Test func aLostSocketIsReportedAsDropped() {
        var state = makeState()
        join(&state, 1, uid: 1001)
        join(&state, 2, uid: 1002)
        let actions = state.handle(.disconnected(SessionID(2)), now: t0)
        #expect(actions.contains(.send(SessionID(1), .memberLeft(.init(uid: 1002, reason: .dropped)))))
    }

    @Test func theFirstFrameMustBeAJoin() {
        var state = makeState()
        _ = state.handle(.connected(SessionID(1)), now: t0)
        let actions = state.handle(.frame(SessionID(1), .signal(.init(to: 2, data: "x"))), now: t0)
        #expect(joinFailure(actions) == .malformed)
        #expect(actions.last == .close(SessionID(1), code: ChannelErrorCode.malformed.closeCode))
    }

    @Test func aZeroUidIsRefused() {
        var state = makeState()
        _ = state.handle(.connected(SessionID(1)), now: t0)
        let actions = state.handle(.frame(SessionID(1), .join(.init(channel: "room", uid: 0, token: "t"))), now: t0)
        #expect(joinFailure(actions) == .malformed)
    }

    @Test func badFramesFromMembersAreAnsweredAndTheMembershipStays() {
        var state = makeState()
        join(&state, 1, uid: 1001)
        let error = FrameDecodingError(code: .invalidFrame, message: "\"signal\" frame: missing field \"to\"")
        let actions = state.handle(.undecodable(SessionID(1), error), now: t0)
        #expect(actions == [.send(SessionID(1), .error(.init(code: .malformed, message: error.message)))])
        let large = state.handle(.oversized(SessionID(1), bytes: 70_000), now: t0)
        #expect(
            large == [
                .send(
                    SessionID(1),
                    .error(.init(code: .tooLarge, message: "the frame is 70000 bytes; the limit is 65536")))
            ])
        #expect(state.members(of: "room") == [1001])
    }

    @Test func kickingRemovesTheMemberAndBarsARejoinUntilTheBarEnds() {
        var state = makeState()
        join(&state, 1, uid: 1001)
        join(&state, 2, uid: 1002)
        var actions: [ChannelAction] = []
        let answer = state.kick(channel: "room", uid: 1002, barSeconds: 60, reason: "abuse", now: t0, into: &actions)
        #expect(answer.kicked && answer.barredUntil == t0 + 60_000)
        #expect(
            actions.contains(
                .send(
                    SessionID(2),
                    .removed(
                        .init(
                            code: .kicked,
                            message: "removed from channel room by the operator: abuse (may rejoin in 60 s)")))))
        #expect(actions.contains(.send(SessionID(1), .memberLeft(.init(uid: 1002, reason: .removed)))))
        #expect(
            actions.contains(.report(.init(event: .userLeft, channel: "room", uid: 1002, reason: .kicked, time: t0))))
        let barred = join(&state, 3, uid: 1002, now: t0 + 30_000)
        #expect(joinFailure(barred) == .barred)
        #expect(
            join(&state, 4, uid: 1002, now: t0 + 60_000).contains {
                if case .send(_, .joined) = $0 { true } else { false }
            })
    }

    @Test func aKickRevokesTheMembersEarlierTokensForThatChannelAndAFreshTokenJoins() {
        var state = makeState()
        let issued = t0 - 10_000
        let old = ChannelTokenCheck.valid(userId: "1001", channel: "room", expiresAt: t0 + hour, issuedAt: issued)
        join(&state, 1, uid: 1001, now: issued, token: old)
        var actions: [ChannelAction] = []
        // No bar: only the tokens issued before the kick are refused.
        _ = state.kick(channel: "room", uid: 1001, barSeconds: 0, reason: nil, now: t0, into: &actions)
        #expect(joinFailure(join(&state, 2, uid: 1001, now: t0 + 1_000, token: old)) == .tokenRevoked)
        let otherChannel = ChannelTokenCheck.valid(
            userId: "1001", channel: "other", expiresAt: t0 + hour, issuedAt: issued)
        #expect(joinFailure(join(&state, 3, uid: 1001, channel: "other", now: t0 + 1_000, token: otherChannel)) == nil)
        let fresh = ChannelTokenCheck.valid(userId: "1001", channel: "room", expiresAt: t0 + hour, issuedAt: t0 + 500)
        #expect(joinFailure(join(&state, 4, uid: 1001, now: t0 + 1_000, token: fresh)) == nil)
        #expect(state.members(of: "room") == [1001])
        // A renewal with a token from before the kick is refused too.
        let renewal = state.handle(.tokenChecked(SessionID(4), purpose: .renew, result: old), now: t0 + 2_000)
        #expect(
            renewal.contains {
                if case .send(_, .error(let error)) = $0 { error.errorCode == .tokenRevoked } else { false }
            })
    }

    @Test func revocationsAreBoundedAndTheOldestIsForgotten() {
        var state = makeState { $0.maxRevocations = 2 }
        var actions: [ChannelAction] = []
        for (index, uid) in [UInt(1001), 1002, 1003].enumerated() {
            _ = state.kick(
                channel: "room", uid: uid, barSeconds: 0, reason: nil, now: t0 + Int64(index), into: &actions)
        }
        #expect(state.revocationCount == 2)
        let early = ChannelTokenCheck.valid(userId: "1001", channel: "room", expiresAt: t0 + hour, issuedAt: t0 - 1)
        #expect(joinFailure(join(&state, 1, uid: 1001, now: t0 + 10, token: early)) == nil)
        let earlyToo = ChannelTokenCheck.valid(userId: "1003", channel: "room", expiresAt: t0 + hour, issuedAt: t0 - 1)
        #expect(joinFailure(join(&state, 2, uid: 1003, now: t0 + 10, token: earlyToo)) == .tokenRevoked)
    }

    @Test func aBarAppliesToAUidThatIsNotInTheChannel() {
        var state = makeState()
        var actions: [ChannelAction] = []
        let answer = state.kick(channel: "room", uid: 1005, barSeconds: 10, reason: nil, now: t0, into: &actions)
        #expect(!answer.kicked && answer.barredUntil == t0 + 10_000 && actions.isEmpty)
        #expect(state.barredUntil(channel: "room", uid: 1005) == t0 + 10_000)
        #expect(joinFailure(join(&state, 1, uid: 1005)) == .barred)
    }

    @Test func theWatchdogRemovesAMemberLeftAloneAfterACall() {
        var state = makeState { $0.watchdogMillis = 30_000 }
        join(&state, 1, uid: 1001)
        #expect(state.handle(.tick, now: t0 + 60_000).isEmpty)  // alone from the start: not watched
        join(&state, 2, uid: 1002, now: t0 + 60_000)
        _ = state.handle(.frame(SessionID(2), .leave), now: t0 + 61_000)
        #expect(state.handle(.tick, now: t0 + 90_000).isEmpty)
        let actions = state.handle(.tick, now: t0 + 91_000)
        #expect(
            actions.contains {
                if case .send(SessionID(1), .removed(let f)) = $0 { f.errorCode == .watchdog } else { false }
            })
        #expect(
            actions.contains(
                .report(.init(event: .userLeft, channel: "room", uid: 1001, reason: .watchdog, time: t0 + 91_000))))
        #expect(state.channelCount == 0)
    }

    @Test func theWatchdogForgetsAChannelWhosePeerCameBack() {
        var state = makeState { $0.watchdogMillis = 30_000 }
        join(&state, 1, uid: 1001)
        join(&state, 2, uid: 1002)
        _ = state.handle(.disconnected(SessionID(2)), now: t0)
        join(&state, 3, uid: 1002, now: t0 + 10_000)
        #expect(state.handle(.tick, now: t0 + 40_000).isEmpty)
    }

    @Test func membersAreToldBeforeTheirTokenExpiresAndMayRenew() {
        var state = makeState()
        join(
            &state, 1, uid: 1001, token: .valid(userId: "1001", channel: "room", expiresAt: t0 + 120_000, issuedAt: t0))
        #expect(state.handle(.tick, now: t0 + 59_000).isEmpty)
        #expect(
            state.handle(.tick, now: t0 + 60_000) == [
                .send(SessionID(1), .tokenWillExpire(.init(expiresAt: t0 + 120_000)))
            ])
        #expect(
            state.handle(.frame(SessionID(1), .renew(.init(token: "new"))), now: t0 + 61_000) == [
                .verifyToken(SessionID(1), token: "new", purpose: .renew)
            ])
        let wrong = state.handle(
            .tokenChecked(
                SessionID(1), purpose: .renew,
                result: .valid(userId: "1001", channel: "elsewhere", expiresAt: t0 + hour, issuedAt: t0)),
            now: t0 + 61_000)
        #expect(
            wrong == [
                .send(
                    SessionID(1),
                    .error(
                        .init(
                            code: .wrongChannel,
                            message: "renewal refused: the token is for channel elsewhere, not room")))
            ])
        _ = state.handle(.frame(SessionID(1), .renew(.init(token: "new"))), now: t0 + 62_000)
        let renewed = state.handle(
            .tokenChecked(
                SessionID(1), purpose: .renew,
                result: .valid(userId: "1001", channel: "room", expiresAt: t0 + hour, issuedAt: t0)),
            now: t0 + 62_000)
        #expect(renewed == [.send(SessionID(1), .renewed(.init(expiresAt: t0 + hour)))])
        #expect(state.handle(.tick, now: t0 + 100_000).isEmpty)
    }

    @Test func aRenewalToAnEarlierExpiryIsNoticedAndEnforcedAtThatExpiry() {
        var state = makeState()
        join(&state, 1, uid: 1001)
        // A tick first, so that the member's next visit is its hour-long token's notice.
        #expect(state.handle(.tick, now: t0 + 10_000).isEmpty)
        _ = state.handle(.frame(SessionID(1), .renew(.init(token: "short"))), now: t0 + 20_000)
        let renewed = state.handle(
            .tokenChecked(
                SessionID(1), purpose: .renew,
                result: .valid(userId: "1001", channel: "room", expiresAt: t0 + 200_000, issuedAt: t0)),
            now: t0 + 20_000)
        #expect(renewed == [.send(SessionID(1), .renewed(.init(expiresAt: t0 + 200_000)))])
        #expect(state.handle(.tick, now: t0 + 139_999).isEmpty)
        #expect(
            state.handle(.tick, now: t0 + 140_000) == [
                .send(SessionID(1), .tokenWillExpire(.init(expiresAt: t0 + 200_000)))
            ])
        #expect(state.handle(.tick, now: t0 + 199_999).isEmpty)
        let expiry = state.handle(.tick, now: t0 + 200_000)
        #expect(
            expiry.contains {
                if case .send(SessionID(1), .removed(let f)) = $0 { f.errorCode == .tokenExpired } else { false }
            })
    }

    @Test func anExpiredTokenRemovesTheMember() {
        var state = makeState()
        join(
            &state, 1, uid: 1001, token: .valid(userId: "1001", channel: "room", expiresAt: t0 + 120_000, issuedAt: t0))
        _ = state.handle(.tick, now: t0 + 60_000)
        let actions = state.handle(.tick, now: t0 + 120_000)
        #expect(
            actions.contains {
                if case .send(SessionID(1), .removed(let f)) = $0 { f.errorCode == .tokenExpired } else { false }
            })
        #expect(state.memberCount == 0)
    }

    @Test func connectionsThatDoNotJoinInTimeAreClosedButQuietMembersStay() {
        var state = makeState()
        join(&state, 1, uid: 1001)
        _ = state.handle(.connected(SessionID(2)), now: t0)
        #expect(state.handle(.tick, now: t0 + 9_000).isEmpty)
        let actions = state.handle(.tick, now: t0 + 10_000)
        #expect(joinFailure(actions) == .joinTimeout)
        #expect(actions.last == .close(SessionID(2), code: ChannelErrorCode.joinTimeout.closeCode))
        #expect(state.members(of: "room") == [1001])
    }

    @Test func shutdownRemovesEveryoneAndRefusesNewcomers() {
        var state = makeState()
        join(&state, 1, uid: 1001)
        _ = state.handle(.connected(SessionID(2)), now: t0)
        let actions = state.handle(.shutdown, now: t0)
        #expect(
            actions.contains(
                .send(
                    SessionID(1),
                    .removed(
                        .init(code: .serverShutdown, message: "the server is shutting down; join again in a moment")))))
        #expect(actions.contains(.close(SessionID(1), code: 1001)))
        #expect(joinFailure(actions) == .serverShutdown)
        #expect(joinFailure(state.handle(.connected(SessionID(3)), now: t0)) == .serverShutdown)
    }
}
