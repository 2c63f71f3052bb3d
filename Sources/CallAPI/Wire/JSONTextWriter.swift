/// Writes JSON text as UTF-8 bytes into a ``JSONTextOutput``: literals, integers, strings (quoted and escaped as
/// the client library always has: `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, other controls as `\u00xx`,
/// everything else as it is) and whole ``JSONValue``s.
struct JSONTextWriter<Output: JSONTextOutput> {
    private(set) var output: Output

    init(_ output: Output) {
        self.output = output
    }

    /// Text that needs no escaping: punctuation, keys, `true`.
    mutating func literal(_ text: StaticString) {
        output.append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `value` in decimal, as `String(value)` writes it.
    mutating func integer(_ value: Int) {
        // Digits from the last, into room for the longest (`Int.min`: a sign and 19 digits).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = digits.count
            repeat {
                start &-= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start &-= 1
                digits[start] = UInt8(ascii: "-")
            }
            output.append(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: digits[start...])))
        }
    }

    /// `string` as a JSON string: runs that need no escape are written whole.
    mutating func quoted(_ string: String) {
        literal("\"")
        var string = string
        string.withUTF8 { utf8 in
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[runStart..<index])))
                escape(byte)
                runStart = index &+ 1
            }
            output.append(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[runStart...])))
        }
        literal("\"")
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): literal("\\\"")
        case UInt8(ascii: "\\"): literal("\\\\")
        case UInt8(ascii: "\n"): literal("\\n")
        case UInt8(ascii: "\r"): literal("\\r")
        case UInt8(ascii: "\t"): literal("\\t")
        case 0x08: literal("\\b")
        case 0x0C: literal("\\f")
        default:
            let hex: StaticString = "0123456789abcdef"
            let sequence = (
                UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0x0F)]
            )
            withUnsafeBytes(of: sequence) { output.append($0) }
        }
    }

    /// `value` as compact JSON, object keys sorted (so equal values give equal text).
    mutating func value(_ value: JSONValue) {
        switch value {
        case .null: literal("null")
        case .bool(let flag): flag ? literal("true") : literal("false")
        case .int(let number): integer(number)
        case .double(let number):
            if number.isFinite {
                var text = number.description
                text.withUTF8 { output.append(UnsafeRawBufferPointer($0)) }
            } else {
                literal("null")
            }
        case .string(let text): quoted(text)
        case .array(let items):
            literal("[")
            for (index, item) in items.enumerated() {
                if index > 0 { literal(",") }
                self.value(item)
            }
            literal("]")
        case .object(let members):
            literal("{")
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { literal(",") }
                quoted(key)
                literal(":")
                self.value(members[key].unsafelyUnwrapped)
            }
            literal("}")
        }
    }
}
