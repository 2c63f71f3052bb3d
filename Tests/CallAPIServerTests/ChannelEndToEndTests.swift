import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import CallAPISignalProtocol
import Testing

/// The channel endpoint `/v1/rtc` over real sockets: joins, token scope, capacity, replacement, drops, bad frames,
/// token expiry and the watchdog.
@Suite struct ChannelEndToEndTests {
    func expectJoinFailed(
        _ frame: ChannelServerFrame, _ code: ChannelErrorCode, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .joinFailed(let failure) = frame else {
            Issue.record("expected joinFailed \(code), got \(frame)", sourceLocation: sourceLocation)
            return
        }
        #expect(failure.errorCode == code, "\(failure.message)", sourceLocation: sourceLocation)
    }

    @Test func membersRelaySignalsBothWaysInOrder() async throws {
        let server = try await TestServer.start()
        let (alice, aliceJoined) = try await server.joined(1001, channel: "room")
        #expect(aliceJoined.members == [])
        let (bob, bobJoined) = try await server.joined(1002, channel: "room")
        #expect(bobJoined.members == [1001] && bobJoined.channel == "room" && bobJoined.uid == 1002)
        #expect(try await alice.channelFrame() == .memberJoined(.init(uid: 1002)))
        for n in 1...20 { alice.send(.signal(.init(to: 1002, data: "a\(n)"))) }
        for n in 1...20 { #expect(try await bob.channelFrame() == .signal(.init(from: 1001, data: "a\(n)"))) }
        bob.send(.signal(.init(to: 1001, data: "answer")))
        #expect(try await alice.channelFrame() == .signal(.init(from: 1002, data: "answer")))
        bob.send(.signal(.init(to: 1003, data: "lost?")))
        #expect(
            try await bob.channelFrame() == .signalFailed(.init(to: 1003, message: "uid 1003 is not in channel room")))
        #expect(await server.server.channelMembers("room") == [1001, 1002])
        #expect(server.server.metricsText().contains("callapi_channel_signals_relayed_total 21"))
        try await server.stop()
    }

    @Test func tokensMustBeRTCTokensForThisChannelAndUid() async throws {
        let clock = TestClock()
        let server = try await TestServer.start(clock: clock)
        let authority = server.server.authority
        let other = try await server.rtcToken(1001, channel: "other")
        expectJoinFailed(
            try await RawSocket(url: server.rtcURL).join(channel: "room", uid: 1001, token: other), .wrongChannel)
        let bobs = try await server.rtcToken(1002, channel: "room")
        expectJoinFailed(
            try await RawSocket(url: server.rtcURL).join(channel: "room", uid: 1001, token: bobs), .wrongUser)
        let login = try await server.token("1001")
        expectJoinFailed(
            try await RawSocket(url: server.rtcURL).join(channel: "room", uid: 1001, token: login), .invalidToken)
        expectJoinFailed(
            try await RawSocket(url: server.rtcURL).join(channel: "room", uid: 1001, token: "nope"), .invalidToken)
        let any = try await authority.issue(userId: "1001", ttlSeconds: 60, channel: "*").token
        expectJoinFailed(
            try await RawSocket(url: server.rtcURL).join(channel: "room", uid: 1001, token: any), .wrongChannel)
        let short = try await server.rtcToken(1001, channel: "room", ttl: 5)
        clock.advance(seconds: 6)
        let socket = RawSocket(url: server.rtcURL)
        expectJoinFailed(try await socket.join(channel: "room", uid: 1001, token: short), .tokenExpired)
        #expect(try await socket.closed() == 4002)
        try await server.stop()
    }

    @Test func rtcTokensCannotLogInToSignaling() async throws {
        let server = try await TestServer.start()
        let socket = RawSocket(url: server.url)
        socket.send(.login(.init(id: 1, token: try await server.rtcToken(1001, channel: "room"))))
        guard case .error(let error) = try await socket.frame() else {
            Issue.record("an RTC token logged in")
            return
        }
        #expect(error.code == .invalidToken)
        try await server.stop()
    }

