import Foundation
import Testing

@testable import CallAPIWire

/// The byte-level JSON writer behind every call message sent: escapes, integers at their bounds, nesting, and text
/// that Foundation's own parser reads back as the same value.
@Suite("JSON text writer")
struct JSONTextWriterTests {
    @Test("Quotes, backslashes and control characters are escaped as the client library always escaped them")
    func escapes() {
        #expect(String(jsonText: JSONValue.string("a\"b\\c")) == #""a\"b\\c""#)
        #expect(String(jsonText: JSONValue.string("\n\r\t\u{08}\u{0C}")) == #""\n\r\t\b\f""#)
        #expect(String(jsonText: JSONValue.string("\u{00}\u{01}\u{1F}x")) == #""\u0000\u0001\u001fx""#)
        #expect(String(jsonText: JSONValue.string("")) == #""""#)
    }

    @Test("Text other than ASCII and slashes is written as it is")
    func nonASCIIUnchanged() {
        #expect(String(jsonText: JSONValue.string("é/ü 😀 ✓")) == "\"é/ü 😀 ✓\"")
    }

    @Test("Integers are written as String(_:) writes them, at Int's bounds too")
    func integers() {
        for value in [0, 7, -7, 10, 99, -100, 1_767_225_600_123, Int.max, Int.min] {
            #expect(String(jsonText: JSONValue.int(value)) == String(value))
        }
    }

    @Test("Objects are compact with sorted keys; arrays, nulls, booleans and doubles are written as JSON")
    func nesting() {
        let value: JSONValue = .object([
            "b": .array([.null, .bool(true), .bool(false), .double(1.5), .double(.infinity)]),
            "a": .object(["z\"": .int(-1), "y": .string("s")]),
        ])
        #expect(String(jsonText: value) == #"{"a":{"y":"s","z\"":-1},"b":[null,true,false,1.5,null]}"#)
    }

    @Test("Foundation's parser reads the text back as the same value")
    func foundationReadsItBack() throws {
        var bytes = (0..<128).map { Character(UnicodeScalar(UInt8($0))) }
        bytes.append(contentsOf: ["é", "😀", "\u{2028}"])
        let text = String(bytes)
        let written = String(jsonText: JSONValue.object(["text": .string(text), "n": .int(-42)]))
        let parsed = try #require(
            try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [String: Any])
        #expect(parsed["text"] as? String == text)
        #expect(parsed["n"] as? Int == -42)
    }
}
