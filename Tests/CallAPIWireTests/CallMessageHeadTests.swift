import Testing

@testable import CallAPIWire

/// The cheap peek at a call message: its action, call, device and caller name, read in one pass from the flat
/// objects clients send, and the same from any other JSON through the whole tree.
@Suite struct CallMessageHeadTests {
    @Test func theHeadReadsTheActionCallDeviceAndCallerName() throws {
        let text =
            #"{"message_action":10,"message_version":"1.0","callId":"c-1","deviceId":"phone","#
            + #""fromUserExtension":{"displayName":"Ann \u00e9","age":3},"fromUserId":1001}"#
        let head = try CallMessageHead(text)
        #expect(
            head
                == CallMessageHead(action: .audioCall, callId: "c-1", deviceId: "phone", callerName: "Ann é"))
        #expect(try CallMessageHead(readingTree: text) == head)
    }

    @Test func aCancelsTimerFlagIsRead() throws {
        let head = try CallMessageHead(#"{"message_action":1,"callId":"c-1","cancelCallByInternal":1}"#)
        #expect(head.action == .cancelCall)
        #expect(head.cancelCallByInternal == 1)
        #expect(head.deviceId == nil && head.callerName == nil)
    }

    @Test func aMessageTheOnePassReaderIsNotSureOfIsReadThroughTheTree() throws {
        // An array and a fraction: the pick mode refuses both, the tree reads them.
        let text = #"{"message_action":0,"callId":"c-1","skipped":[1,2.5],"fromUserExtension":{"x":[1]}}"#
        #expect(try CallMessageHead(text) == CallMessageHead(action: .videoCall, callId: "c-1"))
    }

    @Test func everyActionIsReadFromItsNumber() throws {
        for action in MessageAction.allCases {
            #expect(try CallMessageHead(#"{"message_action":\#(action.rawValue),"callId":"c"}"#).action == action)
        }
    }

    @Test(arguments: [
        ("not json", WireError.notJSON),
        (#"{"callId":"c"#, .notJSON),
        ("[1,2]", .notAnObject),
        (#"{"callId":"c-1"}"#, .missingField("message_action")),
        (#"{"message_action":null,"callId":"c-1"}"#, .missingField("message_action")),
        (#"{"message_action":"0","callId":"c-1"}"#, .invalidField("message_action")),
        (#"{"message_action":7,"callId":"c-1"}"#, .unknownAction(7)),
        (#"{"message_action":0,"callId":5}"#, .invalidField("callId")),
        (#"{"message_action":1,"callId":"c","cancelCallByInternal":"1"}"#, .invalidField("cancelCallByInternal")),
        (#"{"message_action":0,"callId":"c","fromUserExtension":"Ann"}"#, .invalidField("fromUserExtension")),
    ])
    func malformedMessagesAreRefusedSayingWhy(text: String, error: WireError) {
        #expect(throws: error) { try CallMessageHead(text) }
        #expect(throws: error) { try CallMessageHead(readingTree: text) }
    }

    @Test func aDeviceIdThatIsNotAStringReadsAsAbsent() throws {
        #expect(try CallMessageHead(#"{"message_action":2,"callId":"c","deviceId":5}"#).deviceId == nil)
    }
}
