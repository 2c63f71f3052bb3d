/// Writes one flat JSON object as ``FrameCoding`` sends frames, without Foundation: members in the order given
/// (callers give them sorted, as `JSONEncoder`'s `.sortedKeys` does), strings escaped exactly as `JSONEncoder`
/// with `.withoutEscapingSlashes` does (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other controls as `\u00xx`),
/// so the text is byte for byte what the general encoder writes.
package struct FrameJSONWriter {
    private(set) var text: String
    private var empty = true

    package init(capacity: Int = 64) {
        text = "{"
        text.reserveCapacity(capacity)
    }

    /// The object's text, closed.
    package mutating func finish() -> String {
        text.append("}")
        return text
    }

    package mutating func member(_ key: StaticString, _ value: String) {
        open(key)
        Self.appendString(value, to: &text)
    }

    package mutating func member(_ key: StaticString, _ value: String?) {
        if let value { member(key, value) }
    }

    package mutating func member(_ key: StaticString, _ value: Int64) {
        open(key)
        text.append(String(value))
    }

    package mutating func member(_ key: StaticString, _ value: Int) {
        open(key)
        text.append(String(value))
    }

    package mutating func member(_ key: StaticString, _ value: Int?) {
        if let value { member(key, value) }
    }

    package mutating func member(_ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        open(key)
        text.append(value ? "true" : "false")
    }

    /// A nested object, written by its own writer (closed here).
    package mutating func member(_ key: StaticString, object: inout FrameJSONWriter) {
        open(key)
        text.append(object.finish())
    }

    private mutating func open(_ key: StaticString) {
        if !empty { text.append(",") }
        empty = false
        text.append("\"")
        key.withUTF8Buffer { text.append(String(decoding: $0, as: UTF8.self)) }
        text.append("\":")
    }

    /// Appends `string` quoted and escaped.
    static func appendString(_ string: String, to text: inout String) {
        text.append("\"")
        // Most strings need no escaping: append them whole rather than scalar by scalar.
        guard string.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 }) else {
            text.append(string)
            text.append("\"")
            return
        }
        // Byte by byte: every byte that needs escaping is ASCII, and the bytes of other characters (all 0x80 and
        // above) are copied as they are, so the text stays valid UTF-8.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count + 16)
        for byte in string.utf8 {
            if let letter = shortEscape(byte) {
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(letter)
            } else if byte < 0x20 {
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0x0F))
            } else {
                bytes.append(byte)
            }
        }
        text.append(String(decoding: bytes, as: UTF8.self))
        text.append("\"")
    }

    /// The letter after the backslash for the bytes with a two-character escape.
    private static func shortEscape(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "\""): UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): UInt8(ascii: "\\")
        case UInt8(ascii: "\n"): UInt8(ascii: "n")
        case UInt8(ascii: "\r"): UInt8(ascii: "r")
        case UInt8(ascii: "\t"): UInt8(ascii: "t")
        case 0x08: UInt8(ascii: "b")
        case 0x0C: UInt8(ascii: "f")
        default: nil
        }
    }

    /// The lower-case hex digit of `value` (0-15), as `String(_:radix:)` writes it.
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