    @Test func anyChannelTokensWorkWhenTheOperatorAllowsThem() async throws {
        let server = try await TestServer.start { $0.channels.allowAnyChannelTokens = true }
        let any = try await server.server.authority.issue(userId: "1001", ttlSeconds: 60, channel: "*").token
        let answer = try await RawSocket(url: server.rtcURL).join(channel: "any-room", uid: 1001, token: any)
        guard case .joined(let joined) = answer else {
            Issue.record("refused: \(answer)")
            return
        }
        #expect(joined.channel == "any-room")
        try await server.stop()
    }

    @Test func aThirdMemberFindsTheChannelFull() async throws {
        let server = try await TestServer.start()
        let (alice, _) = try await server.joined(1001, channel: "room")
        let (bob, _) = try await server.joined(1002, channel: "room")
        let third = RawSocket(url: server.rtcURL)
        expectJoinFailed(
            try await third.join(channel: "room", uid: 1003, token: try await server.rtcToken(1003, channel: "room")),
            .channelFull)
        withExtendedLifetime((alice, bob)) {}
        try await server.stop()
    }

    @Test func theCapacityIsConfigurable() async throws {
        let server = try await TestServer.start { $0.channels.capacity = 3 }
        var members: [RawSocket] = []
        for uid in UInt(1001)...1003 { members.append(try await server.joined(uid, channel: "room").0) }
        #expect(await server.server.channelMembers("room") == [1001, 1002, 1003])
        withExtendedLifetime(members) {}
        try await server.stop()
    }

    @Test func joiningAgainReplacesTheOldSocket() async throws {
        let server = try await TestServer.start()
        let (old, _) = try await server.joined(1001, channel: "room")
        let (bob, _) = try await server.joined(1002, channel: "room")
        _ = try await old.channelFrame()  // memberJoined 1002
        let (_, joined) = try await server.joined(1001, channel: "room")
        #expect(joined.members == [1002])
        guard case .removed(let removed) = try await old.channelFrame() else {
            Issue.record("the old socket was not told")
            return
        }
        #expect(removed.errorCode == .replaced)
        #expect(try await old.closed() == 4009)
        #expect(try await bob.channelFrame() == .memberLeft(.init(uid: 1001, reason: .removed)))
        #expect(try await bob.channelFrame() == .memberJoined(.init(uid: 1001)))
        try await server.stop()
    }

    @Test func anAbruptlyClosedSocketIsReportedAsDropped() async throws {
        let server = try await TestServer.start()
        let (alice, _) = try await server.joined(1001, channel: "room")
        let (bob, _) = try await server.joined(1002, channel: "room")
        _ = try await alice.channelFrame()
        bob.abort()
        #expect(try await alice.channelFrame() == .memberLeft(.init(uid: 1002, reason: .dropped)))
        try await server.stop()
    }

    @Test func leaveRemovesTheMemberAsQuitAndClosesNormally() async throws {
        let server = try await TestServer.start()
        let (alice, _) = try await server.joined(1001, channel: "room")
        let (bob, _) = try await server.joined(1002, channel: "room")
        _ = try await alice.channelFrame()
        bob.send(.leave)
        #expect(try await bob.closed() == 1000)
        #expect(try await alice.channelFrame() == .memberLeft(.init(uid: 1002, reason: .quit)))
        try await server.stop()
    }

