import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import Foundation
import Testing

/// The operator's channel endpoints: kick with a rejoin bar, and the member list.
@Suite struct ChannelAdminTests {
    struct KickAnswer: Decodable, Equatable {
        var kicked: Bool
        var barredUntil: Int64?
    }

    struct Members: Decodable, Equatable {
        var channel: String
        var members: [UInt]
        var devices: [ChannelMember]
    }

    func decode<T: Decodable>(_ type: T.Type, _ body: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(body.utf8))
    }

    @Test func aKickRemovesTheClientAndBarsItsRejoinUntilTheBarEnds() async throws {
        let clock = TestClock()
        let server = try await TestServer.start(clock: clock)
        let events = ChannelEventRecorder()
        let alice = RTCChannelClient.join(
            url: "ws://127.0.0.1:\(server.port)", channel: "room", uid: 1001,
            token: try await server.rtcToken(1001, channel: "room"), events: events.handler)
        #expect(try await events.next() == .joined(members: [], iceServers: []))
        let (bob, _) = try await server.joined(1002, channel: "room")
        #expect(try await events.next() == .memberJoined(ChannelMember(uid: 1002)))

        let (status, body) = try await server.admin(
            "POST", "/v1/channels/room/kick", body: "{\"uid\":1001,\"barSeconds\":60,\"reason\":\"spam\"}")
        #expect(status == 200)
        #expect(body.contains("\"barredUntil\":"))
        #expect(try decode(KickAnswer.self, body) == KickAnswer(kicked: true, barredUntil: clock.nowMillis() + 60_000))
        guard case .removed(let code, let message) = try await events.next() else {
            Issue.record("the client was not told")
            return
        }
        #expect(code == ChannelErrorCode.kicked.rawValue)
        #expect(message.contains("spam"))
        #expect(try await bob.channelFrame() == .memberLeft(.init(uid: 1001, reason: .removed)))
        #expect(await server.server.channelMembers("room") == [1002])

        let token = try await server.rtcToken(1001, channel: "room")
        guard
            case .joinFailed(let barred) = try await RawSocket(url: server.rtcURL).join(
                channel: "room", uid: 1001, token: token)
        else {
            Issue.record("the rejoin was not barred")
            return
        }
        #expect(barred.errorCode == .barred)
        #expect(barred.message.contains("60 more seconds"))
        clock.advance(seconds: 61)
        await server.tick()
        guard case .joined = try await RawSocket(url: server.rtcURL).join(channel: "room", uid: 1001, token: token)
        else {
            Issue.record("the rejoin was refused after the bar")
            return
        }
        alice.leave()
        try await server.stop()
    }

    @Test func aBarAppliesToAUidThatIsNotInTheChannel() async throws {
        let clock = TestClock()
        let server = try await TestServer.start(clock: clock)
        let (status, body) = try await server.admin(
            "POST", "/v1/channels/room/kick", body: "{\"uid\":1005,\"barSeconds\":10}")
        #expect(status == 200)
        #expect(try decode(KickAnswer.self, body) == KickAnswer(kicked: false, barredUntil: clock.nowMillis() + 10_000))
        let (_, unbarred) = try await server.admin("POST", "/v1/channels/room/kick", body: "{\"uid\":1006}")
        #expect(unbarred.contains("\"barredUntil\":null"))
        #expect(try decode(KickAnswer.self, unbarred) == KickAnswer(kicked: false, barredUntil: nil))
        let token = try await server.rtcToken(1005, channel: "room")
        guard
            case .joinFailed(let failure) = try await RawSocket(url: server.rtcURL).join(
                channel: "room", uid: 1005, token: token)
        else {
            Issue.record("not barred")
            return
        }
        #expect(failure.errorCode == .barred)
        try await server.stop()
    }

    @Test func theMemberListShowsWhoIsIn() async throws {
        let server = try await TestServer.start()
        let (bob, _) = try await server.joined(1002, device: "phone-1", channel: "room")
        let (alice, _) = try await server.joined(1001, channel: "room")
        let (tablet, _) = try await server.joined(1002, device: "tablet-1", channel: "room")
        let (status, body) = try await server.admin("GET", "/v1/channels/room")
        #expect(status == 200)
        #expect(
            try decode(Members.self, body)
                == Members(
                    channel: "room", members: [1001, 1002],
                    devices: [
                        ChannelMember(uid: 1002, device: "phone-1"), ChannelMember(uid: 1001),
                        ChannelMember(uid: 1002, device: "tablet-1"),
                    ]))
        let (_, empty) = try await server.admin("GET", "/v1/channels/nobody")
        #expect(try decode(Members.self, empty) == Members(channel: "nobody", members: [], devices: []))
        withExtendedLifetime((alice, bob, tablet)) {}
        try await server.stop()
    }

    @Test func badKickRequestsAreRefusedClearly() async throws {
        let server = try await TestServer.start()
        let (unauthorized, _) = try await server.admin(
            "POST", "/v1/channels/room/kick", body: "{\"uid\":1}", key: "wrong")
        #expect(unauthorized == 401)
        let (listing, _) = try await server.admin("GET", "/v1/channels/room", key: "wrong")
        #expect(listing == 401)
        let cases: [(String, String)] = [
            ("{\"user\":1001}", "uid"),
            ("{\"uid\":0}", "must be a positive integer"),
            ("{\"uid\":-4}", "uid"),
            ("{\"uid\":1001,\"barSeconds\":-1}", "barSeconds"),
            ("not json", "uid"),
        ]
        for (body, mention) in cases {
            let (status, answer) = try await server.admin("POST", "/v1/channels/room/kick", body: body)
            #expect(status == 400, "\(body)")
            #expect(answer.contains(mention), "\(body): \(answer)")
        }
        let (badChannel, answer) = try await server.admin("POST", "/v1/channels/no%20spaces/kick", body: "{\"uid\":1}")
        #expect(badChannel == 400 && answer.contains("channel"))
        try await server.stop()
    }

    @Test func kicksAreCounted() async throws {
        let server = try await TestServer.start()
        let (alice, _) = try await server.joined(1001, channel: "room")
        _ = try await server.admin("POST", "/v1/channels/room/kick", body: "{\"uid\":1001}")
        #expect(server.server.metricsText().contains("callapi_channel_kicks_total 1"))
        withExtendedLifetime(alice) {}
        try await server.stop()
    }
}
