import Testing

@testable import CallAPI

/// The JSON writer (CallAPIWireTests) writing a whole call message.
@Suite("Call message text")
struct CallMessageTextTests {
    @Test("A call message is written as wire format 1.0 text, byte for byte")
    func callMessageText() {
        let message = CallMessage(
            action: .hangup, timestamp: 1_767_225_600_123, messageId: 9, fromUserId: 1001, callId: "c-\u{7F}\"x")
        let text = message.encoded()
        #expect(
            text
                == #"{"callId":"c-\#u{7F}\"x","fromUserId":1001,"messageId":9,"message_action":4,"#
                + #""message_timestamp":1767225600123,"message_version":"1.0"}"#)
    }
}
