import CallAPISignalProtocol
import Testing

@testable import CallAPISignalClient

/// The one-pass reading of an outgoing CallAPI message marks it for push exactly as reading it through
/// `JSONDecoder` does, for what the clients send and for what the flat reader leaves to the decoder.
@Suite struct CallPushMarkingTests {
    static let messages: [String] = [
        #"{"message_action":0,"message_version":"1.0","callId":"c-1","fromUserId":"1001","fromRoomId":"r"}"#,
        #"{"message_action":10,"message_version":"1.0","callId":"c-1"}"#,
        #"{"message_action":0,"callId":"c-1","fromUserExtension":{"displayName":"Ann \u00e9"}}"#,
        #"{"message_action":0,"callId":"c-1","fromUserExtension":{"displayName":""}}"#,
        #"{"message_action":0,"callId":"c-1","fromUserExtension":{"displayName":7,"age":3}}"#,
        #"{"message_action":0,"callId":"c-1","fromUserExtension":"Ann"}"#,
        #"{"message_action":0,"callId":"c-1","fromUserExtension":null}"#,
        #"{"message_action":0,"callId":"c-1","fromUserExtension":{"displayName":"Bo","tags":["a"]}}"#,
        #"{"message_action":0,"callId":"c-1","fromUserExtension":{"displayName":"Bo","more":{"a":1}}}"#,
        #"{"message_action":1,"callId":"c-1","cancelCallByInternal":1}"#,
        #"{"message_action":1,"callId":"c-1","cancelCallByInternal":0}"#,
        #"{"message_action":1,"callId":"c-1","cancelCallByInternal":"1"}"#,
        #"{"message_action":1,"callId":"c-1","cancelCallByInternal":null}"#,
        #"{"message_action":2,"callId":"c-1"}"#,
        #"{"message_action":20,"callId":"c-1","messageId":"m-1"}"#,
        #"{"message_action":"0","callId":"c-1"}"#,
        #"{"message_action":0.0,"callId":"c-1"}"#,
        #"{"message_action":0,"callId":5}"#,
        #"{"message_action":0,"callId":""}"#,
        #"{"message_action":0,"callId":null}"#,
        #"{"message_action":0}"#,
        #"{"message_action":0,"callId":"\#(String(repeating: "c", count: 200))"}"#,
        #"{"message_action":0,"callId":"c-1","callId":"c-2"}"#,
        #"{"message_action":0,"callId":"c-1","fromRoomId":"a","fromRoomId":"b"}"#,
        #"{"message_action":1,"c\u0061llId":"c-1","cancelCallByInternal":9223372036854775807}"#,
        #"{"message_action":0,"callId":"c-1","skipped":[1]}"#,
        #"{"callId":"c-1"}"#,
        "hello", "", "[1,2]", "17;1764149000123;xxxx", " \n\t{\"message_action\":0,\"callId\":\"c-1\"}", "\r\n",
    ]

    @Test(arguments: messages)
    func theOnePassReadingMarksAsTheDecoderDoes(_ message: String) {
        #expect(
            CallPushMarking.mark(forCallAPIMessage: message) == CallPushMarking.markDecoding(forCallAPIMessage: message)
        )
    }

    @Test func callsRingWithTheCallersNameAndCancelsWithdraw() {
        func mark(_ message: String) -> PushMark? { CallPushMarking.mark(forCallAPIMessage: message) }
        #expect(mark(#"{"message_action":0,"callId":"c-1"}"#) == .call(callId: "c-1", callerName: nil, video: true))
        #expect(
            mark(#"{"message_action":10,"callId":"c-1","fromUserExtension":{"displayName":"Ann \u00e9"}}"#)
                == .call(callId: "c-1", callerName: "Ann é", video: false))
        #expect(
            mark(#"{"message_action":1,"callId":"c-1","cancelCallByInternal":1}"#)
                == .withdraw(callId: "c-1", reason: .expired))
        #expect(mark(#"{"message_action":1,"callId":"c-1"}"#) == .withdraw(callId: "c-1", reason: .cancelled))
        #expect(mark(#"{"message_action":1,"callId":"c-1","cancelCallByInternal":"1"}"#) == nil)
        #expect(mark(#"{"message_action":2,"callId":"c-1"}"#) == .answer(callId: "c-1", accepted: true))
        #expect(mark(#"{"message_action":3,"callId":"c-1"}"#) == .answer(callId: "c-1", accepted: false))
        #expect(mark(#"{"message_action":4,"callId":"c-1"}"#) == nil)
    }
}
