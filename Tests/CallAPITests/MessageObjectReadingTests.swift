import Testing

@testable import CallAPI

/// The machine's reading of received texts into per-key slots (issue 13, item 5): the same fields, and the same
/// verdict on every text, as the generic JSON parser's dictionary.
@Suite("Message object reading")
struct MessageObjectReadingTests {
    /// Messages and near-messages: escaped and repeated keys, unknown keys, nulls, nesting, whitespace.
    static let objects = [
        #"{"callId":"c-1","fromRoomId":"r","fromUserId":1,"message_action":0,"message_timestamp":5,"#
            + #""message_version":"1.0","remoteUserId":2}"#,
        #" { "call\u0049d" : "c-2" , "fromUserId":3,"message_action":2,"message_timestamp":6,"#
            + #""message_version":"1.0","x-extra":[1,{"y":null}]} "#,
        #"{"callId":"first","callId":"second","fromUserId":3,"message_action":4,"message_timestamp":7,"#
            + #""message_version":"1.0","hangupReason":null,"unknown_key_longer_than_sixteen":true}"#,
        #"{"ackMessageId":9,"callId":"c","fromUserExtension":{"nick":"a\"b"},"fromUserId":3,"inCall":1,"#
            + #""message_action":20,"message_timestamp":-1,"message_version":"1.0","reliability":1}"#,
        #"{"rejectedByDevice":"d","rejectByInternal":1,"rejectReason":"no","answeredByDevice":"e","#
            + #""cancelCallByInternal":0,"deviceId":"p","messageId":12345678901234567890}"#,
        "{}",
        #"{"callid":"not the key","fromUserID":1,"message_Action":1}"#,
    ]

    /// Texts that are JSON but not objects, and texts that are not JSON.
    static let others = [
        "[1,2]", #""text""#, "12", "null", " true ", "", "{", #"{"a":}"#, #"{"a":1,}"#, #"{"a":1} x"#,
        #"{"a" 1}"#, #"{"callId":"c"#, #"{"ca\llId":1}"#,
        String(repeating: "[", count: 70) + String(repeating: "]", count: 70),
        #"{"a":[1,2}"#, "{\"ke\u{01}y\":1}",
    ]

    @Test("an object reads into the fields the generic parser makes of it")
    func objectsReadAsTheGenericParserReadsThem() throws {
        for text in Self.objects {
            guard case .object(let expected) = try JSONReader.parse(text) else {
                Issue.record("not an object: \(text)")
                continue
            }
            var object = CallMessageObject()
            #expect(try JSONReader.parseCallObject(text, into: &object) == true)
            #expect(object.fields == expected, "\(text)")
        }
    }

    @Test("a text that is not an object is refused as the generic parser refuses it")
    func nonObjectsGetTheGenericParsersVerdict() {
        for text in Self.others {
            let generic = try? JSONReader.parse(text)
            var object = CallMessageObject()
            let read = try? JSONReader.parseCallObject(text, into: &object)
            #expect(read == (generic == nil ? nil : false), "\(text)")
            let error: WireError = generic == nil ? .notJSON : .notAnObject
            #expect(throws: error) { try CallMessage.decode(text) }
        }
    }

    @Test("each key of the wire format is found by its spelling closed by a quote, and only by it")
    func keysAreFoundByTheirSpelling() {
        func key(in text: String, at start: Int = 0) -> CallMessageObject.Key? {
            var text = text
            return text.withUTF8 { CallMessageObject.Key(keyAt: start, in: $0) }
        }
        for known in CallMessageObject.Key.allCases {
            let name = known.name
            #expect(CallMessageObject.Key(name: name) == known)
            #expect(key(in: name + "\"") == known)
            #expect(key(in: "{\"" + name + "\":1}", at: 2) == known)
            #expect(key(in: name) == nil, "no closing quote")
            #expect(key(in: name + "x\"") == nil, "longer")
            #expect(key(in: String(name.dropLast()) + "\"") == nil, "shorter")
            // Every byte changed in turn, the first, the last and those in the middle words included.
            let bytes = Array(name.utf8)
            for index in bytes.indices {
                var altered = bytes
                altered[index] ^= 0x20
                #expect(key(in: String(decoding: altered, as: UTF8.self) + "\"") == nil, "\(altered)")
            }
        }
        #expect(key(in: "") == nil)
        #expect(key(in: "\"") == nil)
        #expect(key(in: "callId\"", at: 7) == nil)
    }

