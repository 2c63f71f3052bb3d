import Testing

@testable import CallAPI

/// The direct message writer and the in-place parser (the allocation work of issue 13): the text written
/// straight from a message's typed fields is byte for byte the generic JSON writer's text of its `fields`, and
/// the parser reads what it reads, escapes, long keys and numbers at their bounds included.
@Suite("Message coding")
struct MessageCodingTests {
    /// Every action with every optional field set and unset, and strings that need escaping.
    static var messages: [CallMessage] {
        var messages: [CallMessage] = []
        for action in MessageAction.allCases {
            for full in [false, true] {
                var message = CallMessage(
                    action: action, timestamp: full ? 1_767_225_600_123 : 0, messageId: full ? 42 : nil,
                    fromUserId: full ? UInt(Int.max) : 0, callId: full ? "call \"quoted\" \\ \u{01}é" : "c")
                if full {
                    message.fromUserExtension = [
                        "nick": .string("a\nb"), "n": .int(-3), "ok": .bool(false),
                        "list": .array([.null, .double(1.5)]),
                    ]
                    message.remoteUserId = 7
                    message.fromRoomId = "room-ä"
                    message.cancelCallByInternal = true
                    message.rejectByInternal = true
                    message.rejectReason = "busy"
                    message.hangupReason = "bye\t"
                    message.reliable = true
                    message.ackMessageId = 41
                    message.inCall = false
                    message.deviceId = "phone-1"
                    message.answeredByDevice = "tablet-2"
                    message.rejectedByDevice = "watch-3"
                }
                messages.append(message)
            }
        }
        return messages
    }

    @Test("The written text is exactly the generic writer's text of the message's fields", arguments: messages)
    func writerMatchesGenericWriter(message: CallMessage) {
        #expect(message.encoded() == String(jsonText: JSONValue.object(message.fields)))
    }

    @Test(
        "What is written is read back as the same message and fields",
        arguments: messages.filter { $0.messageId != nil })
    func writtenTextReadsBack(message: CallMessage) throws {
        let decoded = try CallMessage.decode(message.encoded())
        #expect(decoded.fields == message.fields)
        #expect(decoded.message.encoded() == message.encoded())
    }

    @Test("Integers are read exactly up to Int's bounds, and beyond them as doubles")
    func integersAtTheirBounds() throws {
        #expect(try JSONReader.parse("123456789012345678") == .int(123_456_789_012_345_678))
        #expect(try JSONReader.parse("-123456789012345678") == .int(-123_456_789_012_345_678))
        #expect(try JSONReader.parse("9223372036854775807") == .int(Int.max))
        #expect(try JSONReader.parse("-9223372036854775808") == .int(Int.min))
        #expect(try JSONReader.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try JSONReader.parse("-0") == .int(0))
        #expect(try JSONReader.parse(" 1e2 ") == .double(100))
        #expect(throws: JSONReader.Failure.self) { try JSONReader.parse("-") }
        #expect(throws: JSONReader.Failure.self) { try JSONReader.parse("01") }
    }

    @Test("Long keys and values that spell them read as the same text")
    func longKeysRead() throws {
        let text = #"{"message_timestamp":"cancelCallByInternal","fromUserExtensionX":1,"rejectedByDevic\u0065":2}"#
        #expect(
            try JSONReader.parse(text)
                == .object([
                    "message_timestamp": .string("cancelCallByInternal"), "fromUserExtensionX": .int(1),
                    "rejectedByDevice": .int(2),
                ]))
    }
}
