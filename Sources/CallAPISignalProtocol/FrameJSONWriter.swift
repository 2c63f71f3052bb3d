/// Writes one flat JSON object as ``FrameCoding`` sends frames, without Foundation: members in the order given
/// (callers give them sorted, as `JSONEncoder`'s `.sortedKeys` does), strings escaped exactly as `JSONEncoder`
/// with `.withoutEscapingSlashes` does (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other controls as `\u00xx`),
/// so the text is byte for byte what the general encoder writes.
package struct FrameJSONWriter {
    /// The UTF-8 text so far. Bytes, not a `String`: appending to an array costs a fraction of appending to a
    /// string, and the server writes the bytes straight into the socket's buffer.
    private var bytes: [UInt8]
    private var empty = true

    package init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    /// Writes into `storage`'s memory (emptied first), after `room` zero bytes left for the caller: the server
    /// encodes every frame into one array it keeps, with room for the WebSocket header in front, so a frame costs
    /// neither an allocation nor a second copy to put the header before it.
    package init(reusing storage: consuming [UInt8], room: Int) {
        bytes = consume storage
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: repeatElement(0, count: room))
        bytes.append(UInt8(ascii: "{"))
    }

    /// The object's text, closed.
    package mutating func finish() -> String {
        String(decoding: finishUTF8(), as: UTF8.self)
    }

    /// The object's text as UTF-8, closed.
    package mutating func finishUTF8() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    package mutating func member(_ key: StaticString, _ value: String) {
        open(key)
        Self.appendString(value, to: &bytes)
    }

    /// A message body: escaped as a string is, or copied when it is kept escaped already.
    package mutating func member(_ key: StaticString, _ value: MessageBody) {
        open(key)
        value.appendQuoted(to: &bytes)
    }

    package mutating func member(_ key: StaticString, _ value: String?) {
        if let value { member(key, value) }
    }

    package mutating func member(_ key: StaticString, _ value: Int64) {
        open(key)
        Self.appendInteger(value, to: &bytes)
    }

    package mutating func member(_ key: StaticString, _ value: Int) {
        member(key, Int64(value))
    }

    package mutating func member(_ key: StaticString, _ value: Int?) {
        if let value { member(key, value) }
    }

    package mutating func member(_ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        open(key)
        bytes.append(contentsOf: value ? Self.trueText : Self.falseText)
    }

    /// A nested object, written by its own writer (closed here).
    package mutating func member(_ key: StaticString, object: inout FrameJSONWriter) {
        open(key)
        bytes.append(contentsOf: object.finishUTF8())
    }

    private static let trueText = Array("true".utf8)
    private static let falseText = Array("false".utf8)

    private mutating func open(_ key: StaticString) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Appends `value` in decimal, as `String(value)` writes it.
    static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits = 1
        var rest = magnitude
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        var index = start + digits - 1
        repeat {
            bytes[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            index -= 1
        } while magnitude > 0
    }

    /// Appends `string` quoted and escaped. Every byte that needs escaping is ASCII, and the bytes of other
    /// characters (all 0x80 and above) are copied as they are, so the text stays valid UTF-8. Two passes: the
    /// first counts what the escapes add, so the second writes into room made once instead of appending piece by
    /// piece (a relayed CallAPI message escapes every quote of its JSON).
    static func appendString(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            let added = escapesLength(utf8)
            guard added > 0 else {
                bytes.append(contentsOf: utf8)
                return
            }
            var at = bytes.count
            bytes.append(contentsOf: repeatElement(0, count: utf8.count + added))
            bytes.withUnsafeMutableBufferPointer { out in
                guard let source = utf8.baseAddress, let target = out.baseAddress else { return }
                var index = 0
                while index < utf8.count {
                    let run = JSONPlainRun.length(in: utf8, from: index)
                    (target + at).update(from: source + index, count: run)
                    at &+= run
                    index &+= run
                    guard index < utf8.count else { break }
                    let byte = utf8[index]
                    index &+= 1
                    out[at] = UInt8(ascii: "\\")
                    if let letter = shortEscape(byte) {
                        out[at &+ 1] = letter
                        at &+= 2
                    } else {
                        out[at &+ 1] = UInt8(ascii: "u")
                        out[at &+ 2] = UInt8(ascii: "0")
                        out[at &+ 3] = UInt8(ascii: "0")
                        out[at &+ 4] = hexDigit(byte >> 4)
                        out[at &+ 5] = hexDigit(byte & 0x0F)
                        at &+= 6
                    }
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The length of `text` as a JSON string's contents, escapes included (what ``appendString(_:to:)`` writes
    /// between the quotes).
    package static func escapedLength(of text: String) -> Int {
        var text = text
        return text.withUTF8 { $0.count + escapesLength($0) }
    }

    /// What escaping adds to the length of `utf8` (0 when nothing in it needs escaping); plain runs are skipped
    /// eight bytes at a time (``JSONPlainRun``).
    package static func escapesLength(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        var added = 0
        var index = JSONPlainRun.length(in: utf8, from: 0)
        while index < utf8.count {
            added &+= Int(escapeLengths[Int(utf8[index])])
            index &+= 1
            index &+= JSONPlainRun.length(in: utf8, from: index)
        }
        return added
    }

    /// What escaping adds to each byte's one: 1 for the two-character escapes, 5 for the other controls
    /// (`\u00xx`), 0 for bytes written as they are (everything but a quote, a backslash and the controls).
    private static let escapeLengths: [UInt8] = (0...255).map { byte in
        let byte = UInt8(byte)
        guard JSONPlainRun.needsEscape(byte) else { return 0 }
        return shortEscape(byte) == nil ? 5 : 1
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
