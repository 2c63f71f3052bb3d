/// A small strict JSON parser (RFC 8259) producing ``JSONValue``. Call messages are parsed on every
/// receive; Foundation's decoders either cannot tell booleans from numbers on Linux (JSONSerialization)
/// or are slow for untyped trees (JSONDecoder), hence this one.
struct JSONParser {
    struct Failure: Error {}

    // The text's own UTF-8 storage, read in place (copying it into an array was an allocation per message).
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0
    private static let maxDepth = 64
    /// Call message keys too long for a small string: taking these instances allocates nothing for the key.
    private static let longKeys = [
        "message_timestamp", "fromUserExtension", "cancelCallByInternal", "answeredByDevice", "rejectedByDevice",
        "rejectByInternal",
    ]

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Parses one JSON value that makes up the whole of `text`.
    static func parse(_ text: String) throws(Failure) -> JSONValue {
        try whole(text) { parser throws(Failure) in try parser.value() }
    }

    /// Runs `read` over `text`'s bytes and requires that it used them all (but for trailing whitespace).
    private static func whole<Value>(
        _ text: String, _ read: (inout JSONParser) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        var text = text
        let result: Result<Value, Failure> = text.withUTF8 { bytes in
            var parser = JSONParser(bytes)
            do throws(Failure) {
                let value = try read(&parser)
                parser.skipWhitespace()
                guard parser.index == parser.bytes.count else { throw Failure() }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses `text`, which must be one JSON value, as ``parse(_:)`` does, but reads a top-level object's
    /// members into `object`'s slots instead of a dictionary; false when the text is JSON but not an object.
    /// It fails on the same texts as `parse`.
    static func parseCallObject(_ text: String, into object: inout CallMessageObject) throws(Failure) -> Bool {
        // Filled in place: the object is large, and returning it through a result copied it each time.
        try whole(text) { parser throws(Failure) in
            parser.skipWhitespace()
            guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "{") else {
                _ = try parser.value()
                return false
            }
            try parser.callObject(into: &object)
            return true
        }
    }

    /// The members of the object at `index`, as ``object()`` reads them, each under its slot.
    private mutating func callObject(into result: inout CallMessageObject) throws(Failure) {
        try enter()
        defer { depth -= 1 }
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Failure() }
            let key = try memberKey()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw Failure() }
            index += 1
            let member = try value()
            switch key {
            case .known(let known): result[known] = member
            case .other(let name): result.setOther(name, member)
            }
            skipWhitespace()
            guard index < bytes.count else { throw Failure() }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            } else {
                throw Failure()
            }
        }
    }

    private enum MemberKey {
        case known(CallMessageObject.Key)
        case other(String)
    }

    /// The key at `index` (its opening quote): a key the format knows is matched on its bytes in place, without
    /// making a `String`; one with escapes is read by ``string()`` and matched on its text.
    private mutating func memberKey() throws(Failure) -> MemberKey {
        if let key = CallMessageObject.Key(keyAt: index + 1, in: bytes) {
            index += 1 + key.spelling.utf8CodeUnitCount + 1
            return .known(key)
        }
        // Not a known key without escapes (or not a string at all: `string()` says so).
        let name = try string()
        return CallMessageObject.Key(name: name).map(MemberKey.known) ?? .other(name)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func value() throws(Failure) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw Failure() }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default: return try number()
        }
    }

    private mutating func literal(_ word: String, _ value: JSONValue) throws(Failure) -> JSONValue {
        let count = word.utf8.count
        guard index + count <= bytes.count, bytes[index..<index + count].elementsEqual(word.utf8)
        else { throw Failure() }
        index += count
        return value
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        guard depth <= Self.maxDepth else { throw Failure() }
        index += 1
    }

    private mutating func object() throws(Failure) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object([:])
        }
        // Room for a call message's fields up front: growing one key at a time reallocates the table
        // four times, which was the largest share of a call's allocations.
        var result = [String: JSONValue](minimumCapacity: 16)
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Failure() }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw Failure() }
            index += 1
            result[key] = try value()
            skipWhitespace()
            guard index < bytes.count else { throw Failure() }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(result)
            } else {
                throw Failure()
            }
        }
    }

    private mutating func array() throws(Failure) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var result: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(result)
        }
        while true {
            result.append(try value())
            skipWhitespace()
            guard index < bytes.count else { throw Failure() }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(result)
            } else {
                throw Failure()
            }
        }
    }

    private mutating func string() throws(Failure) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var start = index
        var plain = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text: String
                if plain {
                    let raw = bytes[start..<index]
                    if raw.count >= 16, let known = Self.longKeys.first(where: { $0.utf8.elementsEqual(raw) }) {
                        text = known
                    } else {
                        text = String(decoding: raw, as: UTF8.self)
                    }
                } else {
                    scalars.append(contentsOf: String(decoding: bytes[start..<index], as: UTF8.self).unicodeScalars)
                    text = String(scalars)
                }
                index += 1
                return text
            }
            if byte < 0x20 { throw Failure() }
            if byte == UInt8(ascii: "\\") {
                plain = false
                scalars.append(contentsOf: String(decoding: bytes[start..<index], as: UTF8.self).unicodeScalars)
                index += 1
                guard index < bytes.count else { throw Failure() }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"): scalars.append(try unicodeEscape())
                default: throw Failure()
                }
                start = index
            } else {
                index += 1
            }
        }
        throw Failure()
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw Failure() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Failure()
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func unicodeEscape() throws(Failure) -> Unicode.Scalar {
        let first = try hex4()
        if (0xD800...0xDBFF).contains(first) {
            guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw Failure() }
            index += 2
            let second = try hex4()
            guard (0xDC00...0xDFFF).contains(second) else { throw Failure() }
            let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            guard let scalar = Unicode.Scalar(combined) else { throw Failure() }
            return scalar
        }
        guard let scalar = Unicode.Scalar(first) else { throw Failure() }
        return scalar
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = index
        let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw Failure() }
        // The integer part's value, read as it is scanned; it wraps past 18 digits, where it is not used.
        var magnitude = 0
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) {
                magnitude = magnitude &* 10 &+ Int(bytes[index] &- UInt8(ascii: "0"))
                index += 1
            }
        }
        var integral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw Failure() }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw Failure() }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        // Up to 18 characters cannot overflow: the value read while scanning, rather than through a String.
        if integral, index - start <= 18 { return .int(negative ? -magnitude : magnitude) }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if integral, let int = Int(text) { return .int(int) }
        guard let double = Double(text) else { throw Failure() }
        return .double(double)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
