import CallAPISignalProtocol
import Testing

/// The channel frames' exact JSON shapes, and precise decoding errors.
@Suite struct ChannelFrameCodingTests {
    @Test(arguments: [
        (
            "{\"type\":\"join\",\"channel\":\"c\",\"uid\":1001,\"token\":\"jwt\"}",
            ChannelClientFrame.join(.init(channel: "c", uid: 1001, token: "jwt"))
        ),
        (
            "{\"type\":\"join\",\"channel\":\"c\",\"uid\":1001,\"token\":\"jwt\",\"device\":\"tablet-1\"}",
            .join(.init(channel: "c", uid: 1001, token: "jwt", device: "tablet-1"))
        ),
        ("{\"type\":\"signal\",\"to\":1002,\"data\":\"opaque\"}", .signal(.init(to: 1002, data: "opaque"))),
        (
            "{\"type\":\"signal\",\"to\":1002,\"device\":\"p\",\"data\":\"opaque\"}",
            .signal(.init(to: 1002, device: "p", data: "opaque"))
        ),
        ("{\"type\":\"renew\",\"token\":\"jwt\"}", .renew(.init(token: "jwt"))),
        ("{\"type\":\"leave\"}", .leave),
    ])
    func clientFramesDecodeFromTheirWireShapes(text: String, frame: ChannelClientFrame) throws {
        #expect(try ChannelFrameCoding.decodeClientFrame(text).get() == frame)
        #expect(try ChannelFrameCoding.decodeClientFrame(ChannelFrameCoding.encode(frame)).get() == frame)
    }

    @Test func serverFramesHaveTheDocumentedShapes() throws {
        let cases: [(ChannelServerFrame, String)] = [
            (
                .joined(.init(channel: "c", uid: 1001, devices: [ChannelMember(uid: 1002)], expiresAt: 5)),
                "{\"channel\":\"c\",\"devices\":[{\"uid\":1002}],\"expiresAt\":5,\"iceServers\":[],"
                    + "\"members\":[1002],\"type\":\"joined\",\"uid\":1001}"
            ),
            (
                // A user on two devices: `members` names the uid once, `devices` each member in join order.
                .joined(
                    .init(
                        channel: "c", uid: 1001,
                        devices: [
                            ChannelMember(uid: 1002, device: "phone-1"), ChannelMember(uid: 1003),
                            ChannelMember(uid: 1002, device: "tablet-1"),
                        ], expiresAt: 5)),
                "{\"channel\":\"c\",\"devices\":[{\"device\":\"phone-1\",\"uid\":1002},{\"uid\":1003},"
                    + "{\"device\":\"tablet-1\",\"uid\":1002}],\"expiresAt\":5,\"iceServers\":[],"
                    + "\"members\":[1002,1003],\"type\":\"joined\",\"uid\":1001}"
            ),
            (
                .joined(
                    .init(
                        channel: "c", uid: 1001, devices: [], expiresAt: 5,
                        iceServers: [
                            ICEServer(urls: ["stun:s:3478"]),
                            ICEServer(urls: ["turn:t:3478?transport=tcp"], username: "9:1001", credential: "p/+="),
                        ])),
                "{\"channel\":\"c\",\"devices\":[],\"expiresAt\":5,\"iceServers\":[{\"urls\":[\"stun:s:3478\"]},"
                    + "{\"credential\":\"p/+=\",\"urls\":[\"turn:t:3478?transport=tcp\"],\"username\":\"9:1001\"}],"
                    + "\"members\":[],\"type\":\"joined\",\"uid\":1001}"
            ),
            (.joinFailed(.init(code: .barred, message: "m")), "{\"code\":5,\"message\":\"m\",\"type\":\"joinFailed\"}"),
            (.memberJoined(.init(uid: 1002)), "{\"type\":\"memberJoined\",\"uid\":1002}"),
            (
                .memberJoined(.init(uid: 1002, device: "tablet-1")),
                "{\"device\":\"tablet-1\",\"type\":\"memberJoined\",\"uid\":1002}"
            ),
            (.memberLeft(.init(uid: 1002, reason: .removed)), "{\"reason\":2,\"type\":\"memberLeft\",\"uid\":1002}"),
            (
                .memberLeft(.init(uid: 1002, device: "p", reason: .quit)),
                "{\"device\":\"p\",\"reason\":0,\"type\":\"memberLeft\",\"uid\":1002}"
            ),
            (.signal(.init(from: 1002, data: "d")), "{\"data\":\"d\",\"from\":1002,\"type\":\"signal\"}"),
            (
                .signal(.init(from: 1002, device: "p", data: "d")),
                "{\"data\":\"d\",\"device\":\"p\",\"from\":1002,\"type\":\"signal\"}"
            ),
            (.signalFailed(.init(to: 1002, message: "m")), "{\"message\":\"m\",\"to\":1002,\"type\":\"signalFailed\"}"),
            (.tokenWillExpire(.init(expiresAt: 7)), "{\"expiresAt\":7,\"type\":\"tokenWillExpire\"}"),
            (.renewed(.init(expiresAt: 8)), "{\"expiresAt\":8,\"type\":\"renewed\"}"),
            (.error(.init(code: .malformed, message: "m")), "{\"code\":7,\"message\":\"m\",\"type\":\"error\"}"),
            (.removed(.init(code: .kicked, message: "m")), "{\"code\":8,\"message\":\"m\",\"type\":\"removed\"}"),
        ]
        for (frame, text) in cases {
            #expect(ChannelFrameCoding.encode(frame) == text)
            #expect(try ChannelFrameCoding.decodeServerFrame(text).get() == frame)
        }
    }