    /// Texts made by changing call messages a byte at a time: every change of one byte, at every position, to
    /// each of the bytes that matter to a parser, and each byte dropped.
    static var mutations: [String] {
        let messages = [
            CallMessage(
                action: .videoCall, timestamp: 1_767_225_600_000, messageId: 12, fromUserId: 1, callId: "call-1",
                remoteUserId: 2, fromRoomId: "room-1", reliable: true),
            CallMessage(
                action: .ack, timestamp: -5, messageId: 7, fromUserId: 4_294_967_295, callId: "c",
                reliable: true, ackMessageId: 3, inCall: false),
            CallMessage(
                action: .reject, timestamp: 0, messageId: nil, fromUserId: 9, callId: "a\"b\\c\u{7f}é",
                rejectByInternal: true, rejectReason: "busy"),
        ]
        let replacements = Array(#"{}[]":,\ -0.1eE+nulltrue"#.utf8) + [0x00, 0x1F, 0xC3, 0xFF]
        var texts: [String] = []
        for message in messages {
            let bytes = Array(message.encoded().utf8)
            texts.append(String(decoding: bytes, as: UTF8.self))
            for index in bytes.indices {
                var dropped = bytes
                dropped.remove(at: index)
                texts.append(String(decoding: dropped, as: UTF8.self))
                for replacement in replacements where replacement != bytes[index] {
                    var changed = bytes
                    changed[index] = replacement
                    texts.append(String(decoding: changed, as: UTF8.self))
                }
            }
        }
        return texts
    }

    @Test("on thousands of changed messages, the slots and the generic parser agree on every text")
    func slotsAgreeWithTheGenericParserOnChangedMessages() throws {
        for text in Self.mutations {
            let generic = try? JSONReader.parse(text)
            var object = CallMessageObject()
            let read = try? JSONReader.parseCallObject(text, into: &object)
            switch generic {
            case .object(let expected)?:
                #expect(read == true, "\(text)")
                #expect(object.fields == expected, "\(text)")
            case nil: #expect(read == nil, "\(text)")
            default: #expect(read == false, "\(text)")
            }
        }
    }
}

/// Event info handed over as what it is made from, built when read.
@Suite("Event info")
struct EventInfoTests {
    static let message = CallMessage(
        action: .videoCall, timestamp: 5, messageId: 1, fromUserId: 1, callId: "c", remoteUserId: 2,
        fromRoomId: "r", reliable: true)

    @Test("a sent message's info is its fields with the publisher set")
    func sentMessageInfoIsItsFieldsAndPublisher() {
        var expected = Self.message.fields
        expected[kPublisher] = .int(9)
        let change = CallStateChange(
            state: .calling, reason: .localVideoCall, eventReason: "",
            info: EventInfo(sent: Self.message).publishedBy(9))
        #expect(change.eventInfo == expected)
        #expect(
            change == CallStateChange(state: .calling, reason: .localVideoCall, eventReason: "", eventInfo: expected))
    }

    @Test("a received message's info is its fields with the channel's sender as sender and publisher")
    func receivedMessageInfoNamesTheSender() throws {
        let text = Self.message.encoded()
        let (_, object) = try CallMessage.decodeObject(text)
        guard case .object(var expected) = try JSONReader.parse(text) else {
            Issue.record("not an object")
            return
        }
        expected[kFromUserId] = .int(4)
        expected[kPublisher] = .int(4)
        #expect(EventInfo(received: object).sentBy(4).dictionary == expected)
        expected[kPublisher] = .int(6)
        #expect(EventInfo(received: object).sentBy(4).publishedBy(6).dictionary == expected)
    }

    @Test("setting a state change's event info replaces what it was built from")
    func settingEventInfoReplacesIt() {
        var change = CallStateChange(
            state: .calling, reason: .localVideoCall, eventReason: "", info: EventInfo(sent: Self.message))
        change.eventInfo = ["k": .int(1)]
        #expect(change.eventInfo == ["k": .int(1)])
        #expect(change != CallStateChange(state: .calling, reason: .localVideoCall, eventReason: "", eventInfo: [:]))
    }
}

/// The compact layouts behind the values the machine copies on every input.
@Suite("Compact machine values")
struct CompactMachineValuesTests {
    @Test("a message's boxed fields read back as set, and clearing them leaves a message equal to one without")
    func rareMessageFieldsRoundTrip() {
        let plain = CallMessage(action: .reject, timestamp: 1, messageId: 2, fromUserId: 3, callId: "c")
        var message = plain
        message.rejectReason = "busy"
        message.answeredByDevice = "a"
        message.rejectedByDevice = "r"
        message.hangupReason = "h"
        #expect(message.rejectReason == "busy" && message.hangupReason == "h")
        #expect(message.answeredByDevice == "a" && message.rejectedByDevice == "r")
        #expect(message != plain)
        #expect(plain.rejectReason == nil, "the copy it came from is untouched")
        message.rejectReason = nil
        message.answeredByDevice = nil
        message.rejectedByDevice = nil
        message.hangupReason = nil
        #expect(message == plain)
        let initialized = CallMessage(
            action: .reject, timestamp: 1, messageId: 2, fromUserId: 3, callId: "c", rejectReason: "busy")
        var set = plain
        set.rejectReason = "busy"
        #expect(initialized == set)
    }

    @Test("cost maps are equal when the same stages have the same times")
    func costMapsCompareWhatWasRecorded() {
        var a = CostMap()
        var b = CostMap()
        #expect(a == b)
        a.record(.acceptCall, startedAt: 0, now: 10)
        #expect(a != b)
        b.record(.acceptCall, startedAt: 0, now: 10)
        #expect(a == b)
        b[.recvFirstFrame] = 0
        #expect(a != b, "a stage recorded at 0 ms is not a stage not recorded")
        b[.recvFirstFrame] = nil
        #expect(a == b)
        #expect(a[.acceptCall] == 10 && a[.recvFirstFrame] == nil)
    }
}
