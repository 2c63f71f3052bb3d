/// How ``JSONObjectWriter`` escapes a JSON string, exactly as `JSONEncoder` with `.withoutEscapingSlashes` does:
/// `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other controls as `\u00xx`. Every byte that needs escaping is ASCII,
/// and the bytes of other characters (all 0x80 and above) are written as they are, so the text stays valid UTF-8.
@usableFromInline
package enum JSONStringEscapes {
    /// The length of `text` as a JSON string's contents, escapes included.
    package static func escapedLength(of text: String) -> Int {
        var text = text
        return text.withUTF8 { $0.count &+ addedLength($0) }
    }

    /// What escaping adds to the length of `utf8` (0 when nothing in it needs escaping); plain runs are skipped
    /// eight bytes at a time (``JSONPlainRun``).
    @usableFromInline
    package static func addedLength(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        var added = 0
        var index = JSONPlainRun.length(in: utf8, from: 0)
        while index < utf8.count {
            added &+= Int(addedLengths[Int(utf8[index])])
            index &+= 1
            index &+= JSONPlainRun.length(in: utf8, from: index)
        }
        return added
    }

    /// What escaping adds to each byte's one: 1 for the two-character escapes, 5 for the other controls
    /// (`\u00xx`), 0 for bytes written as they are (everything but a quote, a backslash and the controls).
    private static let addedLengths: [UInt8] = (0...255).map { byte in
        let byte = UInt8(byte)
        guard JSONPlainRun.needsEscape(byte) else { return 0 }
        return shortEscape(byte) == nil ? 5 : 1
    }

    /// The letter after the backslash for the bytes with a two-character escape.
    static func shortEscape(_ byte: UInt8) -> UInt8? {
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
    static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
