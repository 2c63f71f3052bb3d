import CallAPISignalProtocol
import Testing

/// Frames round-trip through JSON, and text that is not a frame says exactly why.
@Suite struct FrameCodingTests {
    @Test func clientFramesRoundTrip() throws {
        let frames: [ClientFrame] = [
            .login(.init(id: 1, token: "abc")), .send(.init(id: 2, to: "1002", body: "{\"a\":1}", ttl: 30)),
            .renew(.init(id: 3, token: "t")), .users(.init(id: 4)), .subscribe(.init()), .unsubscribe(.init(id: 5)),
            .ping(.init(id: 6)), .logout(.init()),
        ]
        for frame in frames {
            #expect(try FrameCoding.decodeClientFrame(FrameCoding.encode(frame)).get() == frame)
        }
    }

    @Test func serverFramesRoundTrip() throws {
        let frames: [ServerFrame] = [
            .answer(.init(id: 1, result: .failed, reason: .peerOffline, message: "offline")),
            .message(.init(from: "1001", body: "x", sentAt: 5, messageId: "m-1")),
            .heldResult(.init(messageId: "m-1", to: "1002", result: .expired)),
            .presence(.init(id: nil, online: ["1001"])), .presenceChanged(.init(userId: "1", online: false)),
            .tokenWillExpire(.init(expiresAt: 10, secondsLeft: 3)), .renewed(.init(id: 2, expiresAt: 3)),
            .pong(.init(id: 1, serverTime: 2)), .error(.init(id: 1, code: .unknownType, message: "m")),
            .closing(.init(reason: .serverShutdown, message: "bye")),
        ]
        for frame in frames {
            #expect(try FrameCoding.decodeServerFrame(FrameCoding.encode(frame)).get() == frame)
        }
    }

    @Test func encodedFramesCarryTheirType() {
        #expect(FrameCoding.encode(.ping(.init(id: 1))) == "{\"id\":1,\"type\":\"ping\"}")
    }

    @Test(arguments: [
        ("{oops", SignalErrorCode.malformedJSON),
        ("[1,2]", .invalidFrame),
        ("{\"id\":3}", .invalidFrame),
        ("{\"type\":\"dance\",\"id\":4}", .unknownType),
        ("{\"type\":\"send\",\"id\":5,\"to\":\"1002\"}", .invalidFrame),
        ("{\"type\":\"send\",\"id\":5,\"to\":1002,\"body\":\"x\"}", .invalidFrame),
    ])
    func badTextIsExplained(text: String, code: SignalErrorCode) {
        guard case .failure(let error) = FrameCoding.decodeClientFrame(text) else {
            Issue.record("\(text) decoded")
            return
        }
        #expect(error.code == code)
        #expect(!error.message.isEmpty)
    }

    @Test func missingFieldIsNamed() {
        guard case .failure(let error) = FrameCoding.decodeClientFrame("{\"type\":\"send\",\"id\":5,\"to\":\"1002\"}")
        else { return }
        #expect(error.message.contains("body"))
        #expect(error.requestId == 5)
        #expect(error.type == "send")
    }

    @Test func unknownErrorCodesDecodeAsUnknown() throws {
        let frame = try FrameCoding.decodeServerFrame("{\"type\":\"error\",\"code\":\"new_thing\",\"message\":\"m\"}")
            .get()
        #expect(frame == .error(.init(code: .unknown, message: "m")))
    }
}
