/// Writes one flat JSON object as ``FrameCoding`` sends frames, without Foundation: members in the order given
/// (callers give them sorted, as `JSONEncoder`'s `.sortedKeys` does), strings escaped exactly as `JSONEncoder`
/// with `.withoutEscapingSlashes` does (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other controls as `\u00xx`),
/// so the text is byte for byte what the general encoder writes.
struct FrameJSONWriter {
    private(set) var text: String
    private var empty = true

    init(capacity: Int = 64) {
        text = "{"
        text.reserveCapacity(capacity)
    }

    /// The object's text, closed.
    mutating func finish() -> String {
        text.append("}")
        return text
    }

    mutating func member(_ key: StaticString, _ value: String) {
        open(key)
        Self.appendString(value, to: &text)
    }

    mutating func member(_ key: StaticString, _ value: String?) {
        if let value { member(key, value) }
    }

    mutating func member(_ key: StaticString, _ value: Int64) {
        open(key)
        text.append(String(value))
    }

    mutating func member(_ key: StaticString, _ value: Int) {
        open(key)
        text.append(String(value))
    }

    mutating func member(_ key: StaticString, _ value: Int?) {
        if let value { member(key, value) }
    }

    mutating func member(_ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        open(key)
        text.append(value ? "true" : "false")
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
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text.append("\\\"")
            case "\\": text.append("\\\\")
            case "\n": text.append("\\n")
            case "\r": text.append("\\r")
            case "\t": text.append("\\t")
            case "\u{08}": text.append("\\b")
            case "\u{0C}": text.append("\\f")
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text.append("\\u00" + (hex.count == 1 ? "0" : "") + hex)
            default: text.unicodeScalars.append(scalar)
            }
        }
        text.append("\"")
    }
}
