import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import Testing

/// ``RTCChannelClient`` against a real server.
@Suite struct RTCChannelClientTests {
    @Test func twoClientsJoinAndRelaySignalsBothWays() async throws {
        let server = try await TestServer.start()
        let base = "ws://127.0.0.1:\(server.port)"
        let aliceEvents = ChannelEventRecorder()
        let alice = RTCChannelClient.join(
            url: base, channel: "call-1", uid: 1001, token: try await server.rtcToken(1001, channel: "call-1"),
            events: aliceEvents.handler)
        #expect(try await aliceEvents.next() == .joined(members: [], iceServers: []))
        let bobEvents = ChannelEventRecorder()
        let bob = RTCChannelClient.join(
            url: base, channel: "call-1", uid: 1002, token: try await server.rtcToken(1002, channel: "call-1"),
            events: bobEvents.handler)
        #expect(try await bobEvents.next() == .joined(members: [ChannelMember(uid: 1001)], iceServers: []))
        #expect(try await aliceEvents.next() == .memberJoined(ChannelMember(uid: 1002)))
        alice.send(data: "offer", to: ChannelMember(uid: 1002))
        alice.send(data: "candidate-1", to: ChannelMember(uid: 1002))
        #expect(try await bobEvents.next() == .signal(from: ChannelMember(uid: 1001), data: "offer"))
        #expect(try await bobEvents.next() == .signal(from: ChannelMember(uid: 1001), data: "candidate-1"))
        bob.send(data: "answer", to: ChannelMember(uid: 1001))
        #expect(try await aliceEvents.next() == .signal(from: ChannelMember(uid: 1002), data: "answer"))
        bob.leave()
        let left = try await aliceEvents.next()
        #expect(left == .memberLeft(ChannelMember(uid: 1002), reason: ChannelLeaveReason.quit.rawValue))
        #expect(left.leaveReason == .quit && left.errorCode == nil)
        alice.leave()
        try await server.stop()
    }

    @Test func signalsSentBeforeTheJoinCompletesAreDeliveredAfterIt() async throws {
        let server = try await TestServer.start()
        let (alice, _) = try await server.joined(1001, channel: "room")
        let bobEvents = ChannelEventRecorder()
        let bob = RTCChannelClient.join(
            url: "127.0.0.1:\(server.port)", channel: "room", uid: 1002,
            token: try await server.rtcToken(1002, channel: "room"), events: bobEvents.handler)
        bob.send(data: "early-1", to: ChannelMember(uid: 1001))
        bob.send(data: "early-2", to: ChannelMember(uid: 1001))
        #expect(try await bobEvents.next() == .joined(members: [ChannelMember(uid: 1001)], iceServers: []))
        #expect(try await alice.channelFrame() == .memberJoined(.init(uid: 1002)))
        #expect(try await alice.channelFrame() == .signal(.init(from: 1002, data: "early-1")))
        #expect(try await alice.channelFrame() == .signal(.init(from: 1002, data: "early-2")))
        bob.leave()
        try await server.stop()
    }

    @Test func aRefusedJoinIsReportedWithTheServersCode() async throws {
        let server = try await TestServer.start()
        let events = ChannelEventRecorder()
        let connection = RTCChannelClient.join(
            url: "ws://127.0.0.1:\(server.port)", channel: "room", uid: 1001,
            token: try await server.rtcToken(1001, channel: "another"), events: events.handler)
        let event = try await events.next()
        guard case .joinFailed(let code, let message) = event else {
            Issue.record("the join was not refused")
            return
        }
        #expect(code == ChannelErrorCode.wrongChannel.rawValue)
        #expect(event.errorCode == .wrongChannel)
        #expect(message.contains("another"))
        connection.leave()
        try await server.stop()
    }