    @Test func aJoinedFrameWithoutICEServersReadsAsNone() throws {
        let text = "{\"channel\":\"c\",\"expiresAt\":5,\"members\":[],\"type\":\"joined\",\"uid\":1001}"
        #expect(
            try ChannelFrameCoding.decodeServerFrame(text).get()
                == .joined(.init(channel: "c", uid: 1001, devices: [], expiresAt: 5, iceServers: [])))
    }

    @Test func aJoinedFrameFromAServerThatKnowsNoDevicesReadsItsMembersWithoutDevices() throws {
        let text = "{\"channel\":\"c\",\"expiresAt\":5,\"members\":[1002,1003],\"type\":\"joined\",\"uid\":1001}"
        guard case .joined(let joined) = try ChannelFrameCoding.decodeServerFrame(text).get() else {
            Issue.record("not a joined frame")
            return
        }
        #expect(joined.devices == [ChannelMember(uid: 1002), ChannelMember(uid: 1003)])
    }

    @Test(arguments: [
        ("{\"type\":\"signal\",\"data\":\"x\"}", "\"signal\" frame: missing field \"to\""),
        (
            "{\"type\":\"signal\",\"to\":\"1002\",\"data\":\"x\"}",
            "\"signal\" frame: field \"to\" must be a positive integer"
        ),
        (
            "{\"type\":\"join\",\"channel\":\"c\",\"uid\":1,\"token\":null}",
            "\"join\" frame: field \"token\" must be a string, not null"
        ),
        ("{\"type\":\"wave\"}", "unknown frame type \"wave\""),
        ("[1]", "a frame must be a JSON object"),
        ("{", "the text is not valid JSON"),
    ])
    func badFramesSayWhatIsWrong(text: String, message: String) {
        guard case .failure(let error) = ChannelFrameCoding.decodeClientFrame(text) else {
            Issue.record("decoded \(text)")
            return
        }
        #expect(error.message == message)
    }

    @Test func codesAreStableNumbers() {
        #expect(ChannelErrorCode.invalidToken.rawValue == 1 && ChannelErrorCode.serverShutdown.rawValue == 11)
        #expect(ChannelErrorCode.kicked.closeCode == 4008 && ChannelErrorCode.serverShutdown.closeCode == 1001)
        #expect(ChannelLeaveReason.allCases.map(\.rawValue) == [0, 1, 2])
    }
}
