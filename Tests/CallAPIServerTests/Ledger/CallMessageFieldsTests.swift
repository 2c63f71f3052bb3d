import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The ledger's one-pass reading of a relayed body agrees with reading it through `JSONDecoder`, for the shapes the
/// deployed clients send and for everything the flat reader leaves to the decoder.
@Suite struct CallMessageFieldsTests {
    static let bodies: [String] = [
        // What CallAPI clients send, action by action.
        #"{"message_action":0,"message_version":"1.0","callId":"c-1","fromUserId":"1001","fromRoomId":"r-9"}"#,
        #"{"message_action":10,"message_version":"1.0","callId":"c-1","fromRoomId":"r-9"}"#,
        #"{"message_action":1,"message_version":"1.0","callId":"c-1","cancelCallByInternal":1}"#,
        #"{"message_action":1,"message_version":"1.0","callId":"c-1","cancelCallByInternal":"1"}"#,
        #"{"message_action":1,"message_version":"1.0","callId":"c-1","answeredByDevice":"phone"}"#,
        #"{"message_action":1,"message_version":"1.0","callId":"c-1","rejectedByDevice":"tablet"}"#,
        #"{"message_action":2,"message_version":"1.0","callId":"c-1","deviceId":"phone-7"}"#,
        #"{"message_action":3,"message_version":"1.0","callId":"c-1","rejectByInternal":1}"#,
        #"{"message_action":"3","message_version":"1.0","callId":"c-1","rejectByInternal":"0"}"#,
        #"{"message_action":4,"message_version":"1.0","callId":"c-1","hangupReason":"bye \"now\" \u00e9"}"#,
        #"{"message_action":20,"message_version":"1.0","callId":"c-1"}"#,
        #"{"message_action":21,"message_version":"1.0","callId":"c-1"}"#,
        // Not the ledger's business, or not a usable call message.
        #"{"message_action":99,"message_version":"1.0","callId":"c-1"}"#,
        #"{"message_action":2,"message_version":"2.0","callId":"c-1"}"#,
        #"{"message_action":2,"callId":"c-1"}"#,
        #"{"message_action":2,"message_version":"1.0","callId":""}"#,
        #"{"message_action":2,"message_version":"1.0","callId":5}"#,
        #"{"message_action":true,"message_version":"1.0","callId":"c-1"}"#,
        #"{"message_action":null,"message_version":"1.0","callId":"c-1"}"#,
        #"{"message_action":2,"message_version":"1.0"}"#,
        #"{"text":"mentions \"callId\" in a value"}"#,
        #"{"kind":"chat","text":"hello"}"#,
        "hello",
        " {\"message_action\":2,\"message_version\":\"1.0\",\"callId\":\"c-1\"}",
        "",
        // Shapes the flat reader leaves to the decoder: nested values, fractions, duplicate keys, broken text.
        #"{"message_action":2,"message_version":"1.0","callId":"c-1","extra":{"a":[1,2]}}"#,
        #"{"message_action":2.0,"message_version":"1.0","callId":"c-1"}"#,
        #"{"message_action":2,"message_version":"1.0","callId":"c-1","callId":"c-2"}"#,
        #"{"message_action":2,"message_version":"1.0","callId":"c-1""#,
        #"{"message_action":2,"message_version":"1.0","callId":"\ud800"}"#,
        #"{"message_action":2,"message_version":"1.0","callId":"c-1","deviceId":"\#(String(repeating: "d", count: 300))"}"#,
        #"{"message_action":2,"message_version":"1.0","callId":"\#(String(repeating: "c", count: 129))"}"#,
        // Keys the ledger does not read may repeat; the members it skips are checked all the same.
        #"{"message_action":2,"message_version":"1.0","callId":"c-1","fromUserId":"1","fromUserId":"2"}"#,
        #"{"message_action":2,"message_version":"1.0","callId":"c-7","extra":"\n\t\u00e9 \"x\"","k\u0065y":1}"#,
        #"{ "message_action" : 4 , "message_version" : "1.0" , "callId" : "c-1" , "n" : -12 , "b" : false }"#,
        #"{"message_action":2,"message_version":"1.0","callId":"c-1","skipped":"\x"}"#,
        #"{"message_action":2,"message_version":"1.0","callId":"c-1","skipped":01}"#,
    ]

    @Test(arguments: bodies)
    func theOnePassReadingAgreesWithTheDecoder(_ body: String) {
        #expect(CallMessageFields.parse(body) == CallMessageFields.parseDecoding(body))
    }

    @Test func readsEachActionTheLedgerKnows() throws {
        let accept = try #require(CallMessageFields.parse(Self.bodies[6]))
        #expect(accept == CallMessageFields(callId: "c-1", action: .accept, deviceId: "phone-7"))
        #expect(CallMessageFields.parse(Self.bodies[0])?.action == .call(.video, roomId: "r-9"))
        #expect(CallMessageFields.parse(Self.bodies[3])?.action == .cancel(byTimer: true))
        #expect(CallMessageFields.parse(Self.bodies[4])?.action == .settledNotice)
        #expect(CallMessageFields.parse(Self.bodies[8])?.action == .reject(busy: false))
        #expect(CallMessageFields.parse(Self.bodies[9])?.action == .hangup(reason: "bye \"now\" é"))
        #expect(CallMessageFields.parse(Self.bodies[21]) == nil)
        #expect(CallMessageFields.parse(Self.bodies[25])?.action == .accept)
        #expect(CallMessageFields.parse(Self.bodies[31]) == nil)
        #expect(CallMessageFields.parse(Self.bodies[30])?.deviceId?.count == 128)
    }

    /// The caps on a device id (128) and a hangup reason (200) count characters, not bytes.
    @Test func capsCountCharactersNotBytes() {
        func body(_ action: Int, _ extra: String) -> String {
            #"{"message_action":\#(action),"message_version":"1.0","callId":"c-1",\#(extra)}"#
        }
        let wide = String(repeating: "é", count: 100)
        #expect(CallMessageFields.parse(body(2, #""deviceId":"\#(wide)""#))?.deviceId == wide)
        let long = String(repeating: "é", count: 250)
        let reason = CallMessageFields.parse(body(4, #""hangupReason":"\#(long)""#))?.action
        #expect(reason == .hangup(reason: String(repeating: "é", count: 200)))
        #expect(CallMessageFields.parse(body(4, #""hangupReason":"short""#))?.action == .hangup(reason: "short"))
    }
}
