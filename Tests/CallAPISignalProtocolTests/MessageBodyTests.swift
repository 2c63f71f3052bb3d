import CallAPIWire
import Testing

@testable import CallAPISignalProtocol

/// A message body read off the wire stays escaped: the server copies it into the relayed message, and its text is
/// the text the general decoder reads.
@Suite struct MessageBodyTests {
    /// A send read by the fast path keeps its body's bytes as sent, whatever escapes they use.
    @Test(arguments: [
        #"plain"#, #"\u0041\/b"#, #"{\"kind\":\"offer\",\"sdp\":\"v=0\r\n\"}"#, #"\ud83d\ude00 \u00e9 é"#, "",
        #"\\\"\b\f\n\r\t"#,
    ])
    func aSendsBodyIsKeptAsItsSenderEscapedIt(escaped: String) throws {
        let text = #"{"type":"send","id":1,"to":"1002","body":""# + escaped + #""}"#
        guard case .send(let send) = try #require(FrameFastPath.decodeClientFrame(text)) else {
            Issue.record("not a send")
            return
        }
        let general = try FrameCoding.decodeClientFrameGenerally(text).get()
        guard case .send(let generalSend) = general else {
            Issue.record("not a send")
            return
        }
        #expect(send.body == generalSend.body)
        #expect(send.relayBody.escapedCount == escaped.utf8.count)
        let message = ServerFrame.message(.init(from: "1001", relayBody: send.relayBody, sentAt: 1, messageId: "m"))
        let written = try #require(FrameFastPath.encode(message))
        #expect(written.contains(#""body":""# + escaped + #"","#))
        #expect(
            FrameCoding.decodeServerFrame(written)
                == .success(
                    .message(
                        .init(
                            from: "1001", body: generalSend.body, sentAt: 1, messageId: "m"))))
    }

    /// A kept body's text is read back exactly wherever its escapes fall: before, across and after each
    /// eight-byte stretch, in the tail shorter than eight, multi-byte characters and `\u` escapes included.
    @Test func keptBodiesReadBackExactlyWhereverTheirEscapesFall() {
        let pieces = ["\"", "\\", "\n", "é", "😀", "\u{01}", "/", "ab"]
        for length in 0...24 {
            for piece in pieces {
                for at in 0...length {
                    let plain = String(repeating: "x", count: length)
                    let text = String(plain.prefix(at)) + piece + String(plain.dropFirst(at)) + piece
                    var quoted: [UInt8] = []
                    quoted.writeQuoted(text)
                    let body = MessageBody(checkedEscaped: Array(quoted.dropFirst().dropLast()))
                    #expect(body.text == text, "\(text.debugDescription)")
                }
            }
        }
        let spelled = #"\u00e9\ud83d\ude00\/\b\f\n\r\t\"\\ end"#
        #expect(MessageBody(checkedEscaped: Array(spelled.utf8)).text == "é😀/\u{08}\u{0C}\n\r\t\"\\ end")
    }

    /// Text bodies are escaped as before, and compare equal to the same text kept escaped another way.
    @Test func bodiesAreEqualWhenTheirTextsAre() {
        let kept = MessageBody(checkedEscaped: Array(#"\u0041\/"#.utf8))
        #expect(kept == MessageBody("A/"))
        #expect(kept == MessageBody(checkedEscaped: Array("A/".utf8)))
        #expect(kept != MessageBody("A"))
        #expect(MessageBody("a\"b").escapedCount == 4)
        var bytes: [UInt8] = []
        MessageBody("a\"b").writeQuoted(to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == #""a\"b""#)
    }

    /// The ledger unescapes only bodies that may be call messages: never one whose text starts with `{`.
    @Test(arguments: [(#"{\"a\":1}"#, true), (#"\u007b\"a\":1}"#, true), ("tag;1;x", false), ("", false)])
    func onlyABodyThatCannotBeAnObjectIsPassedOver(escaped: String, mayBe: Bool) {
        let body = MessageBody(checkedEscaped: Array(escaped.utf8))
        #expect(body.mayBeObject == mayBe)
        if body.text.hasPrefix("{") { #expect(body.mayBeObject) }
    }

    /// Keys asked to be kept escaped are checked as any string is, and values of other kinds read as usual.
    @Test func pickedStringsKeptEscapedAreCheckedAndOtherValuesReadAsUsual() {
        let keys: JSONKeys = ["a", "b"]
        #expect(
            FlatJSONObject.pick(keys, from: #"{"a":"x\"y","b":"x\"y"}"#, keepingEscaped: 1)
                == [.escapedString(Array(#"x\"y"#.utf8)), .string("x\"y")])
        #expect(FlatJSONObject.pick(keys, from: #"{"a":5,"b":null}"#, keepingEscaped: 3) == [.int(5), .null])
        #expect(FlatJSONObject.pick(keys, from: #"{"a":"\ud800"}"#, keepingEscaped: 1) == nil)
        #expect(FlatJSONObject.pick(keys, from: #"{"a":"\x"}"#, keepingEscaped: 1) == nil)
        #expect(FlatJSONObject.pick(keys, from: "{\"a\":\"raw\u{01}control\"}", keepingEscaped: 1) == nil)
    }
}