    @Test func badFramesAreAnsweredWithErrors() async throws {
        let server = try await TestServer.start()
        let early = RawSocket(url: server.rtcURL)
        early.sendText("{\"type\":\"signal\",\"to\":1,\"data\":\"x\"}")
        expectJoinFailed(try await early.channelFrame(), .malformed)
        #expect(try await early.closed() == 4007)
        let garbled = RawSocket(url: server.rtcURL)
        garbled.sendText("{\"type\":\"join\",\"channel\":\"room\",\"uid\":-1,\"token\":\"t\"}")
        expectJoinFailed(try await garbled.channelFrame(), .malformed)

        let (alice, _) = try await server.joined(1001, channel: "room")
        alice.sendText("not json")
        #expect(
            try await alice.channelFrame() == .error(.init(code: .malformed, message: "the text is not valid JSON")))
        alice.sendText("{\"type\":\"signal\",\"data\":\"x\"}")
        #expect(
            try await alice.channelFrame()
                == .error(.init(code: .malformed, message: "\"signal\" frame: missing field \"to\"")))
        alice.sendText("{\"type\":\"dance\"}")
        #expect(
            try await alice.channelFrame() == .error(.init(code: .malformed, message: "unknown frame type \"dance\"")))
        alice.sendText("{\"type\":\"signal\",\"to\":1002,\"data\":\"\(String(repeating: "x", count: 70_000))\"}")
        guard case .error(let tooLarge) = try await alice.channelFrame() else {
            Issue.record("no answer to a large frame")
            return
        }
        #expect(tooLarge.errorCode == .tooLarge)
        alice.sendBinary([1, 2, 3])
        guard case .error(let binary) = try await alice.channelFrame() else {
            Issue.record("no answer to a binary message")
            return
        }
        #expect(binary.errorCode == .malformed)
        #expect(await server.server.channelMembers("room") == [1001])
        try await server.stop()
    }

    @Test func membersAreWarnedBeforeExpiryRenewAndAreRemovedWhenItPasses() async throws {
        let clock = TestClock()
        let server = try await TestServer.start(clock: clock)
        let socket = RawSocket(url: server.rtcURL)
        _ = try await socket.join(
            channel: "room", uid: 1001, token: try await server.rtcToken(1001, channel: "room", ttl: 100))
        clock.advance(seconds: 45)
        socket.send(.signal(.init(to: 5, data: "keepalive")))
        _ = try await socket.channelFrame()
        await server.tick()
        guard case .tokenWillExpire(let notice) = try await socket.channelFrame() else {
            Issue.record("no notice")
            return
        }
        #expect(notice.expiresAt == TestClock().nowMillis() + 100_000)
        socket.send(.renew(.init(token: try await server.rtcToken(1001, channel: "elsewhere"))))
        guard case .error(let refused) = try await socket.channelFrame() else {
            Issue.record("a token for another channel renewed")
            return
        }
        #expect(refused.errorCode == .wrongChannel)
        let fresh = try await server.server.authority.issue(userId: "1001", ttlSeconds: 100, channel: "room")
        socket.send(.renew(.init(token: fresh.token)))
        #expect(try await socket.channelFrame() == .renewed(.init(expiresAt: fresh.expiresAt)))
        clock.advance(seconds: 40)
        socket.send(.signal(.init(to: 5, data: "keepalive")))
        _ = try await socket.channelFrame()
        clock.advance(seconds: 61)
        await server.tick()
        guard
            case .removed(let removed) = try await socket.channelFrame(where: {
                if case .removed = $0 { true } else { false }
            })
        else {
            Issue.record("not removed")
            return
        }
        #expect(removed.errorCode == .tokenExpired)
        try await server.stop()
    }

    @Test func theWatchdogRemovesAMemberLeftAloneAfterACall() async throws {
        let clock = TestClock()
        let server = try await TestServer.start(clock: clock) { $0.channels.watchdogSeconds = 30 }
        let (alice, _) = try await server.joined(1001, channel: "room")
        let (bob, _) = try await server.joined(1002, channel: "room")
        _ = try await alice.channelFrame()
        bob.send(.leave)
        #expect(try await alice.channelFrame() == .memberLeft(.init(uid: 1002, reason: .quit)))
        clock.advance(seconds: 29)
        await server.tick()
        alice.send(.signal(.init(to: 1002, data: "still there?")))
        guard case .signalFailed = try await alice.channelFrame() else {
            Issue.record("removed too early")
            return
        }
        clock.advance(seconds: 2)
        await server.tick()
        guard case .removed(let removed) = try await alice.channelFrame() else {
            Issue.record("the watchdog did not act")
            return
        }
        #expect(removed.errorCode == .watchdog)
        #expect(try await alice.closed() == 4010)
        #expect(server.server.metricsText().contains("callapi_channel_watchdog_removals_total 1"))
        try await server.stop()
    }

    @Test func shutdownTellsMembers() async throws {
        let server = try await TestServer.start()
        let (alice, _) = try await server.joined(1001, channel: "room")
        try await server.stop()
        guard case .removed(let removed) = try await alice.channelFrame() else {
            Issue.record("not told about the shutdown")
            return
        }
        #expect(removed.errorCode == .serverShutdown)
    }
}