    @Test func anUnreachableServerIsReportedAsAFailedJoin() async throws {
        let server = try await TestServer.start()
        let port = server.port
        try await server.stop()
        let events = ChannelEventRecorder()
        let connection = RTCChannelClient.join(
            url: "ws://127.0.0.1:\(port)", channel: "room", uid: 1001, token: "t", events: events.handler)
        guard case .joinFailed(let code, _) = try await events.next(within: 15) else {
            Issue.record("no joinFailed")
            return
        }
        #expect(code == ChannelErrorCode.connectionLost.rawValue)
        connection.leave()
    }

    @Test func aLostConnectionAfterJoiningIsReportedAsRemoved() async throws {
        let server = try await TestServer.start()
        let events = ChannelEventRecorder()
        let connection = RTCChannelClient.join(
            url: "ws://127.0.0.1:\(server.port)", channel: "room", uid: 1001,
            token: try await server.rtcToken(1001, channel: "room"), events: events.handler)
        #expect(try await events.next() == .joined(members: [], iceServers: []))
        try await server.stop()
        guard case .removed(let code, _) = try await events.next() else {
            Issue.record("no removed event")
            return
        }
        #expect(code == ChannelErrorCode.serverShutdown.rawValue)
        connection.leave()
    }

    @Test func theTokenWarningReachesTheClientAndARenewalKeepsItIn() async throws {
        let clock = TestClock()
        let server = try await TestServer.start(clock: clock)
        let events = ChannelEventRecorder()
        let (logger, logs) = StreamingLogHandler.logger()
        let connection = RTCChannelClient.join(
            url: "ws://127.0.0.1:\(server.port)", channel: "room", uid: 1001,
            token: try await server.rtcToken(1001, channel: "room", ttl: 100), logger: logger, events: events.handler)
        #expect(try await events.next() == .joined(members: [], iceServers: []))
        clock.advance(seconds: 45)
        await server.tick()
        #expect(try await events.next() == .tokenWillExpire)
        connection.renewToken(try await server.rtcToken(1001, channel: "room", ttl: 3600))
        _ = try await logs.first(within: 5, "the renewal") { $0.contains("token renewed") }
        clock.advance(seconds: 60)
        await server.tick()
        #expect(await server.server.channelMembers("room") == [1001])
        connection.leave()
        try await server.stop()
    }

    @Test func theChannelPathIsAddedToABareServerURL() {
        #expect(RTCChannelClient.webSocketURL(from: "ws://h:1") == "ws://h:1/v1/rtc")
        #expect(RTCChannelClient.webSocketURL(from: "https://h/") == "wss://h/v1/rtc")
        #expect(RTCChannelClient.webSocketURL(from: "ws://h:1/custom") == "ws://h:1/custom")
    }

    @Test func theChannelRidesInTheQuerySoThatAProxyCanSendAChannelsMembersToOneNode() {
        #expect(RTCChannelClient.joinURL(from: "ws://h:1", channel: "call-7") == "ws://h:1/v1/rtc?channel=call-7")
        #expect(RTCChannelClient.joinURL(from: "wss://h/rtc?x=1", channel: "a.b") == "wss://h/rtc?x=1&channel=a.b")
    }
}

/// The typed views of an event's numbers: the enums where this library knows the number, nil where it does not
/// (a newer server's code still arrives as its number), and nil for events that carry none.
@Suite struct RTCChannelClientEventCodeTests {
    @Test func knownNumbersReadAsTheirEnumsAndUnknownOnesAsNil() {
        #expect(RTCChannelClientEvent.removed(code: 8, message: "").errorCode == .kicked)
        #expect(RTCChannelClientEvent.joinFailed(code: 100, message: "").errorCode == .connectionLost)
        #expect(RTCChannelClientEvent.joinFailed(code: 999, message: "").errorCode == nil)
        #expect(RTCChannelClientEvent.memberLeft(ChannelMember(uid: 1), reason: 1).leaveReason == .dropped)
        #expect(RTCChannelClientEvent.memberLeft(ChannelMember(uid: 1), reason: 7).leaveReason == nil)
        #expect(RTCChannelClientEvent.tokenWillExpire.errorCode == nil)
        #expect(RTCChannelClientEvent.joined(members: [], iceServers: []).leaveReason == nil)
    }
}
