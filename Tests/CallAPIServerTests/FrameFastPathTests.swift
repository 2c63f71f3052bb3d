import CallAPIWire
import Testing

@testable import CallAPISignalProtocol

/// The fast frame reader and writer agree with the general (`JSONDecoder`/`JSONEncoder`) path byte for byte,
/// including escaping and unicode, and leave everything they are not sure of to it, errors included.
@Suite struct FrameFastPathTests {
    /// Strings that exercise escaping: quotes, backslashes, slashes, every control character, DEL, the line and
    /// paragraph separators, accents, astral-plane emoji, a byte-order mark, JSON inside JSON, the empty string.
    static let tricky: [String] = [
        "", "plain", "{\"kind\":\"offer\",\"sdp\":\"v=0\\r\\n\"}", "a/b\\c\"d", "é ü 中文 😀 \u{FEFF} \u{7F}",
        "\u{2028}\u{2029}", String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }), "\\u0041 not an escape",
    ]

    static var serverFrames: [ServerFrame] {
        var frames: [ServerFrame] = []
        for text in tricky {
            frames.append(.message(.init(from: text, body: text, sentAt: 1_700_000_000_123, messageId: text)))
            frames.append(.message(.init(from: "1001", body: text, sentAt: -5, messageId: "m-1", held: true)))
            frames.append(.answer(.init(id: 7, result: .failed, reason: .peerOffline, message: text)))
        }
        frames += [
            .answer(.init(id: 1, result: .delivered, messageId: "m-2", sessions: 2)),
            .answer(.init(id: nil, result: .queued, messageId: "m-3", ttl: 30)),
            .message(.init(from: "1", body: "x", sentAt: Int64.max, messageId: "m", held: false)),
            .message(.init(from: "1", body: "x", sentAt: Int64.min, messageId: "m")),
            .pong(.init(id: 3, serverTime: 99)), .pong(.init(id: nil, serverTime: 0)),
        ]
        return frames
    }

    static var clientFrames: [ClientFrame] {
        var frames: [ClientFrame] = tricky.map { .send(.init(id: 1, to: $0, body: $0)) }
        frames += [
            .send(.init(id: -3, to: "1002", body: "{}", ttl: 30)), .send(.init(id: Int.max, to: "1", body: "")),
            .ping(.init(id: 4)), .ping(.init()),
            .send(.init(id: 2, to: "1002", body: "{}", push: .call(callId: "c-1", callerName: nil, video: true))),
            .send(.init(id: 3, to: "1002", body: "{}", ttl: 30, push: .withdraw(callId: "c\"1", reason: .expired))),
            .send(
                .init(id: 4, to: "1", body: "x", push: .call(callId: "c", callerName: "Ann \u{1F600}", video: false))),
            .send(.init(id: 5, to: "1", body: "x", push: .withdraw(callId: "c", reason: .cancelled), copy: true)),
        ]
        return frames
    }

    @Test func serverFramesAreWrittenAsJSONEncoderWritesThem() throws {
        for frame in Self.serverFrames {
            let fast = try #require(FrameFastPath.encode(frame))
            #expect(fast == FrameCoding.encodeGenerally(frame))
            #expect(FrameCoding.encodeUTF8(frame) == Array(fast.utf8))
            #expect(FrameFastPath.decodeServerFrame(fast) == frame)
            #expect(try FrameCoding.decodeServerFrameGenerally(fast).get() == frame)
        }
    }

    @Test func clientFramesAreWrittenAsJSONEncoderWritesThem() throws {
        for frame in Self.clientFrames {
            let fast = try #require(FrameFastPath.encode(frame))
            #expect(fast == FrameCoding.encodeGenerally(frame))
            #expect(FrameCoding.encodeUTF8(frame) == Array(fast.utf8))
            #expect(FrameFastPath.decodeClientFrame(fast) == frame)
            #expect(try FrameCoding.decodeClientFrameGenerally(fast).get() == frame)
        }
    }

    @Test(arguments: [
        0, 1, -1, 9, 10, -10, 99, 100, 12_345, -98_765, 1_763_927_000_123, Int64(Int32.max), Int64.max, Int64.min,
        Int64.max - 1, Int64.min + 1,
    ])
    func integersAreWrittenAsStringWritesThem(value: Int64) {
        var bytes: [UInt8] = [UInt8(ascii: "x")]
        bytes.writeInteger(value)
        #expect(JSONLength.decimalLength(value) == bytes.count - 1)
        #expect(bytes == Array("x\(value)".utf8))
    }

    @Test func framesWrittenInPlaceAreTheBytesTheGeneralEncoderWritesWithinTheirBound() throws {
        #expect(FrameCoding.lengthBound(.presenceChanged(.init(userId: "é\"1", online: true))) == nil)
        #expect(FrameCoding.lengthBound(ClientFrame.subscribe(.init(id: 1))) == nil)
        for frame in Self.serverFrames {
            try expectWrittenInPlace(
                frame, as: FrameCoding.encodeGenerally(frame), bound: FrameCoding.lengthBound,
                write: FrameCoding.write)
        }
        for frame in Self.clientFrames {
            try expectWrittenInPlace(
                frame, as: FrameCoding.encodeGenerally(frame), bound: FrameCoding.lengthBound,
                write: FrameCoding.write)
        }
    }

    /// `frame` written within its bound is `text`'s bytes, into memory holding leftovers of an earlier frame (the
    /// length `write` gives says where the text ends).
    private func expectWrittenInPlace<Frame>(
        _ frame: Frame, as text: String, bound: (Frame) -> Int?,
        write: (Frame, UnsafeMutableRawBufferPointer) -> Int
    ) throws {
        let bound = try #require(bound(frame))
        #expect(bound >= text.utf8.count)
        var memory = [UInt8](repeating: UInt8(ascii: "z"), count: bound)
        let written = memory.withUnsafeMutableBytes { write(frame, $0) }
        #expect(Array(memory.prefix(written)) == Array(text.utf8))
    }

    /// The bound holds for the longest text each member can take: every byte of every string escaped as
    /// `\u00xx`, every integer at its longest.
    @Test func theBoundHoldsForTheLongestMembers() throws {
        let controls = String(repeating: "\u{1}", count: 40)
        let frames: [ServerFrame] = [
            .message(
                .init(
                    from: controls, body: controls, sentAt: Int64.min, messageId: controls, held: true, to: controls)),
            .answer(
                .init(
                    id: Int.min, result: .failed, reason: .invalidFrame, message: controls, messageId: controls,
                    sessions: Int.min, ttl: Int.min)),
            .pong(.init(id: Int.min, serverTime: Int64.min)),
        ]
        for frame in frames {
            let bound = try #require(FrameCoding.lengthBound(frame))
            #expect(bound >= FrameCoding.encodeUTF8(frame).count)
        }
        let send = ClientFrame.send(
            .init(
                id: Int.min, to: controls, body: controls, ttl: Int.min,
                push: PushMark(kind: .call, callId: controls, callerName: controls, video: true, reason: .cancelled),
                copy: true))
        #expect(try #require(FrameCoding.lengthBound(send)) >= FrameCoding.encodeUTF8(send).count)
    }

    /// Memory shorter than the text stops the program before a byte is written past it.
    @Test func aFrameWrittenIntoMemoryShorterThanItsTextStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            let frame = ServerFrame.pong(.init(id: 3, serverTime: 99))
            var memory = [UInt8](repeating: 0, count: FrameCoding.encodeUTF8(frame).count - 1)
            _ = memory.withUnsafeMutableBytes { FrameCoding.write(frame, into: $0) }
        }
    }

    @Test func generalFramesAreWrittenAsUTF8OfTheirText() {
        let frames: [ServerFrame] = [
            .presenceChanged(.init(userId: "é\"1", online: true)), .error(.init(code: .invalidFrame, message: "a\nb")),
        ]
        for frame in frames {
            #expect(FrameCoding.encodeUTF8(frame) == Array(FrameCoding.encode(frame).utf8))
        }
    }

    /// The client reads frames from the bytes off its socket: the same frame, or the same precise error, as from
    /// the text those bytes decode to. Non-ASCII text and invalid UTF-8 (replaced, as before) included.
    @Test func serverFramesReadFromTheirBytesAreReadAsFromTheirText() {
        var messages: [[UInt8]] = Self.serverFrames.map { Array(FrameCoding.encode($0).utf8) }
        let general: [ServerFrame] = [
            .presenceChanged(.init(userId: "é\"1", online: true)), .error(.init(code: .invalidFrame, message: "a\nb")),
            .presenceChanged(.init(userId: "1001", online: false)),
        ]
        messages += general.map { Array(FrameCoding.encode($0).utf8) }
        messages += [
            "", "{oops", "[1,2]", #"{"type":"answer","id":1,"result":"maybe"}"#, #"{"type":"pong","id":1}"#,
            #"{"type":"message","from":"1","body":"x","sentAt":1.5,"messageId":"m"}"#,
        ].map { Array($0.utf8) }
        // Invalid UTF-8 inside a string and outside one, and a truncated four-byte sequence at the end.
        let invalid: [[UInt8]] = [[0xFF], [0xC3], [0xF0, 0x9F, 0x98]]
        for bytes in invalid {
            messages.append(
                Array(#"{"type":"message","from":"1","body":""#.utf8) + bytes
                    + Array(#"","sentAt":1,"messageId":"m"}"#.utf8))
            messages.append(Array(#"{"type":"pong","serverTime":1}"#.utf8) + bytes)
        }
        for bytes in messages {
            let fromBytes = bytes.withUnsafeBufferPointer { FrameCoding.decodeServerFrame(utf8: $0) }
            #expect(fromBytes == FrameCoding.decodeServerFrame(String(decoding: bytes, as: UTF8.self)))
        }
    }

    /// The server reads client frames from the checked bytes of a message: the same frame, or the same precise
    /// error, as from its text.
    @Test func clientFramesReadFromTheirBytesAreReadAsFromTheirText() {
        var messages = Self.clientFrames.map { FrameCoding.encode($0) }
        messages += [
            "", "{oops", "[1,2]", #"{"type":"dance","id":4}"#, #"{"type":"send","id":5,"to":"1002"}"#,
            #"{"type":"login","token":"t"}"#, #"{"type":"send","id":1,"to":"1","body":"\ud800"}"#,
        ]
        for text in messages {
            let fromBytes = Array(text.utf8).withUnsafeBufferPointer { FrameCoding.decodeClientFrame(utf8: $0) }
            #expect(fromBytes == FrameCoding.decodeClientFrame(text))
        }
    }

    @Test func theWireFormatIsUnchanged() {
        #expect(
            FrameCoding.encode(.send(.init(id: 2, to: "1002", body: "a\"b\n", ttl: 30)))
                == #"{"body":"a\"b\n","id":2,"to":"1002","ttl":30,"type":"send"}"#)
        #expect(
            FrameCoding.encode(.message(.init(from: "1001", body: "/é\u{01}", sentAt: 5, messageId: "m-1", held: true)))
                == #"{"body":"/é\u0001","from":"1001","held":true,"messageId":"m-1","sentAt":5,"type":"message"}"#)
        #expect(
            FrameCoding.encode(.answer(.init(id: 1, result: .delivered, messageId: "m-1", sessions: 1)))
                == #"{"id":1,"messageId":"m-1","result":"delivered","sessions":1,"type":"answer"}"#)
    }

    /// Other spellings of the same frames: whitespace, escapes (surrogate pairs too), key order, unknown keys,
    /// nulls for absent optionals.
    @Test(arguments: [
        #" { "type" : "send" , "id" : 5 , "to" : "1002" , "body" : "x" } "#,
        #"{"body":"\u00e9\ud83d\ude00\/\b\f\n\r\t\"\\","id":0,"to":"1","type":"send","extra":"ignored"}"#,
        #"{"t\u0079pe":"send","id":-1,"to":"1","body":"","ttl":null}"#,
        "{\"type\":\"send\",\"id\":1,\"to\":\"\u{1F600}\",\"body\":\"é\"}",
        #"{"type":"ping"}"#, #"{"type":"ping","id":null}"#,
        #"{"type":"send","id":1,"to":"1","body":"x","push":null}"#,
        #"{"type":"send","id":1,"to":"1","body":"x","push":{"kind":"call","callId":"c","video":null,"x":1}}"#,
        #"{"type":"send","id":1,"to":"1","body":"x","push":{"kind":"withdraw","callId":"c","reason":"expired"}}"#,
        #"{"type":"send","id":1,"to":"1","body":"x","extra":{"a":1}}"#,
        #"{"z":1,"type":"send","z":"again","id":1,"to":"1","body":"x"}"#, #"{"id":3,"to":"ignored","type":"ping"}"#,
    ])
    func spellingsDecodeAsTheGeneralPathDecodesThem(text: String) throws {
        let fast = try #require(FrameFastPath.decodeClientFrame(text))
        #expect(fast == (try FrameCoding.decodeClientFrameGenerally(text).get()))
    }

    @Test(arguments: [
        #"{"type":"message","from":"1","body":"\u00e9","sentAt":1,"messageId":"m","held":null}"#,
        #"{"type":"message","from":"1","body":"{\"kind\":\"offer\",\"sdp\":\"v=0\r\n\"} \ud83d\ude00\/\b\f\t\\ é","sentAt":1,"messageId":"m"}"#,
        #"{"type":"message","from":"1","body":"\"","sentAt":1,"messageId":"\u006d-1"}"#,
        #"{"type":"answer","id":1,"result":"failed","reason":"from_the_future","message":"m"}"#,
        #"{"type":"pong","serverTime":-1}"#,
        #"{"z":1,"type":"answer","id":1,"result":"delivered","from":"not an answer's","body":null}"#,
        #"{"serverTime":5,"type":"pong","held":true,"extra":{"a":"b"}}"#,
        #"{"z":1,"type":"pong","z":2,"serverTime":3}"#,
    ])
    func serverSpellingsDecodeAsTheGeneralPathDecodesThem(text: String) throws {
        let fast = try #require(FrameFastPath.decodeServerFrame(text))
        #expect(fast == (try FrameCoding.decodeServerFrameGenerally(text).get()))
    }

    /// Malformed or unusual text is left to the general path, so its errors (code, message, request id, type)
    /// are exactly what they were.
    @Test(arguments: [
        "", "{oops", "[1,2]", "{\"id\":3}", "{\"type\":\"dance\",\"id\":4}",
        "{\"type\":\"send\",\"id\":5,\"to\":\"1002\"}",
        "{\"type\":\"send\",\"id\":5,\"to\":1002,\"body\":\"x\"}",
        "{\"type\":\"send\",\"id\":5.5,\"to\":\"1\",\"body\":\"x\"}",
        "{\"type\":\"send\",\"id\":1e2,\"to\":\"1\",\"body\":\"x\"}",
        "{\"type\":\"send\",\"id\":01,\"to\":\"1\",\"body\":\"x\"}",
        "{\"type\":\"send\",\"id\":99999999999999999999,\"to\":\"1\",\"body\":\"x\"}",
        "{\"type\":\"send\",\"id\":1,\"to\":\"1\",\"body\":\"\\ud800\"}",
        "{\"type\":\"send\",\"id\":1,\"to\":\"1\",\"body\":\"\\x\"}",
        "{\"type\":\"send\",\"id\":1,\"to\":\"1\",\"body\":\"a\u{01}b\"}",
        "{\"type\":\"send\",\"id\":1,\"to\":\"1\",\"body\":\"x\"} trailing",
        "{\"type\":\"send\",\"id\":1,\"to\":\"1\",\"body\":\"x\",}",
        "{\"type\":\"send\",\"id\":1,\"id\":2,\"to\":\"1\",\"body\":\"x\"}",
        "{\"type\":\"send\",\"id\":null,\"to\":\"1\",\"body\":\"x\"}",
        "{\"type\":\"send\",\"id\":1,\"to\":\"1\",\"body\":[1]}",
        "{\"type\":\"ping\",\"id\":\"7\"}", "{\"type\":7}", "{\"type\":\"send\",\"id\":1,\"to\":\"1\",\"body\":\"x\"",
        "{\"type\":\"send\",\"id\":-,\"to\":\"1\",\"body\":\"x\"}",
        "{\"type\":\"send\",\"id\":1,\"to\":\"1\",\"body\":tru}",
        #"{"type":"send","id":1,"to":"1","body":"x","push":{"kind":"ring","callId":"c"}}"#,
        #"{"type":"send","id":1,"to":"1","body":"x","push":{"kind":"withdraw","callId":"c","reason":"bored"}}"#,
        #"{"type":"send","id":1,"to":"1","body":"x","push":{"kind":"call"}}"#,
        #"{"type":"send","id":1,"to":"1","body":"x","push":{"kind":"call","callId":"c","video":"yes"}}"#,
        #"{"type":"send","id":1,"to":"1","body":"x","push":"call"}"#,
        #"{"type":"send","id":1,"to":"1","body":"x","push":{"kind":"call","callId":"c","x":{"y":1}}}"#,
    ])
    func malformedTextGetsTheGeneralPathsPreciseError(text: String) {
        #expect(FrameFastPath.decodeClientFrame(text) == nil)
        #expect(FrameCoding.decodeClientFrame(text) == FrameCoding.decodeClientFrameGenerally(text))
    }

    @Test(arguments: [
        "{\"type\":\"message\",\"from\":\"1\",\"body\":\"x\",\"sentAt\":1.5,\"messageId\":\"m\"}",
        "{\"type\":\"message\",\"from\":\"1\",\"body\":\"x\",\"sentAt\":1,\"messageId\":\"m\",\"held\":1}",
        "{\"type\":\"answer\",\"id\":1,\"result\":\"maybe\"}", "{\"type\":\"answer\",\"id\":1}",
        "{\"type\":\"pong\",\"id\":1}",
        // Bad text after an escape: a lone surrogate, a raw control character, no closing quote.
        #"{"type":"message","from":"1","body":"a\"\ud800 b","sentAt":1,"messageId":"m"}"#,
        "{\"type\":\"message\",\"from\":\"1\",\"body\":\"a\\n\u{01}\",\"sentAt\":1,\"messageId\":\"m\"}",
        #"{"type":"message","from":"1","sentAt":1,"messageId":"m","body":"a\n"#,
    ])
    func malformedServerTextGetsTheGeneralPathsPreciseError(text: String) {
        #expect(FrameFastPath.decodeServerFrame(text) == nil)
        #expect(FrameCoding.decodeServerFrame(text) == FrameCoding.decodeServerFrameGenerally(text))
    }

    @Test(arguments: [
        #"{"a":"x","b":1,"c":true,"d":null,"e":{"f":"g"}}"#, #"{"b":2}"#, "{}", #" { "z" : "\"" , "a" : "\u00e9" } "#,
        #"{"a\u0062":1,"b":-3}"#, #"{"z":1,"z":2,"a":"kept"}"#, #"{"a":1,"a":2}"#, #"{"a":[1]}"#, #"{"z":[1]}"#,
        #"{"z":"\ud800","a":1}"#, #"{"z":1.5}"#, #"{"a":1"#, #"{"a":1}x"#, "[]", "",
    ])
    func pickingKeysReadsWhatTheWholeObjectHolds(text: String) {
        let keys: JSONKeys = ["a", "b", "c", "d", "e", "ab"]
        let picked = FlatJSONObject.pick(keys, from: text)
        if let whole = FlatJSONObject(text) {
            #expect(picked == keys.map { whole[$0.description] })
        } else if let picked {
            // Only a repeated key that is not picked is read by `pick` and refused by the whole object.
            let rest = FlatJSONObject(text.replacing(#""z":1,"z":2,"#, with: ""))
            #expect(picked == keys.map { rest?[$0.description] })
        }
    }

    /// Every key is found from its text, and a text that is none of them (a key cut short or grown by a byte, one
    /// alike in its first eight bytes) is none: for the frames' lists, keys alike in their first eight bytes, and
    /// the most keys a list holds.
    @Test(
        arguments: [
            ["type", "id", "to", "body", "ttl", "copy", "push"],
            [
                "type", "id", "from", "body", "sentAt", "messageId", "held", "to", "result", "reason", "message",
                "sessions",
                "ttl", "serverTime",
            ],
            ["abcdefgh1", "abcdefgh2", "abcdefgh", "x"],
            [
                "key0", "key1", "key2", "key3", "key4", "key5", "key6", "key7", "key8", "key9", "key10", "key11",
                "key12", "key13", "key14", "key15", "key16", "key17", "key18", "key19", "key20", "key21", "key22",
                "key23", "key24", "key25", "key26", "key27", "key28", "key29", "key30", "key31", "key32", "key33",
                "key34", "key35", "key36", "key37", "key38", "key39", "key40", "key41", "key42", "key43", "key44",
                "key45", "key46", "key47", "key48", "key49", "key50", "key51", "key52", "key53", "key54", "key55",
                "key56", "key57", "key58", "key59", "key60", "key61", "key62", "key63",
            ],
        ] as [[StaticString]])
    func everyKeyIsFoundFromItsTextAndNothingElseIs(literals: [StaticString]) {
        let keys = JSONKeys(literals)
        let names = literals.map(\.description)
        // Each text is read as a key in an object, followed by its quote, as the reader meets it.
        func slot(of text: String) -> Int?? {
            FlatJSONObject.pick(keys, from: #"{""# + text + #"":1}"#).map { $0.firstIndex { $0 != nil } }
        }
        for (index, name) in names.enumerated() {
            #expect(slot(of: name) == .some(index))
            for near in [String(name.dropLast()), name + "s", "Q" + name.dropFirst(), name.dropLast() + "Q"]
            where !names.contains(near) && !near.isEmpty {
                #expect(slot(of: near) == .some(nil), "\(near)")
            }
        }
    }

    @Test(arguments: [#"{"a":"x","e":{"f":"g"}}"#, #"{"a":1,"a":2}"#, #"{"a":1"#, "[]"])
    func picksOnTheStackReachTheirReaderOnlyForTextThatIsRead(text: String) {
        let keys: JSONKeys = ["a", "b", "e"]
        var calls = 0
        let seen = text.utf8.withContiguousStorageIfAvailable { bytes in
            FlatJSONObject.withPicked(keys, fromUTF8: bytes) { values -> [FlatJSONObject.Value?]? in
                calls += 1
                return Array(values)
            }
        }
        let picked = FlatJSONObject.pick(keys, from: text)
        #expect(seen == .some(picked))
        #expect(calls == (picked == nil ? 0 : 1))
    }

    @Test func flatObjectsReadIntegersAtTheirLimits() throws {
        let object = try #require(
            FlatJSONObject(#"{"a":9223372036854775807,"b":-9223372036854775808,"c":-0,"d":true,"e":false,"f":null}"#))
        #expect(object["a"] == .int(Int64.max))
        #expect(object["b"] == .int(Int64.min))
        #expect(object["c"] == .int(0))
        #expect(object["d"] == .bool(true) && object["e"] == .bool(false) && object["f"] == .null)
        #expect(FlatJSONObject(#"{"a":9223372036854775808}"#) == nil)
        #expect(FlatJSONObject(#"{"a":-9223372036854775809}"#) == nil)
        #expect(FlatJSONObject(#"{"a":{"b":{"c":1}}}"#) == nil)
        #expect(FlatJSONObject(#"{"a":[1]}"#) == nil)
        let nested = try #require(FlatJSONObject(#"{"a":{"b":1,"c":"d"},"e":{}}"#))
        #expect(nested.optionalObject("a")??["c"] == .string("d"))
        #expect(nested.optionalObject("e")??.members.isEmpty == true)
        #expect(try #require(FlatJSONObject(" {} ")).members.isEmpty)
    }
}
